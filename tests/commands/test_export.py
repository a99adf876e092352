"""An export's OUT appears only once whole: onto a full disk (EFBIG under RLIMIT_FSIZE)
`--har`, `--otlp`, `--markdown` and `--svg` each say so in one line, exit 1, and leave no
OUT and no temporary beside it; an OUT `--overwrite` would have replaced is kept as it was;
SIGTERM mid-export leaves nothing either, said in one line (exit 143)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.commands.faults import audit_log, limited
from tests.conftest import cli, wait_until


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of 300 exchanges: its HAR, OTLP and Markdown are 20 KB or more."""
    folder = tmp_path_factory.mktemp("recording")
    out = folder / "rec.jsonl"
    done = cli("import", "audit", str(audit_log(folder / "audit.log.gz", 300)), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize(
    ("option", "fsize"),
    [("--har", 10_000), ("--otlp", 10_000), ("--markdown", 10_000), ("--svg", 1_000)],
)
def test_a_full_disk_leaves_no_output_and_says_one_line(
    recording: Path, tmp_path: Path, option: str, fsize: int
) -> None:
    out = tmp_path / "out" / "exported"
    out.parent.mkdir()
    done = limited("export", str(recording), option, str(out), fsize=fsize)
    assert done.returncode == 1
    said = f"k8s-wiretap: export: {option} {out}: File too large ({out} not written)"
    assert done.stderr.splitlines()[-1] == said
    assert "Traceback" not in done.stderr
    left = sorted(p.name for p in out.parent.iterdir())
    assert left == (["exported-chain.svg", "exported-map.svg"] if option == "--markdown" else [])


def test_a_full_disk_keeps_the_file_overwrite_would_have_replaced(
    recording: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mine.har"
    out.write_text("my own HAR\n")
    done = limited("export", str(recording), "--har", str(out), "--overwrite", fsize=10_000)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert out.read_text() == "my own HAR\n"
    assert [p.name for p in tmp_path.iterdir()] == ["mine.har"]


def test_sigterm_mid_export_leaves_no_output_and_says_one_line(tmp_path: Path) -> None:
    source = tmp_path / "rec.jsonl"
    made = cli("import", "audit", str(audit_log(tmp_path / "a.log.gz", 5_000)), "-o", str(source))
    assert made.returncode == 0, made.stderr
    out = tmp_path / "out" / "trace.har"
    out.parent.mkdir()
    exporting = subprocess.Popen(
        [sys.executable, "-m", "k8s_wiretap", "export", str(source), "--har", str(out)],
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(lambda: any(out.parent.iterdir()), 60, "the export to start writing")
    exporting.send_signal(signal.SIGSTOP)  # cut here, mid-way (5,000 entries to write)
    exporting.send_signal(signal.SIGTERM)
    exporting.send_signal(signal.SIGCONT)
    _, said = exporting.communicate(timeout=60)
    assert exporting.returncode == 143
    assert said.splitlines() == [
        "k8s-wiretap: export: stopped by SIGTERM: the OUT it was writing was not made"
    ]
    assert list(out.parent.iterdir()) == []
