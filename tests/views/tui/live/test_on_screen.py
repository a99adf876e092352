"""Live (a recording followed as the proxy writes it), the list shows each row's words as a
replay does: the rows on screen are explained at once, not only once the stream has seen
`explain.stream.LOOKAHEAD` seconds after them, nor, for a watch, once it ends."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

from k8s_wiretap.views.tui import ReplayApp
from tests.recorded import STORY
from tests.views.tui.pilot import until

LINES = gzip.decompress(STORY.read_bytes()).splitlines(keepends=True)


def test_the_rows_on_screen_have_their_words_while_followed(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(LINES[0])

    async def main() -> None:
        app = ReplayApp(path, writer=lambda: True)  # as `proxy` runs it: followed throughout
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.follow_mode.active, "following")
            with path.open("ab") as handle:
                handle.write(b"".join(LINES[1:120]))
            await until(pilot, lambda: len(app.index) > 30, "rows")
            rows = app.exchange_list

            def unexplained() -> list[int]:
                return [p for p in rows.on_screen() if not app.index.rows[p].summary]

            await until(pilot, lambda: not unexplained(), "every row on screen explained", 20)
            on_screen = rows.on_screen()
            watches = [p for p in on_screen if app.index.rows[p].ended is None]
            assert watches, "some watch on screen is still open"
            for line, position in enumerate(on_screen, start=1):  # line 0: the header
                summary = app.index.rows[position].summary
                assert summary[:24] in rows.render_line(line).text

    asyncio.run(main())
