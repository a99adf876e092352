"""`k8s-wiretap replay FILE` on files that are not recordings: one line, no traceback."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest

from k8s_wiretap.views.tui import ReplayApp
from tests.conftest import cli
from tests.recorded import STORY


def newer(tmp_path: Path) -> Path:
    path = tmp_path / "newer.jsonl"
    header = {"record": "header", "format": "k8s-wiretap-recording", "version": 2}
    path.write_text(json.dumps(header) + "\n")
    return path


def text(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\n")
    return path


def truncated(tmp_path: Path) -> Path:
    path = tmp_path / "truncated.jsonl.gz"
    path.write_bytes(STORY.read_bytes()[:40])
    return path


def missing(tmp_path: Path) -> Path:
    return tmp_path / "nothing-here.jsonl"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (newer, "k8s-wiretap-recording version 2 is not k8s-wiretap-recording version 1"),
        (text, "not a k8s-wiretap recording (no header line)"),
        (truncated, "not a k8s-wiretap recording (no header line)"),
        (missing, "cannot read"),
    ],
)
def test_a_bad_file_is_one_line_and_status_1(tmp_path: Path, make: object, said: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    result = cli("replay", str(path))
    assert result.returncode == 1
    assert result.stderr.startswith("k8s-wiretap: ") and said in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_corrupt_data_further_in_closes_the_tui_saying_why(tmp_path: Path) -> None:
    data = gzip.decompress(STORY.read_bytes())
    packed = bytearray(gzip.compress(data))
    packed[len(packed) // 2 : len(packed) // 2 + 64] = bytes(64)
    path = tmp_path / "corrupt.jsonl.gz"
    path.write_bytes(bytes(packed))

    async def main() -> ReplayApp:
        app = ReplayApp(path, explain=False)
        async with app.run_test() as pilot:
            for _ in range(200):
                await pilot.pause(0.05)
                if not app.is_running:
                    break
        return app

    app = asyncio.run(main())
    assert app.return_code == 1
    assert app.error is not None and "corrupt gzip data" in app.error
