"""`k8s-wiretap replay FILE`: open a recording in the TUI (`views/tui/`).

A file that is not a recording this version reads is refused before the screen opens,
in one line, as `explain` refuses it; one that turns out bad further in (corrupt gzip
data) closes the TUI with the same one line.

A recording still being written is followed like `tail -f` (`--follow`; by default when,
read to its end, it has exchanges still open and was written to in the last minute:
`views/tui/listing/follow.py`). `--speed X` plays it back on its own clock instead
(`views/tui/live/playback.py`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import RecordingError, iter_records
from k8s_wiretap.commands.bundled import recording_path
from k8s_wiretap.errors import UsageError

__all__ = ["add_theme_option", "register"]


def register(subparsers: Any) -> None:
    replay = subparsers.add_parser(
        "replay",
        help="open a recording in the TUI: the exchange list, each exchange explained",
        description="Browse a recording: every exchange in a list (time, component, verb, "
        "resource, name, status, duration, size, events, summary), filtered with / "
        "(~c scheduler ~v patch !~r leases), and the selected one explained in tabs "
        "(Explain, Request, Response, Patch, Events). ? lists the keys.",
    )
    replay.add_argument("recording", type=recording_path)
    follow = replay.add_mutually_exclusive_group()
    follow.add_argument(
        "--follow",
        action="store_true",
        default=None,
        help="read on as the file grows, like tail -f (default: when it has exchanges "
        "still open and was written to in the last minute)",
    )
    follow.add_argument(
        "--no-follow", dest="follow", action="store_false", help="read the file as it is"
    )
    follow.add_argument(
        "--speed",
        type=_speed,
        default=None,
        metavar="X",
        help="play it back on its own clock at X times recording time (1, 2, 0.5...; "
        "p pauses, . steps, ] and [ change the speed)",
    )
    add_theme_option(replay)
    replay.set_defaults(handler=_replay)


def add_theme_option(parser: argparse.ArgumentParser) -> None:
    """`--theme`, as `replay`, `walkthrough` and `serve` take it."""
    from k8s_wiretap.views.tui.themes import DARK, THEMES, theme_option

    parser.add_argument(
        "--theme",
        type=theme_option,
        default=DARK,
        metavar="|".join(THEMES),
        help=f"the colours to start with (default {DARK}; t changes them)",
    )


def _speed(value: str) -> float:
    try:
        speed = float(value)
    except ValueError:
        speed = 0.0
    if not 0 < speed <= 1000:
        raise argparse.ArgumentTypeError(f"{value!r}: a speed such as 1, 2 or 0.5")
    return speed


def _check(path: Path) -> None:
    """RecordingError unless `path` starts like a recording this version reads."""
    next(iter(iter_records(path, [])), None)


def _replay(args: argparse.Namespace) -> int:
    from k8s_wiretap.views.tui import ReplayApp  # Textual loads only for this command

    _check(args.recording)
    if args.speed is not None:
        return _play(args.recording, args.speed, args.theme)
    app = ReplayApp(args.recording, follow=args.follow, theme=args.theme)
    app.run()
    if app.error is not None:
        raise RecordingError(app.error)
    return app.return_code or 0


def _play(path: Path, speed: float, theme: str) -> int:
    from rich.markup import escape

    from k8s_wiretap.views.tui import ReplayApp
    from k8s_wiretap.views.tui.live.merge import shown
    from k8s_wiretap.views.tui.live.playback import Player

    merged = shown(path, None)  # a recording in parts (`proxy --workers`) plays merged
    try:
        if merged.merger is not None:
            merged.merger.wait()
        player = Player(merged.path, speed)
    except OSError as error:
        merged.close()
        raise UsageError(f"cannot play {path}: {error}") from error
    try:
        label = f"[bold]k8s-wiretap replay[/] {escape(path.name)}"
        app = ReplayApp(
            player.path, writer=lambda: player.playing, playback=player, label=label, theme=theme
        )
        player.run()
        app.run()
    finally:
        player.close()
        merged.close()
    if app.error is not None:
        raise RecordingError(app.error)
    return app.return_code or 0
