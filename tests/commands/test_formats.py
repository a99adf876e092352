"""The output registry: every format of FORMATS made from a committed recording, to a file
and (where it may go there) to stdout, by the same writer; one file rule for all of them;
the commands' options and help made from the table."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import pytest

from k8s_wiretap.commands import formats
from k8s_wiretap.commands.formats import FORMATS, Format, Job
from k8s_wiretap.errors import UsageError
from tests.conftest import cli
from tests.recorded import STORY, story


def _story(data: bytes) -> None:
    assert "kubectl apply" in data.decode()


def _markdown(data: bytes) -> None:
    text = data.decode()
    assert text.startswith("![Who talks to whom](") and "\n## kubectl" in text


def _lines(data: bytes) -> None:
    assert len(data.decode().splitlines()) == len(story().exchanges)


def _json(data: bytes) -> None:
    objects = [json.loads(line) for line in data.splitlines()]
    assert len(objects) == len(story().exchanges)


def _har(data: bytes) -> None:
    assert len(json.loads(data)["log"]["entries"]) == len(story().exchanges)


def _otlp(data: bytes) -> None:
    requests = [json.loads(line) for line in data.splitlines()]
    scopes = [s for r in requests for rs in r["resourceSpans"] for s in rs["scopeSpans"]]
    assert sum(len(scope["spans"]) for scope in scopes) == len(story().exchanges)


def _svg(data: bytes) -> None:
    assert ElementTree.fromstring(data).tag == "{http://www.w3.org/2000/svg}svg"


def _png(data: bytes) -> None:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


# What each format's output is checked to be; a format without a check fails the test below.
CHECKS: dict[str, Callable[[bytes], None]] = {
    "story": _story,
    "markdown": _markdown,
    "lines": _lines,
    "json": _json,
    "har": _har,
    "otlp": _otlp,
    "svg": _svg,
    "png": _png,
}
NEEDS_CHROMIUM = pytest.mark.lab  # renders with the real Chromium (`make chromium`)


def _each(kept: Callable[[Format], bool] = lambda fmt: True) -> list[object]:
    """The formats `kept` keeps as parameters, PNG's marked as needing Chromium."""
    return [
        pytest.param(fmt, id=fmt.name, marks=[NEEDS_CHROMIUM] if fmt.name == "png" else [])
        for fmt in FORMATS
        if kept(fmt)
    ]


def _stdout(fmt: Format, job: Job, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """What `emit` writes to stdout."""
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, "utf-8"))
    formats.emit(fmt, job)
    return raw.getvalue()


def test_every_format_has_a_check() -> None:
    assert sorted(CHECKS) == sorted(fmt.name for fmt in FORMATS)


@pytest.mark.parametrize("fmt", _each())
def test_every_format_is_written_whole_to_a_file_0600(fmt: Format, tmp_path: Path) -> None:
    out = tmp_path / f"out.{fmt.name}"
    job = Job(STORY, out, label=f"export: --{fmt.name}")
    formats.check(fmt, job)
    formats.emit(fmt, job)
    CHECKS[fmt.name](out.read_bytes())
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    beside = sorted(p.name for p in tmp_path.iterdir() if p != out)
    assert beside == sorted(p.name for p in fmt.beside(out))  # no temporary left


@pytest.mark.parametrize("fmt", _each(lambda fmt: fmt.stdout))
def test_a_format_on_stdout_is_what_its_file_holds(
    fmt: Format, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    printed = _stdout(fmt, Job(STORY), monkeypatch)
    CHECKS[fmt.name](printed)
    out = tmp_path / "out"
    formats.emit(fmt, Job(STORY, out))
    if fmt.name == "markdown":  # the file links the pictures beside it, stdout embeds them
        written = out.read_bytes()
        assert printed[printed.index(b"\n## ") :] == written[written.index(b"\n## ") :]
    elif fmt.name == "otlp":  # the same spans; their ids are random
        assert len(printed.splitlines()) == len(out.read_bytes().splitlines())
    else:
        assert printed == out.read_bytes()


def test_explain_prints_what_the_registry_writes(tmp_path: Path) -> None:
    out = tmp_path / "lines"
    formats.emit(formats.named("lines"), Job(STORY, out))
    printed = cli("explain", str(STORY), "--format", "lines")
    assert printed.returncode == 0 and printed.stderr == ""
    assert printed.stdout == out.read_text()


@pytest.mark.parametrize("fmt", _each())
def test_an_existing_file_is_replaced_only_with_overwrite(fmt: Format, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.write_text("mine")
    out.chmod(0o644)
    label = f"export: --{fmt.name}"
    with pytest.raises(UsageError) as refused:
        formats.check(fmt, Job(STORY, out, label=label))
    assert str(refused.value) == f"{label} {out} exists (--overwrite)"
    assert refused.value.exit_code == 2 and out.read_text() == "mine"
    job = Job(STORY, out, overwrite=True, label=label)
    formats.check(fmt, job)
    formats.emit(fmt, job)
    CHECKS[fmt.name](out.read_bytes())
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


@pytest.mark.parametrize("fmt", _each())
def test_the_recording_is_never_an_output(fmt: Format, tmp_path: Path) -> None:
    recording = tmp_path / "r.jsonl.gz"
    recording.write_bytes(STORY.read_bytes())
    label = f"export: --{fmt.name}"
    with pytest.raises(UsageError, match=f"^{label} {recording} is the recording$"):
        formats.check(fmt, Job(recording, recording, overwrite=True, label=label))
    assert recording.read_bytes() == STORY.read_bytes()


@pytest.mark.parametrize("fmt", _each())
def test_stdout_is_for_the_formats_that_may_go_there(fmt: Format, tmp_path: Path) -> None:
    done = cli("export", str(STORY), f"--{fmt.name}", "-")
    if fmt.stdout:
        assert done.returncode == 0, done.stderr
        CHECKS[fmt.name](done.stdout.encode())
        assert not Path("-").exists()
    else:
        assert done.returncode == 2
        assert done.stderr == f"k8s-wiretap: export: --{fmt.name} writes to a file, not stdout\n"


def test_help_lists_every_format() -> None:
    wide = {**os.environ, "COLUMNS": "1000"}  # argparse breaks no line, nor OUT-map.svg
    export = cli("export", "--help", env=wide).stdout
    flat = " ".join(export.split())
    for fmt in FORMATS:
        assert f"--{fmt.name} OUT" in export
        assert " ".join(fmt.help.split()) in flat
    explain = " ".join(cli("explain", "--help", env=wide).stdout.split())
    names = [fmt.name for fmt in FORMATS if fmt.stdout]
    assert f"--format {{{','.join(names)}}}" in explain
    for fmt in FORMATS:
        assert (f"{fmt.name}: {' '.join(fmt.help.split())}" in explain) == fmt.stdout
