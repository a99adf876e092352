"""Your own keys: keys.yaml maps binding ids to keys; a bad file is one line, no app."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.keymap import KEYS_ENV
from tests.conftest import cli
from tests.recorded import STORY
from tests.views.tui.pilot import settle


def test_a_remapped_key_moves_the_cursor_and_the_old_one_no_longer_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = tmp_path / "keys.yaml"
    keys.write_text("list.down: ctrl+n, x\n")
    monkeypatch.setenv(KEYS_ENV, str(keys))

    async def main() -> None:
        app = ReplayApp(STORY)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            rows = app.exchange_list
            await pilot.press("ctrl+n", "x")
            assert rows.cursor == 2
            await pilot.press("j")  # list.down's own key, remapped away
            assert rows.cursor == 2

    asyncio.run(main())


def test_the_default_file_is_read_from_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEYS_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "k8s-wiretap").mkdir()
    (tmp_path / "k8s-wiretap" / "keys.yaml").write_text("app.quit: ctrl+q\n")
    assert ReplayApp(STORY)._user_keys == {"app.quit": "ctrl+q"}
    (tmp_path / "k8s-wiretap" / "keys.yaml").unlink()
    assert ReplayApp(STORY)._user_keys == {}  # no file: no keymap


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("app.quitt: ctrl+q\n", "no binding has the id 'app.quitt'"),
        ("- app.quit\n", "not a mapping of binding ids to keys"),
        ("app.quit: [ctrl+q\n", "cannot read it"),
    ],
)
def test_a_bad_keys_file_is_refused_in_one_line(tmp_path: Path, text: str, said: str) -> None:
    keys = tmp_path / "keys.yaml"
    keys.write_text(text)
    done = cli("replay", str(STORY), env={**os.environ, KEYS_ENV: str(keys)})
    assert done.returncode == 1
    line, *more = done.stderr.splitlines()
    assert not more and said in line and line.startswith("k8s-wiretap: ")
