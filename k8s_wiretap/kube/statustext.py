"""Where the API server writes what it was sent into its own error messages, as data.

A refused request on a Secret is answered with a Status (meta/v1) whose texts quote what the
request held: the value of a `field.Invalid` (`%q` of the patched object, or of `%+v` of the
patch map), the first bytes of a body it could not read, a YAML or JSON parser's excerpt.
The recorder masks these renderings in the Status texts of every answer on a sensitive
resource (capture/statusmask.py); each rule names the code that writes what it masks.

- STATUS_TEXTS: the JSON paths of a Status's free texts ("*": each item of a list), and
  their protobuf field numbers (looked up in the generated schema, never typed in).
- WHOLE_TAILS: messages that end with a rendering of the body itself; the tail is masked
  from its start to the end of the message, whatever it holds.
- RENDERINGS: how a value is quoted inside any message, as regular expressions; a match is
  masked whole (the quotes of a quoted string are kept, so the sentence still reads).
- SAFE_QUOTED: a quoted string that is masked only when it is not one of these (the
  request's own name, namespace, resource and group are kept as well: `Secret "db" is
  invalid`, `cannot list resource "secrets" in API group ""`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from k8s_wiretap.kube.sensitive import proto_path

__all__ = [
    "PROTO_STATUS_TEXTS",
    "RENDERINGS",
    "SAFE_QUOTED",
    "STATUS_TEXTS",
    "WHOLE_TAILS",
    "Rendering",
]

# A Status's texts: `message`, and each cause's `message` (`field` is a path, `reason` and
# `details.name` say what, never a value). meta/v1 types.go: Status, StatusDetails, StatusCause.
STATUS_TEXTS: tuple[tuple[str, ...], ...] = (("message",), ("details", "causes", "*", "message"))
PROTO_STATUS_TEXTS: tuple[tuple[int, ...], ...] = (
    proto_path("v1", "Status", "message"),
    proto_path("v1", "Status", "details", "causes", "message"),
)


@dataclass(frozen=True)
class Rendering:
    """One way a value appears in a message: `pattern` matches it; `quote` is kept around
    the placeholder (the quote characters of a quoted string; for a tail, the character
    that closes it at the message's end); `source` says who writes it."""

    name: str
    pattern: str
    source: str
    quote: str = ""
    kept: bool = False  # what it matches is no value: kept as it is


# A message's tail that renders the request body itself: masked from the match's end to
# the end of the message (a body may hold any character, its own quotes included).
WHOLE_TAILS: tuple[Rendering, ...] = (
    Rendering(
        "first bytes of an unreadable body",
        # "... (must be of type Secret): <error> (<summary>)": summarizeData(body, 30) gives
        # `{` and 29 more bytes (" ..." when cut), or their hex, or "<empty>"; the window is
        # the longest summary, so whatever the error says before it is masked at worst.
        r" \((?=[^\n]{0,40}\)\Z)",
        "k8s.io/apiserver/pkg/endpoints/handlers/rest.go: transformDecodeError, summarizeData",
        quote=")",
    ),
    Rendering(
        "a body without a kind",
        r"Object 'Kind' is missing in '",
        "k8s.io/apimachinery/pkg/runtime/error.go: missingKindErr",
        quote="'",
    ),
)

RENDERINGS: tuple[Rendering, ...] = (
    Rendering(
        "RBAC's refusal",
        r'User "(?:[^"\\\n]|\\.)*" cannot [\w-]+ resource ',
        'plugin/pkg/auth/authorizer/rbac/rbac.go: "User %q cannot %s resource %q in API group '
        '%q in the namespace %q" (the user who asked, not a value)',
        kept=True,
    ),
    Rendering(
        "Go quoted string (%q)",
        r'"(?:[^"\\]|\\.)*"',
        "k8s.io/apimachinery/pkg/util/validation/field/errors.go: Error.ErrorBody (%q of a "
        "string value: the patched object, `%+v` of the patch map)",
        quote='"',
    ),
    Rendering(
        "YAML excerpt",
        r"`.*`",
        "gopkg.in/yaml (sigs.k8s.io/yaml): cannot unmarshal !!str `...` into ...; masked "
        "to the message's last backquote (a value may hold one)",
        quote="`",
    ),
    Rendering(
        "single-quoted excerpt",
        r"(?<!\w)'(?:[^'\\\n]|\\.)*'",
        "encoding/json SyntaxError: invalid character 'x' (quoteChar); an apostrophe inside "
        "a word (couldn't) opens none",
        quote="'",
    ),
    Rendering(
        "json-iterator context",
        r"\.\.\.\|.*\|\.\.\.",
        'github.com/json-iterator/go iter.go ReportError: "error found in #N byte of '
        "...|<excerpt>|..., bigger context ...|<excerpt>|...\" (1.20's decoder); masked from "
        "the first excerpt to the end of the last",
    ),
    Rendering(
        "Go map (%v, %+v)",
        r"map\[.*\]",
        'k8s.io/apiserver/pkg/endpoints/handlers/patch.go: fmt.Sprintf("%+v", patchMap); '
        "masked to the message's last `]` (a value may hold brackets)",
    ),
    Rendering(
        "Go struct (%#v)",
        r"\{Value:.*\}",
        "sigs.k8s.io/structured-merge-diff value: &value.valueUnstructured{Value:...}",
    ),
    Rendering(
        "hex bytes",
        r"\b[0-9a-fA-F]{16,}\b",
        "summarizeData's hex preview; any long run of hex digits",
    ),
    Rendering(
        "base64 run",
        r"(?<![\w+/=])[A-Za-z0-9+/]{24,}={0,2}(?![\w+/=])",
        "a Secret `data` value as the request sent it",
    ),
)

# Versions named in decode errors ("Secret in version \"v1\" cannot be handled as a Secret"),
# the word of missingKindErr ("Object 'Kind' is missing in ...").
SAFE_QUOTED = re.compile(r"v\d+(?:(?:alpha|beta)\d+)?|Kind")
