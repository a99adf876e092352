"""No output of any command holds a secret value that a request carried, whatever the API
server's answer quoted of it (the property of docs/proxy.md's redaction).

For random values placed in every secret field of every sensitive request (secret_traffic.py:
valid Secrets, patches of each type, stringData, the last-applied annotation, tokens,
malformed JSON, YAML, protobuf and CBOR) and the API server's answers (a Status quoting the
value as the server renders it: clear, a Go map, %q, base64, hex, a body's first bytes; as
JSON, CBOR or protobuf), the exchange is recorded through the proxy's recorder, or imported
from an audit log at level Metadata or RequestResponse, or both joined (`import audit
--join`), and every output is made in this process: the recording, `explain` in each
format (commands/formats.py), `history`, `export --har`, `--markdown` and `--otlp` (files),
the TUI list's rows. None
holds the value, its JSON escape, its base64 or its hex.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.cli import main
from k8s_wiretap.commands import formats
from k8s_wiretap.views.tui.listing.explaining import explain_rows
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from tests.capture.proxied import record_exchange
from tests.fuzz.secret_traffic import (
    NAME,
    NAMESPACE,
    PROTOBUF,
    TEMPLATES,
    UNQUOTED,
    Request,
    encoded,
    forms,
    requests,
    status,
)
from tests.fuzz.seeds import FUZZ

# Distinct from anything an output says of itself; the rest is anything text can hold.
VALUES = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    min_size=6,
    max_size=40,
).map(lambda text: "Zq8" + text)
ANSWERS = st.sampled_from(("application/json", "application/cbor", PROTOBUF))
SOURCES = st.sampled_from(
    ("proxy", "audit RequestResponse", "audit Metadata", "proxy joined with audit RequestResponse")
)
USER_AGENT = b"kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef0"


def _record(path: Path, request: Request, answer: bytes, content_type: str, code: int) -> None:
    """The exchange as the proxy records it."""
    headers = [(b"User-Agent", USER_AGENT), (b"Content-Type", request.content_type.encode())]
    sent = (request.method, request.path, headers, request.body)
    record_exchange(path, Redactor(), sent, code, content_type, answer)


def _audit_log(path: Path, request: Request, answer: dict[str, object], level: str) -> None:
    """The exchange as the API server's audit log has it at `level`."""
    event: dict[str, object] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": level,
        "auditID": "a1",
        "stage": "ResponseComplete",
        "requestURI": request.path,
        "verb": "create" if request.method == "POST" else "patch",
        "user": {"username": "kubernetes-admin"},
        "sourceIPs": ["127.0.0.1"],
        "userAgent": USER_AGENT.decode(),
        "objectRef": {"resource": "secrets", "namespace": NAMESPACE, "name": NAME},
        "responseStatus": {k: v for k, v in answer.items() if k not in ("kind", "apiVersion")},
        "requestReceivedTimestamp": "2026-01-01T00:00:00.000000Z",
        "stageTimestamp": "2026-01-01T00:00:00.010000Z",
    }
    if level == "RequestResponse":
        event["responseObject"] = answer
        if request.readable and request.content_type.endswith("json"):
            event["requestObject"] = json.loads(request.body)
    path.write_text(json.dumps(event) + "\n")


def _request_known(request: Request, source: str) -> bool:
    """Whether the recorder reads the request's values: a readable body that the proxy saw,
    or that the audit log holds (a JSON one, at RequestResponse)."""
    if not request.readable or source == "audit Metadata":
        return False
    return source == "proxy" or request.content_type.endswith("json")


def _run(*argv: str) -> str:
    """What the command prints (stdout, with a byte buffer as a terminal's has, and stderr)."""
    raw = io.BytesIO()
    out, err = io.TextIOWrapper(raw, encoding="utf-8", errors="replace"), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(list(argv))
    out.flush()
    return raw.getvalue().decode("utf-8", "replace") + err.getvalue()


def _tui_rows(recording: Path) -> str:
    """The TUI list's rows, every field, once the explanation has filled their summaries."""
    index = RecordingIndex(recording)
    try:
        index.scan()
        explain_rows(index, lambda _count: None)
        return "\n".join(repr(row) for row in index.rows)
    finally:
        index.close()


def outputs(recording: Path) -> dict[str, str]:
    """Every output of the recording, by command."""
    made = {"recording": recording.read_bytes().decode("utf-8", "replace")}
    for fmt in formats.to_stdout():  # every format of the registry that has words
        made[f"explain --format {fmt.name}"] = _run(
            "explain", str(recording), "--all", "--format", fmt.name
        )
    made["history"] = _run("history", str(recording), f"secret/{NAMESPACE}/{NAME}")
    made["history --field"] = _run(
        "history", str(recording), f"secret/{NAMESPACE}/{NAME}", "--field", "data.password"
    )
    made["TUI rows"] = _tui_rows(recording)
    for flag in ("--har", "--markdown", "--otlp"):
        out = recording.with_suffix("." + flag.strip("-"))
        made[f"export {flag}"] = _run("export", str(recording), flag, str(out), "--overwrite")
        made[f"export {flag}"] += out.read_text(errors="replace") if out.exists() else ""
    return made


@FUZZ
@given(
    value=VALUES,
    index=st.integers(min_value=0, max_value=len(requests("x")) - 1),
    template=st.sampled_from(sorted(TEMPLATES)),
    answer_type=ANSWERS,
    source=SOURCES,
)
def test_no_output_holds_a_secret_value(
    value: str, index: int, template: str, answer_type: str, source: str
) -> None:
    request = requests(value)[index]
    if template in UNQUOTED and not _request_known(request, source):
        template = "Go map, quoted"  # no value to look for: the recorder never read one
    message, causes = TEMPLATES[template](value, request)
    code = 422 if causes else 400
    answer = status(message, causes, code)
    with tempfile.TemporaryDirectory() as directory:
        recording = Path(directory) / "r.jsonl"
        log = Path(directory) / "audit.log"
        if source.startswith("proxy"):
            _record(recording, request, encoded(answer, answer_type), answer_type, code)
        if source.startswith("audit"):
            _audit_log(log, request, answer, source.split()[1])
            _run("import", "audit", str(log), "-o", str(recording))
        if source.endswith("joined with audit RequestResponse"):
            _audit_log(log, request, answer, "RequestResponse")
            joined = recording.with_name("joined.jsonl")
            _run("import", "audit", str(log), "--join", str(recording), "-o", str(joined))
            recording = joined
        made = outputs(recording)
    for output, text in made.items():
        for form, written in forms(value).items():
            assert written not in text, f"{output} holds the value ({form}): {written!r}"
