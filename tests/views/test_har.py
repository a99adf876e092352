"""`export --har` read by its real consumer: mitmproxy 12's own flow reader
(`mitmproxy.io.FlowReader`, which reads HAR files as its `har` module makes flows of them).
Every entry of the committed recordings (the apply story; the wide session: protobuf
bodies, watches, failures) must become a flow with the exchange's method, URL, status and
body — the body the JSON `explain --format json` decodes — and every watch's events must be
the JSON lines its `_k8sWiretap.events` sums up. Also: `--markdown` is `explain --format
markdown`, and no existing file is replaced without `--overwrite`."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.io import FlowReader

from tests.recorded import RECORDINGS, STORY

WIDE = RECORDINGS / "wide-session.jsonl.gz"


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *argv], capture_output=True, text=True, check=False
    )


def _explained(recording: Path) -> list[dict[str, Any]]:
    result = _cli("explain", str(recording), "--format", "json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _export(recording: Path, out: Path) -> tuple[dict[str, Any], list[http.HTTPFlow]]:
    result = _cli("export", str(recording), "--har", str(out))
    assert result.returncode == 0, result.stderr
    with out.open("rb") as file:
        flows = list(FlowReader(file).stream())
    assert all(isinstance(flow, http.HTTPFlow) for flow in flows)
    return json.loads(out.read_bytes()), flows  # type: ignore[return-value]


def _check_body(record: dict[str, Any], flow: http.HTTPFlow, entry: dict[str, Any]) -> None:
    assert flow.response is not None
    content = entry["response"]["content"]
    body, form = record["response_body"], record["response_format"]
    if "events" not in entry["_k8sWiretap"]:  # a failed watch: its Status
        assert not record.get("events")
    if "events" in entry["_k8sWiretap"]:
        lines = [json.loads(line) for line in (flow.response.get_text() or "").splitlines()]
        summaries = entry["_k8sWiretap"]["events"]
        assert summaries == record["events"]
        assert len(lines) == len(summaries)
        for line, summary in zip(lines, summaries, strict=True):
            if summary.get("error"):
                assert line == {}
                continue
            assert line["type"] == summary["type"]
            meta = (line["object"] or {}).get("metadata", {})
            assert meta.get("resourceVersion", "") == summary["resource_version"]
    elif form == "empty":
        assert flow.response.raw_content == b""
    elif isinstance(body, str) and body.startswith("undecodable:"):
        assert content["_k8sWiretap"]["error"] == body and flow.response.raw_content
    elif form == "text":
        assert flow.response.get_text() == body
    else:
        assert json.loads(flow.response.get_text() or "") == body
        assert content["_k8sWiretap"]["format"] == form
        assert content["_k8sWiretap"]["text"] == ("as recorded" if form == "json" else "json")


def _check_request(record: dict[str, Any], flow: http.HTTPFlow) -> None:
    body, form = record["request_body"], record["request_format"]
    if form == "empty":
        assert flow.request.raw_content == b""
    elif form == "text":
        assert flow.request.get_text() == body
    elif not (isinstance(body, str) and body.startswith("undecodable:")):
        assert json.loads(flow.request.get_text() or "") == body


@pytest.mark.parametrize("recording", [STORY, WIDE], ids=["apply-story", "wide-session"])
def test_every_entry_loads_in_mitmproxy_as_the_exchange(recording: Path, tmp_path: Path) -> None:
    har, flows = _export(recording, tmp_path / "out.har")
    records = _explained(recording)
    entries = har["log"]["entries"]
    assert len(flows) == len(entries) == len(records) > 800
    assert har["log"]["version"] == "1.2" and har["log"]["_k8sWiretap"]["redacted"] is True
    for record, flow, entry in zip(records, flows, entries, strict=True):
        assert entry["_k8sWiretap"]["id"] == record["id"]
        assert flow.request.method == record["method"]
        assert flow.request.path == record["path"]
        assert flow.request.url == entry["request"]["url"]
        assert flow.response is not None
        assert flow.response.status_code == (record["status"] or 0)
        assert flow.request.timestamp_start == pytest.approx(record["time"], abs=0.001)
        _check_request(record, flow)
        _check_body(record, flow, entry)
    formats = {e["response"]["content"].get("_k8sWiretap", {}).get("format") for e in entries}
    if recording == WIDE:  # what this test is for: decoded protobuf, watches, failures
        assert "protobuf" in formats
        assert any("events" in r and r["events"] for r in records)
        assert any((r["status"] or 0) >= 400 for r in records)


def test_markdown_is_the_handout_and_nothing_is_replaced(tmp_path: Path) -> None:
    out, har = tmp_path / "story.md", tmp_path / "story.har"
    result = _cli("export", str(STORY), "--markdown", str(out), "--har", str(har))
    assert result.returncode == 0, result.stderr
    printed = _cli("explain", str(STORY), "--format", "markdown").stdout
    # the same story; the file links the pictures written beside it, stdout embeds them
    story = printed[printed.index("\n## ") :]
    assert out.read_text().endswith(story) and story.lstrip().startswith("## kubectl")
    assert stat.S_IMODE(out.stat().st_mode) == stat.S_IMODE(har.stat().st_mode) == 0o600
    har.write_text("kept")
    again = _cli("export", str(STORY), "--har", str(har))
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"k8s-wiretap: export: --har {har} exists (--overwrite)"
    ]
    assert har.read_text() == "kept"
    replaced = _cli("export", str(STORY), "--har", str(har), "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    printed_har = _cli("export", str(STORY), "--har", "-")
    assert printed_har.returncode == 0 and not Path("-").exists()
    assert json.loads(printed_har.stdout) == json.loads(har.read_text())


def test_an_unreadable_recording_leaves_no_file(tmp_path: Path) -> None:
    bad, har = tmp_path / "bad.jsonl", tmp_path / "out.har"
    bad.write_text('{"record": "request"}\n')
    result = _cli("export", str(bad), "--har", str(har))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"k8s-wiretap: {bad}: not a k8s-wiretap recording (no header line)"
    ]
    assert not har.exists()


def test_overwritten_outputs_are_0600_and_symlinks_are_not_followed(tmp_path: Path) -> None:
    """An OUT replaced with --overwrite is a new file, 0600, whatever the old one's mode; a
    symlink there is removed, never written through."""
    har, markdown, otlp = tmp_path / "out.har", tmp_path / "out.md", tmp_path / "out.otlp"
    for path in (har, markdown, otlp):
        path.write_text("old")
        path.chmod(0o644)
    argv = ("--har", str(har), "--markdown", str(markdown), "--otlp", str(otlp))
    result = _cli("export", str(STORY), *argv, "--overwrite")
    assert result.returncode == 0, result.stderr
    for path in (har, markdown, otlp):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() != "old"
    target = tmp_path / "target.txt"
    target.write_text("not yours")
    for path in (har, markdown, otlp):
        path.unlink()
        path.symlink_to(target)
    result = _cli("export", str(STORY), *argv, "--overwrite")
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "not yours"
    for path in (har, markdown, otlp):
        assert not path.is_symlink() and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_recording_is_never_its_own_output(tmp_path: Path) -> None:
    recording = tmp_path / "r.jsonl.gz"
    recording.write_bytes(STORY.read_bytes())
    for option in ("--har", "--markdown", "--otlp"):
        result = _cli("export", str(recording), option, str(recording), "--overwrite")
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            f"k8s-wiretap: export: {option} {recording} is the recording"
        ]
        assert recording.read_bytes() == STORY.read_bytes()
