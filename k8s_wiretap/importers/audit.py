"""The API server's audit log (audit.k8s.io/v1 `Event`s) as a recording (docs/importing.md).

Read in every shape a log is kept in, told by content, never a file's name: how its values
are laid out (`framing`: JSON lines, timestamp-prefixed lines, base64 gzip lines, JSON
documents of any layout; gzip) and what they are (`shapes`: the API server's Events and
EventLists of every audit.k8s.io version, EKS's CloudWatch exports, AKS's records and rows,
GKE's Cloud Logging entries and BigQuery rows, OpenShift Logging's ViaQ and OTLP records,
shippers' and stores' wrappers). A file's shape is told once, by its first value; what an
event lacks of a v1 Event is taken from where it has it (`normalised`), said in `audit.taken`.
What each file held is its `FileReport`: its framing and shape, its events, a count per
skip reason with the first place of each, and, when nothing fit, the closest shape and why.

The stages of one `auditID` (RequestReceived, ResponseStarted, ResponseComplete, Panic) make
one exchange: its request record is written at the first ResponseStarted, ResponseComplete
or Panic (a RequestReceived event is held until then: the request object comes later), its
response record at the first of those that has a `responseStatus`, its end at
ResponseComplete or Panic. A watch is one exchange whose response started at its
ResponseStarted and ended at its ResponseComplete. An exchange the log does not finish is
written as far as it goes, and a note with its id says what the log lacks.

What a record takes from the event: the request's time (`requestReceivedTimestamp`), method
(from the verb: `METHODS`), path (`requestURI`), User-Agent, the status
(`responseStatus.code`), and, when the level logs them, the bodies (`requestObject`,
`responseObject`, as JSON, with a Content-Type of `application/json` that names the
encoding the log holds, not the one on the wire). The user becomes the request's identity
(`{"credential": "audit log", "user": USERNAME}`: `explain` attributes by it as it does a
proxied request's credential) and the first source IP its client address. Everything else
the event says is kept in an `audit` field (`capture/format.py`), with `absent`: what the
record lacks because the log does not hold it. Nothing absent is made up.

A line that cannot be read (not JSON, not an Event, an Event without what an exchange needs)
is skipped and told to the sink with its file and line number; reading goes on.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import os
import re
import stat
import sys
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, cast

from k8s_wiretap.capture import jsonfast
from k8s_wiretap.capture.format import QUERY_ABSENT
from k8s_wiretap.importers import framing, gke, limits, shapes
from k8s_wiretap.importers.limits import Limits
from k8s_wiretap.importers.seen import Bloom
from k8s_wiretap.importers.sink import EARLIEST, LATEST, SKIP_NOTES, Sink, time_error
from k8s_wiretap.importers.timerange import TimeRange
from k8s_wiretap.kube.requestinfo import RequestInfo, parse_request
from k8s_wiretap.kube.sensitive import OAUTH_GROUP, SENSITIVE_RESOURCES
from k8s_wiretap.wire.words import counted

__all__ = [
    "LEVELS",
    "METHODS",
    "STAGES",
    "STDIN",
    "AuditImport",
    "BadEvent",
    "checked_value",
    "import_audit",
    "request",
]

STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
ENDS = ("ResponseComplete", "Panic")
LEVELS = ("Metadata", "Request", "RequestResponse")
CREDENTIAL = "audit log"  # the identity's credential: the API server's authentication
JSON = "application/json"
JSON_PATCH = "application/json-patch+json"

# The HTTP method of each RequestInfo verb (apiserver pkg/endpoints/request/requestinfo.go
# derives the verb from the method: GET is get, list or watch, POST create, PUT update,
# PATCH patch, DELETE delete or deletecollection). A non-resource request's verb is its
# method in lower case; `proxy` (the /api/v1/proxy paths) may be any method: unknown.
METHODS = {
    "get": "GET",
    "list": "GET",
    "watch": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
    "post": "POST",
    "put": "PUT",
    "head": "HEAD",
    "options": "OPTIONS",
}
# A mutating webhook's JSON patch, as the API server records it at level Request and above
# (apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go, PatchAuditAnnotationPrefix):
# a webhook changing a Secret puts the Secret's values there.
PATCH_ANNOTATION = "patch.webhook.admission.k8s.io/"
DONE_LIMIT = 100_000  # finished auditIDs remembered (to tell a repeated one), at most
COMPACT = 10_000  # exchanges open past which a RequestReceived event is held as its JSON
GZIP_MAGIC = b"\x1f\x8b"
STDIN = Path("-")  # the LOG that is standard input, read as a stream (`_stdin`)
# JSON's escape of a surrogate, or one encoded as UTF-8 bytes (json.loads decodes those too)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
# Nesting a line may have: deeper than any Kubernetes object, and well inside what the
# redactor, which walks a body recursively, can walk (Python's recursion limit is 1,000).
MAX_DEPTH = 200
TOO_DEEP = "the line is nested too deep to read"
STATUS_CODES = range(100, 1000)
TAKEN = shapes.TAKEN  # an HTTP status has three digits (RFC 9110 15)


Key = int  # a request's: the hash of its auditID, verb, URI, time, user and IP (`Event.key`)


class BadEvent(ValueError):
    """A line, or an item of it, that is no usable audit Event; the message says why."""


# -- reading ----------------------------------------------------------------------------------
def _open(path: Path) -> BinaryIO:
    """The file's bytes, through gzip when it starts with gzip's magic bytes; buffered
    so that the framing can be told from its first bytes (`framing.framed`)."""
    if path == STDIN:
        return _stdin()
    stream = cast(io.BufferedReader, path.open("rb", buffering=framing.HEAD))
    if stream.peek(2)[:2] != GZIP_MAGIC:
        return cast(BinaryIO, stream)
    stream.close()
    return cast(BinaryIO, io.BufferedReader(_Inflating(gzip.open(path, "rb")), framing.HEAD))


def _stdin() -> BinaryIO:
    """Standard input as `_open` gives a file: buffered (its first `framing.HEAD` bytes
    read whole before anything is told from them: a pipe gives what it has), through gzip
    when it starts with gzip's magic bytes. Read as a stream, never seeked."""
    raw = _Heading(io.FileIO(sys.stdin.fileno(), "rb", closefd=False), framing.HEAD)
    stream = io.BufferedReader(raw, framing.HEAD)
    if stream.peek(2)[:2] != GZIP_MAGIC:
        return cast(BinaryIO, stream)
    inflating = _Inflating(gzip.GzipFile(fileobj=stream, mode="rb"))
    return cast(BinaryIO, io.BufferedReader(inflating, framing.HEAD))


class _Heading(io.RawIOBase):
    """A stream whose first `head` bytes are read whole (a read of them waits until it is
    filled or the stream ends), then as they come: the framing and the gzip magic are told
    from a whole head, and what follows is imported as it arrives."""

    def __init__(self, stream: io.FileIO, head: int) -> None:
        self._stream, self._left = stream, head

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view, got = memoryview(buffer), 0
        while True:
            n = self._stream.readinto(view[got:])
            got += n or 0
            if not n or got >= len(view) or self._left - got <= 0:
                break
        self._left -= got
        return got


class _Inflating(io.RawIOBase):
    """A gzip stream read as far as it inflates: a read fills what it is asked for (so
    that the framing is told from a whole head), and a stream cut short gives what came
    before the cut, then raises the error at the next read."""

    def __init__(self, stream: gzip.GzipFile) -> None:
        self._stream, self._error = stream, cast(BaseException | None, None)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._stream.close()
        super().close()

    def readinto(self, buffer: Any) -> int:
        if self._error is not None:
            raise self._error
        view, got = memoryview(buffer), 0
        while got < len(view):
            try:
                data = self._stream.read1(len(view) - got)
            except (OSError, EOFError, zlib.error) as error:
                if not got:
                    raise
                self._error = error
                break
            if not data:
                break
            view[got : got + len(data)] = data
            got += len(data)
        return got


def _shallow(line: bytes, value: Any, whole: Any = None, opening: int | None = None) -> None:
    """Refuse a value nested deeper than MAX_DEPTH (JSON that parses, but that redacting
    would recurse through too deep). Only a line with that many brackets (`opening`, when
    counted already: `jsonfast.read`) is looked at: by its text when `value` is `[whole]`,
    `whole` the line's value (`_nesting`), else walked a level at a time (the containers
    of each level, then of the next)."""
    if opening is None:
        opening = line.count(b"[") + line.count(b"{")
    if opening <= MAX_DEPTH:
        return
    if whole is not None and type(value) is list and len(value) == 1 and value[0] is whole:
        if _nesting(line) + 1 > MAX_DEPTH:  # `value`, a list, is one more level
            raise BadEvent(TOO_DEEP)
        return
    level = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > MAX_DEPTH:
            raise BadEvent(TOO_DEEP)
        below = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, dict | list):
                    below.append(child)
        level, depth = below, depth + 1


_OPENING_CLOSING = bytes.maketrans(b"[]{}", b"()()")
_NOT_MARKS = bytes(sorted(set(range(256)) - set(b'[]{}"')))  # all but brackets and quotes
ESCAPES_APART = 128  # bytes of a line per escape that `_unescaped` takes one at a time


def _nesting(line: bytes) -> int:
    """How deep the JSON text `line` (valid) nests, up to MAX_DEPTH + 1: its escaped
    backslashes and quotes dropped (`_unescaped`), its brackets and quotes alone, the
    strings dropped (every pair of quotes with nothing between them, the common case: no
    bracket inside a string; else what is between every other quote), its brackets, as
    `(` and `)`, lose their innermost pairs a level at a time."""
    marks = _unescaped(line).translate(None, _NOT_MARKS)
    bare = marks.replace(b'""', b"")  # every quote gone: each string held no bracket
    if b'"' in bare:
        bare = b"".join(marks.split(b'"')[::2])
    brackets = bare.translate(_OPENING_CLOSING)
    depth = 0
    while brackets and depth <= MAX_DEPTH:
        brackets = brackets.replace(b"()", b"")
        depth += 1
    return depth


def _unescaped(line: bytes) -> bytes:
    """`line` without its escaped backslashes and quotes, as JSON reads them (a backslash
    escapes the byte after it): found one at a time, while they are few (a line's
    `replace` costs about a byte's time per byte, a found escape as much as some hundred
    bytes), the rest by replacing every escaped backslash, then every escaped quote."""
    at = line.find(b"\\")
    if at < 0:
        return line
    kept, start, left = [], 0, len(line) // ESCAPES_APART
    while at >= 0:
        if not left:  # `at` starts an escape: what follows it is read alone
            kept.append(line[start:at])
            start = len(line)
            kept.append(line[at:].replace(b"\\\\", b"").replace(b'\\"', b""))
            break
        left -= 1
        if line[at + 1 : at + 2] in (b"\\", b'"'):
            kept.append(line[start:at])
            start = at + 2
        at = line.find(b"\\", at + 2)
    kept.append(line[start:])
    return b"".join(kept)


def _text(line: bytes, value: Any) -> None:
    """Refuse a value holding a lone surrogate (JSON's `"\\ud800"`, or its bytes as UTF-8
    would give them): valid JSON, but no Unicode text, which a recording is. The line is
    skipped rather than its text changed: nothing is made up. Only a line that may hold
    one (an escape or bytes in the surrogates' range) is checked."""
    if b"\\ud" not in line and b"\\uD" not in line and b"\xed" not in line:
        return  # a substring search is many times a regular expression's speed
    if _SURROGATE.search(line) is None:
        return
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise BadEvent("a lone surrogate in a string (no Unicode text)") from None


def checked_value(text: bytes, value: Any) -> Any:
    """`value`, parsed from `text`, refused (`BadEvent`) when nested too deep or holding a
    lone surrogate (what the import checks of a line)."""
    _shallow(text, value)
    _text(text, value)
    return value


def _time(event: dict[str, Any], key: str) -> float:
    """The time at `key`, checked as every record's time is (`sink.time_error`)."""
    value = event.get(key)
    if not isinstance(value, str):
        raise BadEvent(f"no {key}")
    try:
        parsed = dt.datetime.fromisoformat(value)
        if parsed.tzinfo is None:  # no offset (a SIEM's `2022-11-29 22:34:06.892`): UTC
            parsed = parsed.replace(tzinfo=dt.UTC)
        when = parsed.timestamp()
    except (ValueError, OverflowError):
        raise BadEvent(f"{key} {value!r} is not an RFC 3339 time") from None
    error = time_error(when)
    if error is not None:
        raise BadEvent(f"{key} {value!r} is {error}")
    return when


def _times(event: dict[str, Any]) -> tuple[float, float]:
    """The request's time and the stage's (`_time` of each), told at once for the common
    case: both in RFC 3339 with an offset, inside the times a record may hold."""
    received, at = event.get("requestReceivedTimestamp"), event.get("stageTimestamp")
    if type(received) is str and type(at) is str:
        try:
            first, second = _fromisoformat(received), _fromisoformat(at)
        except ValueError:
            pass
        else:
            if first.tzinfo is not None and second.tzinfo is not None:
                one, other = first.timestamp(), second.timestamp()
                if EARLIEST < one < LATEST and EARLIEST < other < LATEST:
                    return one, other
    return _time(event, "requestReceivedTimestamp"), _time(event, "stageTimestamp")


_fromisoformat = dt.datetime.fromisoformat


# What an Event of audit.k8s.io/v1 has that older ones and exports may lack
_WHOLE = frozenset(
    ("auditID", "stage", "level", "requestURI", "requestReceivedTimestamp", "stageTimestamp")
)


def normalised(raw: dict[str, Any], when: str | None = None) -> dict[str, Any]:
    """`raw` with what it lacks of a v1 Event taken from where it has it, each said under
    `shapes.TAKEN` (the record's `audit.taken`):

    - audit.k8s.io v1beta1 and v1alpha1 (k8s.io/apiserver pkg/apis/audit/v1beta1/types.go:
      `Timestamp`, "time the request reached the apiserver", and `metadata`, ObjectMeta,
      whose `creationTimestamp` is when the event was made): `requestReceivedTimestamp`
      from `timestamp` (else `metadata.creationTimestamp`), `stageTimestamp` from
      `metadata.creationTimestamp` (else `timestamp`, else the request's time);
    - no `stage` (SIEM exports drop it): ResponseComplete, the event taken as the whole
      request;
    - no `auditID`: one made of the event's content (`sha256:` and 32 hex digits of the
      SHA-256 of its JSON, keys sorted), the same for the same event (a copy of it is then
      a repeat, as a stage seen twice is);
    - no `level`: RequestResponse with a `responseObject`, Request with a `requestObject`,
      else Metadata (as GKE's entries are read);
    - no `requestURI` (SIEM rows keep the `objectRef` only): the path the objectRef names
      (`_path_of`), without the query string the request had;
    - no time at all: `when` (the file's modification time, by which the event was
      written), so that the request is imported at all, said."""
    raw = dict(raw)
    metadata = raw.get("metadata")
    created = metadata.get("creationTimestamp") if isinstance(metadata, dict) else None
    sources = {
        "requestReceivedTimestamp": (
            ("timestamp", raw.get("timestamp")),
            ("metadata.creationTimestamp", created),
        ),
        "stageTimestamp": (
            ("metadata.creationTimestamp", created),
            ("timestamp", raw.get("timestamp")),
            ("requestReceivedTimestamp", raw.get("requestReceivedTimestamp")),
        ),
    }
    for key, choices in sources.items():
        if key in raw:
            continue
        for name, value in choices:
            if isinstance(value, str):
                raw[key] = value
                shapes.base.took(raw, key, f"{name} ({raw.get('apiVersion') or 'no apiVersion'})")
                break
    if when is not None and not any(
        k in raw for k in ("requestReceivedTimestamp", "stageTimestamp")
    ):
        for key in ("requestReceivedTimestamp", "stageTimestamp"):
            raw[key] = when
            shapes.base.took(raw, key, "none in the event: the file's modification time")
        shapes.base.lacks(raw, "the request's time (the file's modification time instead)")
    if "requestURI" not in raw and (path := _path_of(raw)):
        raw["requestURI"] = path
        shapes.base.took(raw, "requestURI", "objectRef (the event has no requestURI)")
        shapes.base.lacks(raw, QUERY_ABSENT)
    if "stage" not in raw:
        raw["stage"] = "ResponseComplete"
        shapes.base.took(raw, "stage", "none in the event: taken as the whole request")
    if "level" not in raw:
        objects = ("responseObject", "requestObject")
        raw["level"] = next(
            (
                lvl
                for key, lvl in zip(objects, ("RequestResponse", "Request"), strict=True)
                if key in raw
            ),
            "Metadata",
        )
        shapes.base.took(raw, "level", "none in the event: from the objects it holds")
    if not raw.get("auditID"):
        content = {k: v for k, v in raw.items() if k != shapes.TAKEN}
        digest = hashlib.sha256(_dumped_sorted(content)).hexdigest()[:32]
        raw["auditID"] = f"sha256:{digest}"
        shapes.base.took(raw, "auditID", "none in the event: the SHA-256 of its content")
    return raw


def _path_of(raw: dict[str, Any]) -> str:
    """The path an Event's objectRef names (apiserver's RequestInfo, read backwards): ""
    when it names none (no resource, or a group without its version)."""
    ref = raw.get("objectRef")
    if not isinstance(ref, dict) or not isinstance(ref.get("resource"), str):
        return ""
    group, version = ref.get("apiGroup") or "", ref.get("apiVersion") or ""
    if group and not version:
        return ""
    parts = [f"/apis/{group}/{version}" if group else f"/api/{version or 'v1'}"]
    if ref.get("namespace"):
        parts.append(f"namespaces/{ref['namespace']}")
    parts.append(str(ref["resource"]))
    verb = raw.get("verb")
    if ref.get("name") and verb not in ("list", "watch", "create", "deletecollection"):
        parts.append(str(ref["name"]))
        if ref.get("subresource"):
            parts.append(str(ref["subresource"]))
    return "/".join(parts) + ("?watch=true" if verb == "watch" else "")


def _dumped_sorted(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


@dataclass(slots=True)
class Event:
    """One audit Event, checked: what an exchange needs is there and of its type."""

    raw: dict[str, Any]
    audit_id: str
    stage: str
    level: str
    verb: str
    uri: str
    received: float
    at: float  # stageTimestamp
    code: int | None
    bad_code: str = ""  # why responseStatus.code is not taken as the status
    key: int = 0  # the request's (`of`)

    @classmethod
    def of(cls, raw: Any, when: str | None = None) -> Event:
        """The Event `raw` is, checked; what it lacks taken where it can be
        (`normalised`: `when` is the time of an event that has none)."""
        if not isinstance(raw, dict):
            raise BadEvent(f"an item that is a JSON {type(raw).__name__}, not an Event")
        if raw.keys() >= _WHOLE:  # (issubset would make a set of the keys)
            audit_id, stage, level, uri = (
                raw["auditID"],
                raw["stage"],
                raw["level"],
                raw["requestURI"],
            )
        else:
            raw = normalised(raw, when)
            audit_id, stage, level = raw.get("auditID"), raw.get("stage"), raw.get("level")
            uri = raw.get("requestURI")
        if not isinstance(audit_id, str) or not audit_id:
            raise BadEvent("an Event without an auditID")
        if stage not in STAGES:
            raise BadEvent(f"stage {stage!r} is none of {', '.join(STAGES)}")
        if level not in LEVELS:
            raise BadEvent(f"level {level!r} is none of {', '.join(LEVELS)}")
        verb = raw.get("verb")
        if not isinstance(verb, str) or not isinstance(uri, str) or not uri.startswith("/"):
            raise BadEvent("an Event without a verb and a requestURI")
        status = raw.get("responseStatus")
        code = status.get("code") if isinstance(status, dict) else None
        bad_code = ""
        if code is not None:
            if type(code) is not int and (not isinstance(code, int) or isinstance(code, bool)):
                raise BadEvent(f"responseStatus.code {code!r} is not a number")
            if code not in STATUS_CODES:
                bad_code = (
                    f"responseStatus.code {code} is no HTTP status (100 to 999): status absent"
                )
                code = None
        received, at = _times(raw)
        # its request's hash: held for the last DONE_LIMIT requests, a number is the least
        # memory; two requests whose hashes meet, one in 2**64, would be taken for one
        key = hash(request(raw, audit_id, verb, uri))
        return cls(
            raw, audit_id, str(stage), str(level), verb, uri, received, at, code, bad_code, key
        )

    @property
    def watch(self) -> bool:
        return self.verb == "watch"


def request(raw: Any, audit_id: str, verb: str, uri: str) -> tuple[str, str, str, str, str, str]:
    """What tells one request from another of the same auditID (sanitised samples share
    one): its verb, URI, time, user and first source IP; a GKE entry's time is its own, not
    the request's. `Event.key` is its hash, which is this process's own (str hashes are
    salted per process): a partition run elsewhere sends the tuple."""
    user, ips = raw.get("user"), raw.get("sourceIPs")
    name = user.get("username") if type(user) is dict else ""
    ip = ips[0] if type(ips) is list and ips else ""
    if type(name) is not str or type(ip) is not str:  # hashable, whatever the input
        name, ip = str(name), str(ip)
    stamp = "" if gke.CLOUD in raw else raw["requestReceivedTimestamp"]
    return (audit_id, verb, uri, stamp, name, ip)


@dataclass
class FileReport:
    """What an import read of one file: its framing and shape, its events, and what it
    skipped, a count per reason with the first place of each (said by `import audit`)."""

    path: Path
    framing: str = ""
    shapes: Counter[str] = field(default_factory=Counter)
    events: int = 0
    values: int = 0
    skips: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # reason: n, where, said
    closest: tuple[int, str, str] = (0, "", "")  # a shape's score, name, why nothing fit
    outside: int = 0  # events outside the time range (`timerange`), skipped
    unparsed: int = 0  # of them, told by a value's time alone, never parsed

    @property
    def shape(self) -> str:
        """The shape of most of the file's values ("a and b" when mixed)."""
        names = [name for name, _ in self.shapes.most_common()]
        return " and ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")

    def skip(self, where: str, reason: str) -> None:
        """Count a skipped part by its reason: reasons that differ only in numbers, quoted
        values or what they say in parentheses are one; past MAX_REASONS of them, the rest
        are counted as one (a log may hold any number of different bad values)."""
        key = _REASON_DETAIL.sub("", reason)
        key = _REASON_NUMBERS.sub("N", _REASON_QUOTED.sub("'…'", key))
        if key not in self.skips and len(self.skips) >= MAX_REASONS:
            key, reason = OTHER_REASONS, f"{reason} (and other reasons: the recording notes them)"
        n, first, said = self.skips.get(key, (0, where, reason))
        self.skips[key] = (n + 1, first, said)

    def unfit(self, score: int, name: str, why: str) -> None:
        if score > self.closest[0]:
            self.closest = (score, name, why)

    def nothing(self) -> str:
        """Why the file gave no event, in one line."""
        if not self.values and not self.skips:
            return "the file holds no JSON value (empty, or blank lines only)"
        _, name, why = self.closest
        if name:
            return f"the closest shape is {name} ({self.framing}), but {why}"
        if self.skips:
            _, where, said = next(iter(self.skips.values()))
            return f"no value is in a shape of an audit log ({self.framing}; {where}: {said})"
        if self.shapes:
            return f"its values are {self.shape} ({self.framing}), holding no audit Event"
        return f"its values ({self.framing}) hold no audit Event"


MAX_REASONS = 100  # skip reasons counted apart in a file's report, at most
OTHER_REASONS = "other reasons"
_REASON_DETAIL = re.compile(r" \(.*\)")
_REASON_QUOTED = re.compile(r"'[^']*'")
_REASON_NUMBERS = re.compile(r"[0-9][0-9,]*")


def read_events(
    paths: Iterable[Path],
    sink: Sink,
    bounds: Limits = limits.DEFAULT,
    reports: list[FileReport] | None = None,
    span: TimeRange | None = None,
) -> Iterator[Event]:
    """The Events of the files, in order; what cannot be read is skipped (told to `sink`
    with FILE:LINE, and FILE:LINE item K for an EventList's); a line past `bounds` too.
    Each file's `FileReport` is added to `reports`. With `span`, only the events received
    inside it (`timerange`); the others are counted in the report. `STDIN` is read as a
    stream."""
    for path in paths:
        report = FileReport(path)
        if reports is not None:
            reports.append(report)
        with _open(path) as stream:
            yield from _file_events(path, stream, sink, bounds, report, span)


def _file_events(
    path: Path,
    stream: BinaryIO,
    sink: Sink,
    bounds: Limits,
    report: FileReport,
    span: TimeRange | None = None,
) -> Iterator[Event]:
    reader = ValueReader(report, span, _modified(path), lambda n: f"{path}:{n}", sink.skip)
    try:
        report.framing, values = framing.framed(stream, bounds)
        for _, event in reader.events(values):
            yield event
    except (OSError, EOFError, zlib.error) as error:  # a gzip cut short or corrupt
        reader.skip(f"{path}", f"the file could not be read on: {error}")


class ValueReader:
    """A file's values as Events: the one loop of the import and of its partitions
    (`partition._Reader`). Each value is unwrapped by the shape it is read by (the last
    one told, kept from value to value: `shape`), each of its items made an Event; what is
    none is skipped, told to the report and to `told_skip(where, reason)`, each place said
    by `where(number)`; with `span`, what is outside it is counted, a line told by its
    time never parsed. `unshaped(line)`, when given, hears each value read while no shape
    is told yet."""

    def __init__(
        self,
        report: FileReport,
        span: TimeRange | None,
        modified: str | None,
        where: Callable[[int], str],
        told_skip: Callable[[str, str], None],
        shape: shapes.Shape | None = None,
        unshaped: Callable[[bytes], None] | None = None,
    ) -> None:
        self.report, self.span, self.modified = report, span, modified
        self.where, self.told_skip = where, told_skip
        self.shape, self.unshaped = shape, unshaped

    def skip(self, where: str, reason: str) -> None:
        self.report.skip(where, reason)
        self.told_skip(where, reason)

    def events(self, values: framing.Numbered) -> Iterator[tuple[int, Event]]:
        """(the item of its value, the Event) of each event of `values`, in order."""
        report, span, modified, unshaped = self.report, self.span, self.modified, self.unshaped
        for number, line in values:
            if isinstance(line, framing.BadEntry):
                self.skip(self.where(number), str(line))
                continue
            if not line or line.isspace():  # blank (`strip` would copy every line)
                continue
            report.values += 1
            if span is not None and span.skipped(line):  # told by its time: never parsed
                report.outside += 1
                report.unparsed += 1
                continue
            if unshaped is not None and self.shape is None:
                unshaped(line)
            try:
                raws, self.shape = _unwrapped(line, self.shape, report)
            except (BadEvent, shapes.Unfit) as error:
                self.skip(self.where(number), str(error))
                continue
            for index, raw in enumerate(raws):
                try:
                    event = Event.of(raw, modified)
                except BadEvent as error:
                    if self.shape is not None:
                        report.unfit(1, self.shape.name, str(error))
                    where = self.where(number)
                    self.skip(f"{where} item {index}" if len(raws) > 1 else where, str(error))
                    continue
                if span is not None and not span.holds(event.received):
                    report.outside += 1
                    continue
                report.events += 1
                yield index, event


def _modified(path: Path) -> str | None:
    """The file's modification time, RFC 3339 (the time of an event that has none); of
    standard input, when it is a file (`< LOG`), not a pipe."""
    try:
        if path == STDIN:
            status = os.fstat(sys.stdin.fileno())
            if not stat.S_ISREG(status.st_mode):
                return None
            mtime = status.st_mtime
        else:
            mtime = path.stat().st_mtime
        when = dt.datetime.fromtimestamp(mtime, dt.UTC)
    except (OSError, OverflowError, ValueError):
        return None
    return when.isoformat().replace("+00:00", "Z")


def _unwrapped(
    line: bytes, shape: shapes.Shape | None, report: FileReport
) -> tuple[list[Any], shapes.Shape | None]:
    """The raw Events of one value (its text), by the file's shape so far, or, when the
    value is none of it, the shape it has (`shapes.detect`); refused when nested too deep
    or holding a lone surrogate. The shape it was read by is returned, and counted in
    `report` once the value was read in it."""
    opening = None
    try:
        if type(line) is bytes:  # read as `shapes.loaded` reads it, its brackets counted
            value, opening, by_json = jsonfast.read(line)
        else:
            read_by_json = jsonfast.read_by_json()
            value = shapes.loaded(line, "the line")
            by_json = jsonfast.read_by_json() != read_by_json
    except RecursionError:
        raise BadEvent("the line is nested too deep to read") from None
    except ValueError as error:  # not JSON (shapes.Unfit is one too)
        if isinstance(error, shapes.Unfit):
            raise BadEvent(str(error)) from None
        raise BadEvent(f"the line is not JSON ({error})") from None
    score = shape.score(value) if shape is not None else 0
    if not score:
        shape, score = shapes.detect(value)
        if shape is None:
            raise BadEvent(_no_shape(value))
    assert shape is not None
    try:
        raws = shape.events(value)
    except shapes.Unfit as error:
        report.unfit(score, shape.name, str(error))
        raise
    report.shapes[shape.name] += 1  # a shape the value was read in, not one it only resembled
    if opening is None or opening > MAX_DEPTH:  # (`_shallow`'s first look, without the call)
        _shallow(line, raws, value, opening)
    if by_json:  # orjson refuses a lone surrogate
        _text(line, raws)
    return raws, shape


def _no_shape(value: Any) -> str:
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    return (
        f"not an audit Event (kind {value.get('kind')!r}), an EventList, or any shape an "
        "audit log is kept in (docs/importing.md)"
    )


# -- exchanges --------------------------------------------------------------------------------
def _method(verb: str) -> str:
    return METHODS.get(verb, "")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _request_type(event: Event) -> str:
    """The Content-Type of the request object as the log holds it: JSON, a JSON patch when
    it is a list; a patch's other types (merge, strategic, apply) the log does not say."""
    if event.verb != "patch":
        return JSON
    return JSON_PATCH if isinstance(event.raw.get("requestObject"), list) else ""


def _cloud_absent(event: Event) -> list[str]:
    """What `gke.event_of` said the entry lacks (`cloudLogging.absent`): a list of strings.
    A plain Event may carry a `cloudLogging` of its own, anything: only such a list's
    strings are taken."""
    said = _dict(event.raw.get(gke.CLOUD)).get("absent")
    return [item for item in said if isinstance(item, str)] if isinstance(said, list) else []


def _taken(event: Event, key: str) -> Any:
    """What a shape said it made of the event (`shapes.TAKEN`): `taken` or `absent`."""
    said = _dict(event.raw.get(TAKEN)).get(key)
    if key == "absent":
        return [item for item in said if isinstance(item, str)] if isinstance(said, list) else []
    return said if isinstance(said, dict) else {}


def _request_absent(event: Event) -> list[str]:
    absent, raw, verb = ["request headers but User-Agent"], event.raw, event.verb
    if gke.CLOUD in raw:
        absent += _cloud_absent(event)
    if TAKEN in raw:
        absent += _taken(event, "absent")
    if event.level == "Metadata" and verb not in _READS and "requestObject" not in raw:
        absent.append("request body")
    if verb == "patch" and not _request_type(event):
        absent.append("the patch type")
    if verb not in METHODS:  # no method (`_method`)
        absent.append("method")
    return absent


_READS = ("get", "list", "watch")  # verbs whose requests have no body
# what `_absent` says of an exchange answered with a body, of one without, of a watch
_ABSENT_ANSWERED: tuple[str, ...] = ("response headers",)
_ABSENT_UNANSWERED = ("response headers", "response body")
_ABSENT_WATCH = ("response headers", "watch events")


def _response_absent(event: Event) -> list[str]:
    return [*_absent(event)]


def _absent(event: Event) -> tuple[str, ...]:
    """What of its response an exchange's audit event does not hold."""
    if event.code == 200 and event.verb == "watch":
        return _ABSENT_WATCH
    return _ABSENT_ANSWERED if "responseObject" in event.raw else _ABSENT_UNANSWERED


def _info(event: Event) -> tuple[RequestInfo, bool]:
    """The request's RequestInfo, and whether its objects are sensitive (kube/sensitive.py)
    by the event's objectRef, or by its request line when that says more."""
    info = parse_request(METHODS.get(event.verb) or "GET", event.uri)
    if (info.group, info.resource, info.subresource) in SENSITIVE_RESOURCES:
        return info, True
    ref = _dict(event.raw.get("objectRef"))
    group, resource = str(ref.get("apiGroup") or ""), str(ref.get("resource") or "")
    return info, (group, resource, str(ref.get("subresource") or "")) in SENSITIVE_RESOURCES


def token_unnamed(event: Event, sink: Sink) -> Event:
    """The event, a name that is an OAuth token (OpenShift before 4.6, kube/sensitive.py
    OAUTH_TOKENS: not a `sha256~` hash) replaced by its placeholder in its raw requestURI
    and objectRef (what the `audit` field and notes quote). `uri` stays as the log has it:
    it is the request's path, which the sink replaces the name in as the proxy's recorder
    does (`Redactor.path`), and what tells the request from others (`Event.key`)."""
    if OAUTH_GROUP not in event.uri:  # the common case, told without parsing anything
        return event
    ref = _dict(event.raw.get("objectRef"))
    tokens = sink.token_names(_info(event)[0], str(ref.get("name") or ""))
    if not tokens:
        return event
    uri, raw = event.uri, dict(event.raw)
    for token, placeholder in tokens.items():
        uri = uri.replace(token, placeholder)
    raw["requestURI"] = uri
    if ref.get("name") in tokens:
        raw["objectRef"] = {**ref, "name": tokens[ref["name"]]}
    return replace(event, raw=raw)


def redacted_annotations(event: Event, sink: Sink) -> dict[str, Any]:
    """The event's annotations, each webhook patch redacted: replaced whole on a sensitive
    resource, else redacted as a body of the request would be (a Secret object in it)."""
    annotations = _dict(event.raw.get("annotations"))
    for key in annotations:
        if key.startswith(PATCH_ANNOTATION):
            break
    else:
        return annotations  # the common case: no webhook patch
    info, sensitive = _info(event)
    redacted = {}
    for key, value in annotations.items():
        if key.startswith(PATCH_ANNOTATION):
            text = value if isinstance(value, str) else sink.dumps(value).decode()
            if sensitive:
                value = sink.placeholder(text)
            else:
                value = sink.redacted(info, JSON, text.encode()).decode("utf-8", "replace")
        redacted[key] = value
    return redacted


def redacted_user(user: Any, sink: Sink) -> Any:
    """A UserInfo with each of its `extra` values replaced by its placeholder: extra may
    carry credentials (a token's claims, an authenticating proxy's headers)."""
    if not isinstance(user, dict) or "extra" not in user:
        return user
    extra = user["extra"]
    if isinstance(extra, dict):
        values = {k: _placeholders(v, sink) for k, v in extra.items()}
    else:
        values = _placeholders(extra, sink)
    return {**user, "extra": values}


def _placeholders(values: Any, sink: Sink) -> Any:
    if isinstance(values, list):
        placeholder = sink.placeholder
        return [
            placeholder(value) if type(value) is str else _placeholders(value, sink)
            for value in values
        ]
    return sink.placeholder(values if isinstance(values, str) else sink.dumps(values).decode())


def _requested(
    event: Event, sink: Sink
) -> tuple[list[tuple[str, str]], bytes | None, dict[str, Any]]:
    """What a request record takes from the event: its headers, its body (as the log
    holds it) and its other fields (client, identity, and `audit`: what the event says
    beyond the request line, redacted: webhook patches, users' extra; its `annotations`
    are what `redacted_annotations` gives)."""
    raw = event.raw
    agent = raw.get("userAgent")
    headers = [("User-Agent", agent)] if isinstance(agent, str) else []
    body = None
    if "requestObject" in raw:
        body = sink.dumps(raw["requestObject"])
        if content_type := _request_type(event):
            headers.append(("Content-Type", content_type))
    user, ips = raw.get("user"), raw.get("sourceIPs")
    name = None
    if isinstance(user, dict):
        name = user.get("username")
        if "extra" in user:
            user = redacted_user(user, sink)
    annotations = redacted_annotations(event, sink)
    audit: dict[str, Any] = {
        "auditID": event.audit_id,
        "level": event.level,
        "stage": event.stage,
        "verb": event.verb,
        "requestURI": raw["requestURI"],  # a token name replaced (`token_unnamed`)
        "user": user or {},
    }
    if "impersonatedUser" in raw:
        audit["impersonatedUser"] = redacted_user(raw["impersonatedUser"], sink)
    if ips is not None or "sourceIPs" in raw:
        audit["sourceIPs"] = ips
    if agent is not None or "userAgent" in raw:
        audit["userAgent"] = agent
    if "objectRef" in raw:
        audit["objectRef"] = raw["objectRef"]
    if gke.CLOUD in raw:
        audit[gke.CLOUD] = raw[gke.CLOUD]
    audit["decision"] = annotations.get("authorization.k8s.io/decision", "")
    audit["reason"] = annotations.get("authorization.k8s.io/reason", "")
    audit["annotations"] = annotations
    audit["absent"] = _request_absent(event)
    if TAKEN in raw and (taken := _taken(event, "taken")):
        audit["taken"] = taken
    return (
        headers,
        body,
        {
            "client": {"address": ips[0]} if isinstance(ips, list) and ips else {},
            "identity": {"credential": CREDENTIAL, "user": str(name or "")},
            "audit": audit,
        },
    )


def _unheld(held: Event | bytes) -> Event:
    """A held RequestReceived event, parsed again when it was held as its JSON."""
    return held if isinstance(held, Event) else Event.of(jsonfast.loads(held))


@dataclass
class _Exchange:
    id: str  # the exchange's id: its auditID, or one derived from it (see `_fresh`)
    # a RequestReceived event, until the request is written (as its JSON when many are open)
    held: Event | bytes | None = None
    requested: bool = False
    responded: bool = False
    stages: list[str] = field(default_factory=list)


@dataclass
class AuditImport:
    """Feeds Events to a `Sink` as exchanges; `finish` writes what the log left open."""

    sink: Sink
    max_open: int = limits.MAX_OPEN  # exchanges held open at once, at most (`_evict`)
    events: int = 0
    # in the order they began: the oldest is first (an OrderedDict drops it in constant time)
    _open: OrderedDict[Key, _Exchange] = field(default_factory=OrderedDict)
    # an ordered set, bounded: an OrderedDict drops its oldest in constant time (a dict's
    # next(iter()) walks past every slot deleted before it: 50 µs an exchange past 100,000)
    _done: OrderedDict[Key, None] = field(default_factory=OrderedDict)
    _ids: OrderedDict[str, None] = field(default_factory=OrderedDict)  # ids given, the last
    _forgotten: Bloom | None = None  # ids dropped from _ids, and derived ids
    ignored: int = 0  # repeated or late events
    unfinished: int = 0  # exchanges the log did not finish (counted by `finish`)
    evicted: int = 0  # exchanges written unanswered past `max_open`
    _noted: int = 0  # capped notes asked for
    files: list[FileReport] = field(default_factory=list)  # what each file held (`read_events`)

    def __post_init__(self) -> None:
        self._at_once = self.sink.at_once()

    def feed(self, event: Event) -> None:
        self.events += 1
        if OAUTH_GROUP in event.uri:  # (`token_unnamed`'s first look, without the call)
            event = token_unnamed(event, self.sink)
        key, opened = event.key, self._open
        if (
            event.stage == "ResponseComplete"
            and self._at_once
            and key not in opened
            and key not in self._done
            and len(opened) < self.max_open
        ):
            self._whole(event)
            return
        if event.key in self._done:
            late = event.stage == "RequestReceived"  # out of order: a batch sent again later
            kept = " (the exchange is recorded from its later events)" if late else ""
            self._ignored(f"a {event.stage} event of {event.audit_id} after its end: ignored{kept}")
            return
        state = self._open.get(event.key)
        if state is None:
            state = self._open[event.key] = _Exchange(self._fresh(event))
            if len(self._open) > self.max_open:
                self._evict()
        if event.stage in state.stages:
            self._ignored(f"a second {event.stage} event of {event.audit_id}: ignored")
            return
        state.stages.append(event.stage)
        if event.stage == "RequestReceived":
            # past COMPACT open, held as its JSON: a fifth of the parsed event's memory
            state.held = event if len(self._open) < COMPACT else self.sink.dumps(event.raw)
            return
        self._request(state, event)
        self._response(state, event)
        if event.stage in ENDS:
            self._end(state, event)

    def _ignored(self, message: str) -> None:
        self.ignored += 1
        self._note(message)

    def _status(self, id: str, event: Event) -> Any:
        """The event's `responseStatus`, its message masked as a Status body's would be
        (it is written even at level Metadata, and quotes what the request held)."""
        status = event.raw.get("responseStatus")
        if not isinstance(status, dict):
            return status or {}
        return self.sink.status(id, _info(event)[0], status)

    def _note(self, message: str, id: str | None = None) -> None:
        """A note of the import, the first SKIP_NOTES of them written (a log can repeat
        without end); `finish` says how many were not."""
        self._noted += 1
        if self._noted <= SKIP_NOTES:
            self.sink.note(message, id=id)

    def _fresh(self, event: Event) -> str:
        """The id of a new exchange: its auditID, unless another request had it (sanitised
        samples give many requests one auditID; a request is told by its verb, URI and
        time, `Event.key`) or may have (past DONE_LIMIT, a repeat cannot be told from a new
        exchange): then `ID~N`, the first N that no exchange has had, said in a note."""
        audit_id, forgotten, ids = event.audit_id, self._forgotten, self._ids
        shared = audit_id in ids
        if not shared and (forgotten is None or audit_id not in forgotten):
            if len(ids) < DONE_LIMIT:  # `_given`, the common case without the call
                ids[audit_id] = None
            else:
                self._given(audit_id)
            return audit_id
        n = 1
        while (new := f"{audit_id}~{n}") in self._ids or (forgotten and new in forgotten):
            n += 1
        self._given(new)
        if shared:
            uri = event.raw["requestURI"]  # a token name replaced (`token_unnamed`)
            said = f"auditID {audit_id} is another request's too ({event.verb} {uri})"
        else:
            said = (
                f"auditID {audit_id} may repeat one of the finished exchanges no longer "
                f"remembered (past the last {DONE_LIMIT:,})"
            )
        self._note(f"{said}: imported as {new}", id=new)
        return new

    def _given(self, id: str) -> None:
        """Remember `id` as given (the last DONE_LIMIT, then the Bloom filter)."""
        self._ids[id] = None
        if len(self._ids) > DONE_LIMIT:
            oldest, _ = self._ids.popitem(last=False)
            if self._forgotten is None:
                self._forgotten = Bloom()
            self._forgotten.add(oldest)

    def _whole(self, event: Event) -> None:
        """An exchange of one event, its ResponseComplete (an auditID the log has once: most
        of a log): its request, response and end written at once (`Sink.begin`,
        `Sink.complete`), as `_request`, `_response` and `_end` write them one at a time,
        without holding it open."""
        id = self._fresh(event)
        sink, raw = self.sink, event.raw
        method = METHODS.get(event.verb, "")  # `_method`
        headers, body, fields = _requested(event, sink)
        code = event.code
        answer: tuple[str, bytes] | None = None
        if "responseObject" in raw:
            answer = (JSON, sink.dumps(raw["responseObject"]))
        absent = _absent(event)
        audit = {
            "stages": ["ResponseComplete"],
            "responseStatus": None,  # the sink's, masked
            # `redacted_annotations` again (the request's: one value redacts to one placeholder)
            "annotations": fields["audit"]["annotations"],
            "absent": [*absent, "status"] if code is None else [*absent],
        }
        status = raw.get("responseStatus")
        if TAKEN not in raw and not event.bad_code:  # no note between its records
            self._finished(event.key)
            # the sink's RequestInfo is `_info`'s when the verb has a method
            said_of = None if method else _info(event)[0]
            sink.whole(
                id,
                event.received,
                method,
                event.uri,
                headers,
                body,
                fields,
                event.at,
                code,
                answer,
                audit,
                status,
                said_of,
            )
            return
        state = sink.begin(id, event.received, method, event.uri, headers, body, fields)
        if TAKEN in raw:
            self._made(id, event)
        if event.bad_code:
            self._note(event.bad_code, id=id)
        self._finished(event.key)
        if isinstance(status, dict):
            status = sink.status_of(state, state.info if method else _info(event)[0], status)
        audit["responseStatus"] = status or {}
        sink.complete(
            state,
            id,
            event.at,
            code,
            [] if answer is None else [("Content-Type", answer[0])],
            None if answer is None else answer[1],
            audit,
        )

    def _request(self, state: _Exchange, event: Event) -> None:
        if state.requested:
            return
        state.requested = True
        headers, body, fields = _requested(event, self.sink)
        self.sink.request(
            state.id, event.received, _method(event.verb), event.uri, headers, body, **fields
        )
        state.held = None
        if TAKEN in event.raw:
            self._made(state.id, event)

    def _made(self, id: str, event: Event) -> None:
        """A note of what the importer made of an event that lacked it (its auditID, its
        stage, its time: SIEM exports drop them), beside `audit.taken`."""
        taken = _taken(event, "taken")
        made = [
            f"no {field}: {taken[field]}"
            for field in ("auditID", "stage", "requestReceivedTimestamp")
            if isinstance(taken.get(field), str) and taken[field].startswith("none in the event")
        ]
        if made:
            self._note(f"an event with {'; '.join(made)} (audit.taken)", id=id)

    def _response(self, state: _Exchange, event: Event) -> None:
        if event.bad_code and not state.responded:
            self._note(event.bad_code, id=state.id)
        if state.responded or event.code is None:
            return
        state.responded = True
        headers = [("Content-Type", JSON)] if "responseObject" in event.raw else []
        self.sink.response(state.id, event.at, event.code, headers)

    def _evict(self) -> None:
        """Write the oldest open exchange as far as the log had it, unanswered, with a
        note, and forget it (its later events are ignored as late): past `max_open`, what
        is held would follow the log (RequestReceived events that never finish)."""
        key, state = self._open.popitem(last=False)
        self.evicted += 1
        if state.held is not None:
            self._request(state, _unheld(state.held))
        self._note(
            f"more than {self.max_open:,} exchanges open at once (--max-open): the oldest, "
            "written as far as the log had it and left unanswered; its later events are "
            "ignored",
            id=state.id,
        )
        self.sink.forget(state.id)
        self._finished(key)

    def _finished(self, key: Key) -> None:
        """Remember the request `key` as finished (the last DONE_LIMIT: past them, its
        auditID is in the Bloom filter of ids given, `_given`)."""
        self._done[key] = None
        if len(self._done) > DONE_LIMIT:
            self._done.popitem(last=False)

    def _end(self, state: _Exchange, event: Event) -> None:
        del self._open[event.key]
        self._finished(event.key)
        raw = event.raw
        body = self.sink.dumps(raw["responseObject"]) if "responseObject" in raw else None
        error = None
        if event.stage == "Panic":
            error = "the API server panicked serving this request (audit stage Panic)"
        audit = {
            "stages": state.stages,
            "responseStatus": self._status(state.id, event),
            "annotations": redacted_annotations(event, self.sink),
            "absent": _response_absent(event) + ([] if state.responded else ["status"]),
        }
        self.sink.end(state.id, event.at, body, error=error, audit=audit)

    def finish(self) -> None:
        """Write the exchanges the log did not finish, as far as it has them, each with a
        note (capped with the others: a log cut short may leave thousands of watches open);
        past the cap, a last note counts them and the ignored events."""
        for state in self._open.values():
            self.unfinished += 1
            if state.held is not None:
                self._request(state, _unheld(state.held))
                self._note("the log ends before its response", id=state.id)
            else:
                self._note("the log ends before its ResponseComplete", id=state.id)
        self._open.clear()
        if self._noted > SKIP_NOTES:
            counts = []
            if self.ignored or not self.unfinished:
                ignored = counted(self.ignored, "repeated or late audit event")
                counts.append(f"{ignored} ignored")
            if self.unfinished:
                unfinished = counted(self.unfinished, "exchange")
                counts.append(f"{unfinished} the log does not finish")
            if self.evicted:
                counts.append(f"{self.evicted:,} written unanswered past --max-open")
            self.sink.note(f"{', '.join(counts)}, {self._noted - SKIP_NOTES:,} not noted")


def import_audit(
    paths: Iterable[Path],
    sink: Sink,
    bounds: Limits = limits.DEFAULT,
    span: TimeRange | None = None,
) -> AuditImport:
    """Import the audit logs at `paths`, in order, into `sink`, within `bounds`; with
    `span`, the exchanges whose requests were received inside it (`timerange`)."""
    importer = AuditImport(sink, max_open=bounds.max_open)
    sink.read_by_jsonfast()  # every value is read by `jsonfast.loads` (`shapes.loaded`)
    for event in read_events(paths, sink, bounds, importer.files, span):
        importer.feed(event)
    importer.finish()
    return importer
