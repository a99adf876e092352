"""Following a recording as it is written: the test appends the committed story's records
to a file while the app follows it, as the proxy's recorder would (in bursts)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from k8s_wiretap.explain import stream
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.listing.follow import AutoFollow, Changed, FileChanged, chunks, lines
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from tests.recorded import STORY, story_records
from tests.views.tui.pilot import until
from tests.views.tui.test_app import status

LINES = gzip.decompress(STORY.read_bytes()).splitlines(keepends=True)


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def requests_in(data: list[bytes]) -> int:
    return sum(b'"record":"request"' in line for line in data)


def run(path: Path, script: Callable[[ReplayApp, Pilot[int]], object], **options: object) -> None:
    async def main() -> None:
        app = ReplayApp(path, **options)  # type: ignore[arg-type]
        async with app.run_test(size=(120, 40)) as pilot:
            await script(app, pilot)  # type: ignore[misc]

    asyncio.run(main())


def test_rows_grow_as_records_are_appended_and_the_list_follows_the_end(tmp_path: Path) -> None:
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"".join(LINES[:300]))

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        rows = app.exchange_list
        first = requests_in(LINES[1:300])
        await until(pilot, lambda: app.follow_mode.active and len(app.index) == first, "rows")
        assert not app.index.done and rows.cursor == rows.count - 1  # at the end, following
        for start in range(300, 900, 100):  # bursts, as the recorder writes them
            append(path, b"".join(LINES[start : start + 100]))
        await until(pilot, lambda: len(app.index) == requests_in(LINES[1:900]), "more rows")
        await until(pilot, lambda: rows.cursor == rows.count - 1, "the cursor at the end")
        assert "following" in str(app._title_bar.render())
        await pilot.press("k", "k")
        before = rows.count
        assert not app.follow_mode.following and rows.cursor == before - 3
        append(path, b"".join(LINES[900:1500]))
        grown = requests_in(LINES[1:1500])
        await until(pilot, lambda: len(app.index) == grown, "rows while not following")
        assert rows.cursor == before - 3  # the list stayed where the user put it
        # the title bar is refreshed after the index grows (its own message): wait for it
        await until(pilot, lambda: f"{grown - before} new" in str(app._title_bar.render()), "N new")
        assert "F follows" in str(app._title_bar.render())
        await pilot.press("F")
        assert app.follow_mode.following and rows.cursor == rows.count - 1
        assert "new" not in str(app._title_bar.render())

    run(path, script, follow=True)


def test_a_partial_last_line_is_waited_for_never_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "partial.jsonl"
    request = next(n for n, line in enumerate(LINES) if n > 50 and b'"request"' in line)
    path.write_bytes(b"".join(LINES[:request]) + LINES[request][:40])

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        shown = requests_in(LINES[1:request])
        await until(pilot, lambda: app.follow_mode.active and len(app.index) == shown, "rows")
        await pilot.pause(0.3)  # several looks at the end
        assert len(app.index) == shown and not app.index.warnings
        append(path, LINES[request][40:])
        await until(pilot, lambda: len(app.index) == shown + 1, "the completed line's row")
        assert not app.index.warnings

    run(path, script, follow=True)


def test_a_watch_grows_as_its_events_arrive_count_and_events_tab(tmp_path: Path) -> None:
    records = story_records()
    counts: dict[str, int] = {}
    for record in records:
        if record["record"] == "event":
            counts[record["id"]] = counts.get(record["id"], 0) + 1
    watch = max(counts, key=lambda i: counts[i])
    own = [json.dumps(r).encode() + b"\n" for r in records if r.get("id") == watch]
    opening = [line for line in own if b'"event"' not in line and b'"end"' not in line]
    events = [line for line in own if b'"record": "event"' in line]
    path = tmp_path / "watch.jsonl"
    path.write_bytes(LINES[0] + b"".join(opening) + b"".join(events[:2]))

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: app.follow_mode.active and len(app.index) == 1, "the watch")
        row = app.index.rows[0]
        assert row.watch and row.events == 2 and row.ended is None
        await until(pilot, lambda: app.detail_pane.detail is not None, "the watch's detail")
        assert app.detail_pane.detail is not None
        assert len(app.detail_pane.detail.events) == 2
        app.detail_pane.active = "events"
        append(path, b"".join(events[2:6]))
        await until(pilot, lambda: app.index.rows[0].events == 6, "four more events in the row")

        def events_shown() -> int:
            detail = app.detail_pane.detail
            return len(detail.events) if detail is not None else 0

        await until(pilot, lambda: events_shown() == 6, "the Events tab to grow")
        assert app.detail_pane.active == "events"

    run(path, script, follow=True)


def test_automatic_follow_only_for_a_recording_still_written(tmp_path: Path) -> None:
    path = tmp_path / "open.jsonl"
    path.write_bytes(b"".join(LINES[:300]))  # exchanges still open
    index = RecordingIndex(path)
    index.scan()
    assert index.open > 0
    assert AutoFollow(path, lambda: index.open)()  # written to just now
    old = time.time() - 3600
    os.utime(path, (old, old))
    assert not AutoFollow(path, lambda: index.open)()  # a crashed proxy's, long ago
    index.close()
    done = RecordingIndex(STORY)
    done.scan()
    assert done.open == 0  # a complete recording: every exchange ended
    assert not AutoFollow(STORY, lambda: done.open)()
    done.close()


def test_lines_wait_for_the_newline_and_say_when_they_caught_up(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"one\ntw")
    looks = iter([True, False])
    with path.open("rb") as handle:
        read = lines(chunks(handle, lambda: next(looks), poll=0))
        assert next(read) == (0, b"one\n")
        assert next(read) == (6, b"")  # caught up: "tw" waits for its newline
        append(path, b"o\n")
        assert next(read) == (4, b"two\n")
        assert list(read) == []  # at the end again, and following has stopped


def test_a_quiet_recording_still_gets_its_last_summaries(tmp_path: Path, monkeypatch: Any) -> None:
    """An exchange is explained once `LOOKAHEAD` seconds of the recording have passed it;
    while nothing is written, the follower's clock says they have (live: the proxy quiet
    after a kubectl apply), not only the next record."""
    monkeypatch.setattr(stream, "LOOKAHEAD", 1.0)
    path = tmp_path / "quiet.jsonl"
    path.write_bytes(b"".join(LINES[:300]))

    def explained_all_ended(app: ReplayApp) -> bool:
        ended = [row for row in app.index.rows if row.ended is not None]
        return bool(ended) and all(row.summary for row in ended)

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.index) == requests_in(LINES[1:300]), "rows")
        await until(pilot, lambda: explained_all_ended(app), "every ended row's summary")
        last = max((row for row in app.index.rows if row.ended is not None), key=lambda r: r.time)
        assert last.summary  # within a second of the recording's last record: no record after

    run(path, script, follow=True)


def test_a_truncated_or_replaced_file_is_noticed_a_removed_one_followed(tmp_path: Path) -> None:
    path = tmp_path / "changing.jsonl"
    path.write_bytes(b"one\ntwo\n")
    with path.open("rb") as handle:
        read = chunks(handle, lambda: True, poll=0, changed=Changed(path, handle))
        assert next(read) == b"one\ntwo\n" and next(read) == b""  # caught up, unchanged
        path.unlink()  # removed: what its writer adds still comes
        assert next(read) == b""
    path.write_bytes(b"one\ntwo\n")
    with path.open("rb") as handle:
        read = chunks(handle, lambda: True, poll=0, changed=Changed(path, handle))
        assert next(read) == b"one\ntwo\n"
        os.truncate(path, 3)
        with pytest.raises(FileChanged, match=r"^changing.jsonl was truncated to 3 bytes$"):
            next(read)
    with path.open("rb") as handle:
        read = chunks(handle, lambda: True, poll=0, changed=Changed(path, handle))
        assert next(read) == b"one"
        other = tmp_path / "other.jsonl"
        other.write_bytes(b"one\ntwo\n")
        os.replace(other, path)
        with pytest.raises(FileChanged, match=r"^changing.jsonl was replaced by another file$"):
            next(read)


def shown_detail(app: ReplayApp) -> bool:
    detail = app.detail_pane.detail
    return detail is not None and detail.position == app.exchange_list.selected


def failed(app: ReplayApp) -> str:
    said = str(app.detail_pane.body("explain").content)
    return said[: said.index(" at") + 3] if "no longer has" in said else ""


@pytest.mark.parametrize("how", ["truncated", "replaced"])
def test_a_followed_file_truncated_or_replaced_says_so_and_keeps_its_rows(
    tmp_path: Path, how: str
) -> None:
    path = tmp_path / "growing.jsonl"
    written = b"".join(LINES[:300])
    path.write_bytes(written)

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        shown = requests_in(LINES[1:300])
        await until(pilot, lambda: app.follow_mode.active and len(app.index) == shown, "rows")
        if how == "truncated":
            os.truncate(path, 0)  # `> growing.jsonl`
        else:
            again = tmp_path / "again.jsonl"
            again.write_bytes(b"".join(LINES[:10]))
            os.replace(again, path)  # `mv again.jsonl growing.jsonl`
        await until(pilot, lambda: app.index.done, "the change noticed")
        await pilot.pause()
        said = status(app)
        cause = {
            "truncated": "growing.jsonl was truncated to 0 bytes",
            "replaced": "growing.jsonl was replaced by another file",
        }[how]
        assert said.startswith(f"{cause}: following stopped, {shown} exchanges kept  ·  ")
        assert len(app.index) == app.exchange_list.count == shown and app.is_running
        assert not app.follow_mode.active and "following" not in str(app._title_bar.render())
        assert not app.index.warnings  # the half line at the end is not called a bad record
        await pilot.press("k")
        await until(pilot, lambda: shown_detail(app) or bool(failed(app)), "the detail")
        if how == "truncated":  # its records are gone: said so, in the pane
            assert failed(app) == "cannot explain it: growing.jsonl no longer has the record at"
        else:  # the file read is still open: its records are still there
            assert shown_detail(app)

    run(path, script, follow=True)


def test_following_survives_rows_indexed_before_the_cursors_message(tmp_path: Path) -> None:
    """The index grows in its worker thread while the app's messages wait: the message of
    the cursor that following put on the last row may come after the worker took more rows
    (the list counts them already). That cursor is still following: the next Indexed
    moves it to the new end."""
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"".join(LINES[:300]))

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        rows = app.exchange_list
        first = requests_in(LINES[1:300])
        await until(pilot, lambda: app.follow_mode.active and len(app.index) == first, "rows")
        assert app.follow_mode.following and rows.cursor == rows.count - 1
        append(path, b"".join(LINES[300:600]))
        deadline = time.monotonic() + 30
        while len(app.index) < requests_in(LINES[1:600]):  # the loop held: no message runs
            assert time.monotonic() < deadline, "the index worker took no rows"
            time.sleep(0.01)
        app.follow_mode.moved(rows)  # the cursor's own message, come before the Indexed one
        assert app.follow_mode.following
        await until(pilot, lambda: rows.cursor == rows.count - 1, "the cursor at the new end")

    run(path, script, follow=True)
