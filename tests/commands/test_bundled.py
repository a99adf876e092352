"""The bundled recordings by name, and the mitmproxy scripts' paths: what a person who
installed the tool (no `recordings/`, no `addons/` folder) reaches from any folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from k8s_wiretap.cli import build_parser
from k8s_wiretap.paths import ADDONS, RECORDINGS
from tests.conftest import cli

ROOT = Path(__file__).resolve().parents[2]

# Every command that reads a recording (or an audit log), with its other arguments.
READERS = [
    ["explain", "{}"],
    ["export", "{}", "--lines", "-"],
    ["history", "{}", "deploy/web"],
    ["replay", "{}"],
    ["serve", "replay", "{}"],
    ["import", "audit", "{}", "-o", "out.jsonl"],
]


def _parsed(argv: list[str], name: str) -> Path:
    words = [word.format(name) for word in argv]
    args = build_parser(words).parse_args(words)
    found: Path = args.logs[0] if argv[0] == "import" else args.recording
    return found


@pytest.mark.parametrize("argv", READERS, ids=lambda argv: " ".join(argv[:2]))
def test_a_bundled_recording_is_found_by_name_from_any_folder(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _parsed(argv, "wide-session") == RECORDINGS / "wide-session.jsonl.gz"
    assert _parsed(argv, "apply-story.jsonl.gz") == RECORDINGS / "apply-story.jsonl.gz"
    audit = RECORDINGS / "wide-session.audit.log.gz"
    assert _parsed(argv, "wide-session.audit.log.gz") == audit
    assert _parsed(argv, "no-such-recording") == Path("no-such-recording")  # said missing later
    assert _parsed(argv, "sub/wide-session") == Path("sub/wide-session")  # a path, not a name


@pytest.mark.parametrize("argv", READERS, ids=lambda argv: " ".join(argv[:2]))
def test_a_real_file_of_that_name_wins(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wide-session").write_text("")
    assert _parsed(argv, "wide-session") == Path("wide-session")


def test_explain_by_name_tells_the_bundled_recording(tmp_path: Path) -> None:
    """From a folder with no recordings/ in it, as after `pipx install`."""
    by_name = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "explain", "apply-story", "--format", "lines"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    by_path = cli("explain", str(ROOT / "recordings" / "apply-story.jsonl.gz"), "--format", "lines")
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout == by_path.stdout and "PATCH" in by_name.stdout


def test_recordings_lists_each_bundled_one_with_its_full_path() -> None:
    done = cli("recordings")
    assert done.returncode == 0, done.stderr
    listed = dict(line.split() for line in done.stdout.splitlines())
    bundled = sorted(
        path.name
        for path in RECORDINGS.iterdir()
        if path.name.endswith((".jsonl.gz", ".audit.log.gz"))
    )
    assert sorted(Path(path).name for path in listed.values()) == bundled
    assert all(Path(path).is_absolute() and Path(path).is_file() for path in listed.values())
    for name, path in listed.items():  # each name is one every reader accepts
        assert _parsed(["explain", "{}"], name) == Path(path)


@pytest.mark.parametrize(
    ("argv", "script"),
    [
        (["--path"], "wiretap"),
        (["wiretap", "--path"], "wiretap"),
        (["--path", "contentview"], "contentview"),
    ],
)
def test_addon_path_prints_the_installed_script(argv: list[str], script: str) -> None:
    done = cli("addon", *argv)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{ADDONS / f'{script}.py'}\n"
    assert (ADDONS / f"{script}.py").read_text() == (ROOT / "addons" / f"{script}.py").read_text()


def test_addon_without_path_says_what_each_script_does() -> None:
    done = cli("addon")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [
        str(ADDONS / "wiretap.py"),
        str(ADDONS / "contentview.py"),
    ]
    assert "records" in lines[0] and "decoded" in lines[1]
