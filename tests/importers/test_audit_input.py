"""The audit importer on any input: whatever a line holds, it is imported or skipped with
its line number, never a crash; a gzip file cut short keeps what came before it."""

from __future__ import annotations

import base64
import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from k8s_wiretap.importers import audit, framing
from k8s_wiretap.importers.audit import import_audit
from k8s_wiretap.importers.sink import Sink
from tests.conftest import cli

EVENT: dict[str, Any] = {
    "kind": "Event",
    "apiVersion": "audit.k8s.io/v1",
    "level": "Metadata",
    "auditID": "3cf9bff8-2bbc-43d2-8ff4-7e389d030ebb",
    "stage": "ResponseComplete",
    "requestURI": "/api/v1/namespaces/default/pods",
    "verb": "list",
    "user": {"username": "kubernetes-admin", "groups": ["system:masters"]},
    "sourceIPs": ["127.0.0.1"],
    "userAgent": "kubectl/v1.33.2 (linux/amd64) kubernetes/abc",
    "responseStatus": {"metadata": {}, "code": 200},
    "requestReceivedTimestamp": "2026-12-03T13:46:05.321570Z",
    "stageTimestamp": "2026-12-03T13:46:05.363843Z",
}

# any character, lone surrogates too (JSON may hold one), those drawn often (a list of
# characters joined: st.text leaves surrogates out)
texts = st.lists(
    st.characters(exclude_categories=()) | st.sampled_from("\ud800\udc00\udfff"), max_size=20
).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
fields = st.sampled_from(sorted(EVENT)) | st.sampled_from(["log", "message", "items"])


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A line: bytes, a JSON value, the Event with one field replaced by anything, or one
    of its strings by any text."""
    choice = draw(st.integers(0, 3))
    if choice == 3:
        key = draw(st.sampled_from(["auditID", "userAgent", "requestURI"]))
        return json.dumps({**EVENT, key: EVENT[key] + draw(texts)}).encode()
    if choice == 0:
        return draw(st.binary(max_size=60)).replace(b"\n", b" ")
    if choice == 1:
        return json.dumps(draw(json_values)).encode()
    event = {**EVENT, draw(fields): draw(json_values)}
    return json.dumps(event).encode()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(lines(), max_size=8))
@example(given=[b"["])  # an array's first line and nothing more: said at that line, not 2
def test_any_line_is_imported_or_skipped_with_its_number(
    tmp_path: Path, given: list[bytes]
) -> None:
    log = tmp_path / "audit.log"
    log.write_bytes(b"\n".join(given) + b"\n")
    out = tmp_path / "rec.jsonl"
    said: list[str] = []
    with Sink(out, source="audit log", overwrite=True, on_skip=said.append) as sink:
        importer = import_audit([log], sink)
    places = [line.split(": skipped: ")[0] for line in said]
    assert sink.skipped == len(said)
    if f"{log}" in places:  # the whole file from there: only when gzip's bytes start it
        assert given[0].startswith(b"\x1f\x8b") and places == [f"{log}"]
        return
    numbers = [int(place.removeprefix(f"{log}:").split()[0]) for place in places]
    assert all(0 < n <= len(given) and given[n - 1].strip() for n in numbers)
    # else JSON documents (an array, a pretty-printed value), read until the text is no JSON
    # (test_gke.py, test_shapes.py)
    if framing.framed(io.BufferedReader(io.BytesIO(log.read_bytes())))[0] == "JSON lines":
        assert importer.events + len(set(numbers)) >= sum(
            1 for line in given if line.strip()
        ) - sum(
            1
            for line in given
            if b"items" in line  # an EventList may hold no Event
        )
    written = out.read_bytes().split(b"\n")  # one record a line (str.splitlines splits more)
    assert written[-1] == b"" and all(json.loads(line) for line in written[:-1])


def test_a_gzip_cut_short_keeps_the_lines_before(tmp_path: Path) -> None:
    events = [{**EVENT, "auditID": f"id-{n}"} for n in range(200)]
    whole = gzip.compress("".join(json.dumps(e) + "\n" for e in events).encode())
    log = tmp_path / "audit.log.gz"
    log.write_bytes(whole[: len(whole) // 2])
    said: list[str] = []
    with Sink(tmp_path / "rec.jsonl", source="audit log", on_skip=said.append) as sink:
        importer = import_audit([log], sink)
    assert 0 < importer.events < 200
    assert sink.exchanges == importer.events
    assert len(said) == 1 and said[0].startswith(f"{log}: skipped: the file could not be read")


def test_a_missing_log_or_a_wrong_flag_is_one_line_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    missing = cli("import", "audit", str(tmp_path / "nope.log"), "-o", str(out))
    assert (missing.returncode, missing.stderr) == (
        2,
        f"k8s-wiretap: import audit: {tmp_path / 'nope.log'} does not exist\n",
    )
    log = tmp_path / "audit.log"
    log.write_text(json.dumps(EVENT) + "\n")
    wrong = cli("import", "audit", str(log), "-o", str(out), "--no-such-flag")
    assert wrong.returncode == 2 and len(wrong.stderr.splitlines()) == 1
    folder = cli("import", "audit", str(log), "-o", str(tmp_path / "no" / "rec.jsonl"))
    assert folder.returncode == 2 and "does not exist" in folder.stderr
    assert not out.exists()
    done = cli("import", "audit", str(log), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("1 exchange from 1 audit event; 0 unreadable lines skipped\n")


def test_lab_up_takes_only_the_audit_levels(tmp_path: Path) -> None:
    """A level the API server does not know is refused before any lab starts."""
    refused = cli("lab", "up", "--dir", str(tmp_path / "lab"), "--audit-level", "Everything")
    assert refused.returncode == 2
    assert "(choose from 'Metadata', 'Request', 'RequestResponse')" in refused.stderr
    assert not (tmp_path / "lab").exists()


def _import_lines(tmp_path: Path, *lines: str) -> tuple[list[str], list[dict[str, Any]]]:
    """Import `lines` as a log: what was said skipped, and the records written."""
    log = tmp_path / "audit.log"
    log.write_bytes("".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))
    out = tmp_path / "rec.jsonl"
    said: list[str] = []
    with Sink(out, source="audit log", overwrite=True, on_skip=said.append) as sink:
        import_audit([log], sink)
    written = [json.loads(line) for line in out.read_bytes().split(b"\n") if line]
    return said, written


def _requests(written: list[dict[str, object]]) -> list[object]:
    return [r["id"] for r in written if r["record"] == "request"]


def test_a_lone_surrogate_is_a_skipped_line_and_the_rest_is_read(tmp_path: Path) -> None:
    """A lone surrogate is valid JSON but no text a recording can hold: the line is skipped
    with its number, whether escaped or as the bytes UTF-8 would give it."""
    escaped = json.dumps({**EVENT, "auditID": "s1", "userAgent": "\ud800"})
    raw = json.dumps({**EVENT, "auditID": "s2", "userAgent": "\ud800"}, ensure_ascii=False)
    paired = json.dumps({**EVENT, "auditID": "p", "userAgent": "\ud83d\ude00"})
    good = json.dumps({**EVENT, "auditID": "after"})
    said, written = _import_lines(tmp_path, escaped, raw, paired, good)
    log = tmp_path / "audit.log"
    assert said == [
        f"{log}:{n}: skipped: a lone surrogate in a string (no Unicode text)" for n in (1, 2)
    ]
    assert _requests(written) == ["p", "after"]


def test_json_nested_too_deep_is_a_skipped_line(tmp_path: Path) -> None:
    """Too deep for json to parse, or parsed but too deep to redact (a Secret's body, a
    user's extra, walked recursively): skipped with the line's number."""
    deep = json.loads("[" * 3000 + "]" * 3000)
    secret = {"kind": "Secret", "apiVersion": "v1", "data": {"x": deep}}
    secrets = "/api/v1/namespaces/default/secrets"
    lines = [
        "[" * 100_000 + "]" * 100_000,
        json.dumps({**EVENT, "level": "Request", "requestURI": secrets, "requestObject": secret}),
        json.dumps({**EVENT, "user": {"username": "a", "extra": {"k": deep}}}),
        json.dumps({"log": json.dumps({**EVENT, "annotations": {"a": deep}})}),
        json.dumps({**EVENT, "auditID": "after"}),
    ]
    said, written = _import_lines(tmp_path, *lines)
    log = tmp_path / "audit.log"
    assert said == [f"{log}:{n}: skipped: the line is nested too deep to read" for n in range(1, 5)]
    assert _requests(written) == ["after"]


@pytest.mark.parametrize(
    "strings",
    [
        {},  # told by the line's text
        {"userAgent": "]]]]}}}}" * 40, "sourceIPs": ["[[[{{{" * 40]},  # brackets in strings
        {"userAgent": 'a \\"quoted\\" ]]]] agent'},  # escaped quotes
        {"userAgent": "C:\\\\", "sourceIPs": ['\\\\\\"]]]]', "\\\\[[[["]},  # escaped backslashes
    ],
)
def test_a_line_nested_to_the_limit_is_read_and_one_deeper_skipped(
    tmp_path: Path, strings: dict[str, Any]
) -> None:
    """An Event nesting MAX_DEPTH - 1 levels (its list of events one more) is read, one
    nesting a level more is skipped, whatever brackets its strings hold."""

    def nested(levels: int) -> Any:
        value: Any = {"kind": "ConfigMap"}
        for n in range(levels - 1):
            value = [value, n, "]"] if n % 2 else {"a": value, "s": "}["}
        return value

    lines = [
        json.dumps({**EVENT, **strings, "auditID": "at", "requestObject": nested(198)}),
        json.dumps({**EVENT, **strings, "auditID": "past", "requestObject": nested(199)}),
        json.dumps({**EVENT, **strings, "auditID": "after"}),
    ]
    said, written = _import_lines(tmp_path, *lines)
    assert said == [f"{tmp_path / 'audit.log'}:2: skipped: the line is nested too deep to read"]
    assert _requests(written) == ["at", "after"]


def test_a_status_code_that_is_no_http_status_is_absent(tmp_path: Path) -> None:
    lines = [
        json.dumps({**EVENT, "auditID": f"c{code}", "responseStatus": {"code": code}})
        for code in (-5, 99, 1000, 10**20, 100, 999)
    ]
    said, written = _import_lines(tmp_path, *lines)
    assert said == []
    statuses = {r["id"]: r["status"] for r in written if r["record"] == "response"}
    assert statuses == {"c100": 100, "c999": 999}
    ends = {r["id"]: r["audit"]["absent"] for r in written if r["record"] == "end"}
    assert all("status" in ends[f"c{code}"] for code in (-5, 99, 1000, 10**20))
    notes = [r["message"] for r in written if r["record"] == "note" and r.get("id") == "c-5"]
    assert notes == ["responseStatus.code -5 is no HTTP status (100 to 999): status absent"]


def _event(audit_id: str, verb: str, uri: str, ref: dict[str, str], **more: object) -> str:
    """A RequestResponse ResponseComplete Event whose users carry a token in `extra`."""
    extra = {"authentication.kubernetes.io/credential-id": ["JTI=EXTRA-TOKEN-1"]}
    return json.dumps(
        {
            **EVENT,
            "level": "RequestResponse",
            "auditID": audit_id,
            "verb": verb,
            "requestURI": uri,
            "objectRef": ref,
            "user": {"username": "alice", "extra": extra},
            "impersonatedUser": {"username": "bob", "extra": {"token": ["EXTRA-TOKEN-2"]}},
            "responseStatus": {"metadata": {}, "code": 201},
            **more,
        }
    )


def _patch(operations: list[dict[str, object]]) -> str:
    """A webhook's patch annotation as the API server writes it (dispatcher.go)."""
    return json.dumps(
        {"configuration": "c", "webhook": "w", "patch": operations, "patchType": "JSONPatch"}
    )


def test_webhook_patches_and_users_extra_are_redacted(tmp_path: Path) -> None:
    """A mutating webhook's patch of a Secret (or of a token request) and the users' extra
    are in the audit field only as placeholders; a patch elsewhere is kept."""
    secret = base64.b64encode(b"WEBHOOK-SECRET").decode()
    key = "patch.webhook.admission.k8s.io/round_0_index_0"
    on_secret = {key: _patch([{"op": "add", "path": "/data/pw", "value": secret}])}
    on_token = {key: _patch([{"op": "add", "path": "/status/token", "value": "TOKEN-SECRET"}])}
    on_pod = {key: _patch([{"op": "add", "path": "/metadata/labels/x", "value": "KEPT"}])}
    embedded = {"kind": "Secret", "data": {"pw": secret}}
    on_map = {key: _patch([{"op": "add", "path": "/data/s", "value": embedded}])}
    secrets = {"resource": "secrets", "namespace": "default", "apiVersion": "v1"}
    lines = [
        _event("s", "create", "/api/v1/namespaces/default/secrets", secrets, annotations=on_secret),
        _event(
            "t",
            "create",
            "/api/v1/namespaces/default/serviceaccounts/default/token",
            {"resource": "serviceaccounts", "subresource": "token", "apiVersion": "v1"},
            annotations=on_token,
        ),
        _event(
            "p",
            "create",
            "/api/v1/namespaces/default/pods",
            {"resource": "pods"},
            annotations=on_pod,
        ),
        _event(
            "c",
            "create",
            "/api/v1/namespaces/default/configmaps",
            {"resource": "configmaps"},
            annotations=on_map,
        ),
    ]
    said, written = _import_lines(tmp_path, *lines)
    assert said == []
    recording = (tmp_path / "rec.jsonl").read_bytes()
    for value in (secret, "WEBHOOK-SECRET", "TOKEN-SECRET", "EXTRA-TOKEN-1", "EXTRA-TOKEN-2"):
        assert value.encode() not in recording, value
    assert b"KEPT" in recording
    audits = [r["audit"] for r in written if r["record"] in ("request", "end")]
    assert all(key in a["annotations"] for a in audits)
    assert all(a["user"]["extra"] for a in audits if a.get("user"))


def test_repeated_stages_are_noted_up_to_the_cap_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit, "SKIP_NOTES", 2)
    _, written = _import_lines(tmp_path, *[json.dumps(EVENT)] * 6)
    notes = [r["message"] for r in written if r["record"] == "note"]
    repeat = f"a ResponseComplete event of {EVENT['auditID']} after its end: ignored"
    assert notes == [repeat, repeat, "5 repeated or late audit events ignored, 3 not noted"]
    log = tmp_path / "audit.log"
    done = cli("import", "audit", str(log), "-o", str(tmp_path / "cli.jsonl"))
    assert done.stderr.endswith(
        "1 exchange from 6 audit events; 0 unreadable lines skipped; "
        "5 repeated or late audit events ignored\n"
    )


def test_an_id_repeated_past_the_remembered_ones_is_a_new_exchange_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past DONE_LIMIT finished ids, a repeat cannot be told from a new exchange: it is
    one, under an id derived from its auditID that no other exchange has."""
    monkeypatch.setattr(audit, "DONE_LIMIT", 2)
    ids = ["a", "b", "c", "a", "a~1", "b"]
    _, written = _import_lines(tmp_path, *[json.dumps({**EVENT, "auditID": i}) for i in ids])
    assert _requests(written) == ["a", "b", "c", "a~1", "a~1~1", "b~1"]
    notes = [r for r in written if r["record"] == "note"]
    assert notes[0] == {
        **notes[0],
        "id": "a~1",
        "message": "auditID a may repeat one of the finished exchanges no longer remembered "
        "(past the last 2): imported as a~1",
    }


def test_an_exchange_without_its_request_is_an_importers_bug_raised(tmp_path: Path) -> None:
    """Its bodies could not be redacted by their request: never written as if a GET /."""
    with Sink(tmp_path / "rec.jsonl", source="audit log") as sink:
        with pytest.raises(KeyError, match="'nope' has no open request record"):
            sink.response("nope", 1.0e9, 200, [])
        with pytest.raises(KeyError, match="'nope' has no open request record"):
            sink.end("nope", 1.0e9, b"{}")
        sink.request("r", 1.0e9, "GET", "/api/v1/secrets", [])
        sink.end("r", 1.0e9)
        with pytest.raises(KeyError, match="'r' has no open request record"):
            sink.end("r", 1.0e9)
