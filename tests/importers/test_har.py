"""`import har` of what `export --har` wrote of the committed recordings (the apply story;
the wide session: protobuf bodies, watches, failures): the import explains as the original
does, exchange by exchange (method, path, status, who, verb, summary, why, cause, events).
A HAR with broken entries imports the rest and says each broken one (entry number, reason)
and how many; a file that is no HAR, or an existing output, is a one-line error and nothing
is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli
from tests.recorded import RECORDINGS, STORY

WIDE = RECORDINGS / "wide-session.jsonl.gz"
SAME = ("method", "path", "status", "component", "verb", "summary", "why", "events")


def _explained(recording: Path) -> dict[str, dict[str, Any]]:
    result = cli("explain", str(recording), "--format", "json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {line["id"]: line for line in lines}


def _exported(recording: Path, folder: Path) -> Path:
    har = folder / "out.har"
    result = cli("export", str(recording), "--har", str(har))
    assert result.returncode == 0, result.stderr
    return har


def _cause(line: dict[str, Any]) -> Any:
    cause = line.get("caused_by")
    return (cause or {}).get("event", {}).get("watch"), (cause or {}).get("exchange")


@pytest.mark.parametrize("recording", [STORY, WIDE], ids=["apply-story", "wide-session"])
def test_an_exported_har_imports_and_explains_as_the_original(
    recording: Path, tmp_path: Path
) -> None:
    har = _exported(recording, tmp_path)
    out = tmp_path / "imported.jsonl"
    result = cli("import", "har", str(har), "-o", str(out))
    assert result.returncode == 0, result.stderr
    original, imported = _explained(recording), _explained(out)
    assert result.stderr.strip().splitlines()[-1] == (
        f"{out}: {len(original):,} exchanges from {har}; 0 unreadable entries skipped"
    )
    assert list(imported) == list(original)  # the same exchanges, in the same order
    for key, line in original.items():
        again = imported[key]
        assert {k: again[k] for k in SAME if k in line} == {k: line[k] for k in SAME if k in line}
        assert _cause(again) == _cause(line)
        assert again["response_format"] in (line["response_format"], "json")
    header = json.loads(out.read_text().splitlines()[0])
    assert header["imported"] == "HAR file" and header["redacted"] is True
    if recording == WIDE:  # protobuf made JSON, watches made events again, failures kept
        formats = {line["response_format"] for line in original.values()}
        assert "protobuf" in formats
        assert sum(len(line.get("events", [])) for line in imported.values()) > 1000
        assert any((line["status"] or 0) >= 400 for line in imported.values())


def _broken(har: Path) -> Path:
    document = json.loads(har.read_text())
    entries = document["log"]["entries"]
    del entries[2]["request"]["method"]
    entries[3]["request"]["url"] = "/api/v1/pods"
    entries[4]["response"]["content"].update(text="not base64!", encoding="base64")
    entries[5] = "an entry"
    entries[6]["request"]["postData"] = "a body"
    entries[8]["_k8sWiretap"]["id"] = entries[7]["_k8sWiretap"]["id"]  # still two exchanges
    broken = har.with_name("broken.har")
    broken.write_text(json.dumps(document))
    return broken


def test_broken_entries_are_said_and_skipped(tmp_path: Path) -> None:
    broken = _broken(_exported(STORY, tmp_path))
    out = tmp_path / "rec.jsonl"
    result = cli("import", "har", str(broken), "-o", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[:5] == [
        f"{broken}:entry 3: skipped: request.method is missing",
        f"{broken}:entry 4: skipped: request.url (no scheme) is no absolute http(s) URL",
        f"{broken}:entry 5: skipped: response.content.text is not base64: "
        "Only base64 data is allowed",
        f"{broken}:entry 6: skipped: the entry is not an object",
        f"{broken}:entry 7: skipped: request.postData is not an object",
    ]
    total = len(json.loads(broken.read_text())["log"]["entries"])
    assert (
        lines[-1] == f"{out}: {total - 5:,} exchanges from {broken}; 5 unreadable entries skipped"
    )
    assert len(_explained(out)) == total - 5
    notes = [json.loads(line) for line in out.read_text().splitlines() if '"note"' in line]
    assert notes[-1]["message"] == "import skipped 5 unreadable parts of its source"


def test_what_is_no_har_or_would_be_overwritten_is_refused(tmp_path: Path) -> None:
    not_har, out = tmp_path / "notes.txt", tmp_path / "rec.jsonl"
    not_har.write_text("hello\n")
    result = cli("import", "har", str(not_har), "-o", str(out))
    assert result.returncode == 2 and not out.exists()
    assert result.stderr.strip().splitlines() == [
        f"k8s-wiretap: import har: {not_har}: not a HAR file: "
        "Expecting value: line 1 column 1 (char 0)"
    ]
    har = _exported(STORY, tmp_path)
    out.write_text("kept")
    again = cli("import", "har", str(har), "-o", str(out))
    assert again.returncode == 2 and out.read_text() == "kept"
    assert again.stderr.strip().splitlines() == [
        f"k8s-wiretap: import har: -o {out} exists (--overwrite)"
    ]
    replaced = cli("import", "har", str(har), "-o", str(out), "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert len(_explained(out)) > 800


def _entry(url: str, *, id: str | None = None, header: str = "v", body: str = "{}") -> Any:
    """A HAR entry as HAR tooling writes one (a GET of `url`, 200, a JSON body)."""
    entry: dict[str, Any] = {
        "startedDateTime": "2026-01-01T00:00:00.000Z",
        "time": 5,
        "request": {
            "method": "GET",
            "url": url,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "X-Test", "value": header}],
        },
        "response": {
            "status": 200,
            "statusText": "OK",
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {"mimeType": "application/json", "text": body},
        },
        "timings": {"send": 0, "wait": 1, "receive": 1},
    }
    if id is not None:
        entry["_k8sWiretap"] = {"id": id}
    return entry


def _har(folder: Path, entries: list[Any]) -> Path:
    har = folder / "in.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return har


def _records(out: Path, kind: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    return [line for line in lines if line["record"] == kind]


API = "https://127.0.0.1:6443/api/v1"


def test_a_password_in_the_url_is_never_recorded(tmp_path: Path) -> None:
    entries = [
        _entry("https://admin:PASSWORDINURL@127.0.0.1:6443/api/v1/namespaces"),
        _entry("https://user@[::1]/api/v1/pods"),
    ]
    out = tmp_path / "rec.jsonl"
    result = cli("import", "har", str(_har(tmp_path, entries)), "-o", str(out))
    assert result.returncode == 0, result.stderr
    servers = [r["server"] for r in _records(out, "request")]
    assert servers == ["https://127.0.0.1:6443", "https://[::1]"]
    assert "PASSWORDINURL" not in out.read_text() and "admin" not in out.read_text()


def test_repeated_ids_stay_as_many_exchanges(tmp_path: Path) -> None:
    ids = ["a", "a-3", "a", "a", "a-3"]
    entries = [_entry(f"{API}/namespaces/n{n}", id=id) for n, id in enumerate(ids)]
    out = tmp_path / "rec.jsonl"
    result = cli("import", "har", str(_har(tmp_path, entries)), "-o", str(out))
    assert result.returncode == 0, result.stderr
    requests = _records(out, "request")
    assert [r["path"] for r in requests] == [f"/api/v1/namespaces/n{n}" for n in range(5)]
    assert [r["id"] for r in requests] == ["a", "a-3", "a-3-2", "a-4", "a-3-5"]
    assert len({r["id"] for r in _records(out, "end")}) == 5


def test_a_lone_surrogate_skips_its_entry_and_keeps_the_rest(tmp_path: Path) -> None:
    entries = [
        _entry(f"{API}/pods", body='{"name": "\ud800"}'),
        _entry(f"{API}/nodes"),
        _entry(f"{API}/services", header="x\udc80y"),
        _entry(f"{API}/namespaces"),
    ]
    har, out = _har(tmp_path, entries), tmp_path / "rec.jsonl"
    result = cli("import", "har", str(har), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"{har}:entry 1: skipped: 'response'['content']['text'] holds a lone surrogate "
        "(\\ud800): no Unicode text",
        f"{har}:entry 3: skipped: 'request'['headers'][0]['value'] holds a lone surrogate "
        "(\\udc80): no Unicode text",
        f"{out}: 2 exchanges from {har}; 2 unreadable entries skipped",
    ]
    assert [r["path"] for r in _records(out, "request")] == ["/api/v1/nodes", "/api/v1/namespaces"]


def test_json_nested_too_deeply_is_a_one_line_error(tmp_path: Path) -> None:
    deep, out = tmp_path / "deep.har", tmp_path / "rec.jsonl"
    deep.write_text('{"log": {"entries": [' + "[" * 100_000 + "]" * 100_000 + "]}}")
    result = cli("import", "har", str(deep), "-o", str(out))
    assert result.returncode == 2 and not out.exists()
    assert result.stderr.strip().splitlines() == [
        f"k8s-wiretap: import har: {deep}: not a HAR file: JSON nested too deeply to read"
    ]


def test_an_overwritten_output_is_0600_and_a_symlink_is_not_followed(tmp_path: Path) -> None:
    har, out = _har(tmp_path, [_entry(f"{API}/pods")]), tmp_path / "rec.jsonl"
    out.write_text("old")
    out.chmod(0o644)
    result = cli("import", "har", str(har), "-o", str(out), "--overwrite")
    assert result.returncode == 0, result.stderr
    assert out.stat().st_mode & 0o777 == 0o600 and len(_records(out, "request")) == 1
    target = tmp_path / "target.txt"
    target.write_text("not yours")
    out.unlink()
    out.symlink_to(target)
    result = cli("import", "har", str(har), "-o", str(out), "--overwrite")
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "not yours"
    assert not out.is_symlink() and out.stat().st_mode & 0o777 == 0o600


def test_an_oauth_token_in_the_url_is_never_recorded(tmp_path: Path) -> None:
    """An OpenShift OAuth access token named by the token (before 4.6, kube/sensitive.py):
    the path holds its placeholder, as the proxy's recording would; a hashed name is kept."""
    token = "kS8dPx3v0QmYc4rTnLw9aZbE2fGhJ1uVoXyI7sRtBqM"
    hashed = "sha256~Jb0kJXQ1V6yDbZnqkF0tC7e1rVh3sPqL9wXmA2oYtUc"
    tokens = "https://127.0.0.1:6443/apis/oauth.openshift.io/v1/oauthaccesstokens"
    entries = [_entry(f"{tokens}/{token}"), _entry(f"{tokens}/{hashed}")]
    out = tmp_path / "rec.jsonl"
    result = cli("import", "har", str(_har(tmp_path, entries)), "-o", str(out))
    assert result.returncode == 0, result.stderr
    paths = [r["path"] for r in _records(out, "request")]
    assert paths[0].rsplit("/", 1)[1].startswith("redacted:")
    assert paths[1].endswith(hashed)
    assert token not in out.read_text()
