"""An import's OUT appears only once whole: a full disk (EFBIG under RLIMIT_FSIZE, ENOSPC
on a small tmpfs) is one line, exit 1, and leaves no OUT (an existing one as it was, no
temporary beside it); SIGTERM mid-import ends OUT with a note that it was cut, said in one
line (exit 143), and `explain` says it read a cut recording."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.commands.faults import audit_log, is_root, limited, tmpfs
from tests.conftest import cli, wait_until
from tests.recorded import STORY


def _only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_full_disk_leaves_no_output_and_says_one_line(tmp_path: Path) -> None:
    log = audit_log(tmp_path / "audit.log.gz", 5_000)
    out = tmp_path / "out" / "rec.jsonl"
    out.parent.mkdir()
    done = limited("import", "audit", str(log), "-o", str(out), fsize=200_000)
    assert done.returncode == 1
    assert (
        done.stderr == f"k8s-wiretap: import audit: -o {out}: File too large ({out} not written)\n"
    )
    assert _only(out.parent) == []


def test_a_full_disk_keeps_the_file_it_would_have_replaced(tmp_path: Path) -> None:
    log = audit_log(tmp_path / "audit.log.gz", 5_000)
    out = tmp_path / "out" / "rec.jsonl"
    out.parent.mkdir()
    out.write_text("the old recording\n")
    done = limited("import", "audit", str(log), "-o", str(out), "--overwrite", fsize=200_000)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert out.read_text() == "the old recording\n"
    assert _only(out.parent) == ["rec.jsonl"]


def test_a_har_import_onto_a_full_disk_leaves_nothing(tmp_path: Path) -> None:
    entry = {
        "startedDateTime": "2026-12-03T13:46:05.321Z",
        "time": 1,
        "request": {"method": "GET", "url": "https://k/api/v1/pods", "headers": []},
        "response": {"status": 200, "headers": [], "content": {"text": "x" * 1000}},
    }
    har = tmp_path / "in.har"
    har.write_text(json.dumps({"log": {"entries": [entry] * 500}}))
    out = tmp_path / "out" / "rec.jsonl"
    out.parent.mkdir()
    done = limited("import", "har", str(har), "-o", str(out), fsize=100_000)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"k8s-wiretap: import har: -o {out}: File too large ({out} not written)"
    ]
    assert _only(out.parent) == []


def test_a_join_onto_a_full_disk_leaves_nothing(tmp_path: Path) -> None:
    """The log's own exchanges (a few KB) fit; the joined recording (10 MB) does not."""
    log = audit_log(tmp_path / "audit.log.gz", 10)
    out = tmp_path / "out" / "joined.jsonl"
    out.parent.mkdir()
    join = ("--join", str(STORY))
    done = limited("import", "audit", str(log), *join, "-o", str(out), fsize=1_000_000)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"k8s-wiretap: import audit: -o {out}: File too large ({out} not written)"
    )
    assert _only(out.parent) == []


@pytest.mark.lab  # mounts a tmpfs: root only
def test_a_full_tmpfs_is_said_as_no_space_and_leaves_nothing(tmp_path: Path) -> None:
    if not is_root():
        pytest.skip("mounting a tmpfs needs root")
    log = audit_log(tmp_path / "audit.log.gz", 5_000)
    with tmpfs(tmp_path / "small", "256k") as disk:
        out = disk / "rec.jsonl"
        done = cli("import", "audit", str(log), "-o", str(out))
        assert done.returncode == 1
        assert done.stderr == (
            f"k8s-wiretap: import audit: -o {out}: No space left on device ({out} not written)\n"
        )
        assert _only(disk) == []


def test_sigterm_mid_import_ends_the_recording_with_a_note_that_explain_says(
    tmp_path: Path,
) -> None:
    log = audit_log(tmp_path / "audit.log.gz", 100_000)
    out = tmp_path / "out" / "rec.jsonl"
    out.parent.mkdir()
    importing = subprocess.Popen(
        [sys.executable, "-m", "k8s_wiretap", "import", "audit", str(log), "-o", str(out)],
        stderr=subprocess.PIPE,
        text=True,
    )

    def mid_way() -> bool:  # a megabyte written (the first flush), far from the end
        return any(p.stat().st_size > 1 << 20 for p in out.parent.iterdir())

    wait_until(mid_way, 60, "the import to write its first megabyte")
    assert not out.exists()  # not before it is whole (or cut, and said)
    importing.send_signal(signal.SIGSTOP)  # so that it is cut here, not thousands later
    importing.send_signal(signal.SIGTERM)
    importing.send_signal(signal.SIGCONT)
    _, said = importing.communicate(timeout=60)
    assert importing.returncode == 143
    [line] = said.splitlines()
    assert line.startswith(f"k8s-wiretap: import audit: stopped by SIGTERM: {out} holds the ")
    assert line.endswith(" exchanges written before, and ends with a note that it was cut")
    assert _only(out.parent) == ["rec.jsonl"]
    last = json.loads(out.read_bytes().splitlines()[-1])
    assert last["record"] == "note" and last["cut"] == "SIGTERM"
    requests = out.read_bytes().count(b'"record":"request"')
    assert 0 < requests < 100_000
    explaining = {
        form: subprocess.Popen(
            [sys.executable, "-m", "k8s_wiretap", "explain", str(out), "--format", form],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for form in ("story", "json")  # load() and the stream: lines and markdown are as story
    }
    for form, explained in explaining.items():
        _, warned = explained.communicate(timeout=60)
        assert explained.returncode == 0, warned
        cut = f"k8s-wiretap: warning: {out}: a cut recording: recording cut by SIGTERM: it holds"
        assert cut in warned, form
