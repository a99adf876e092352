"""`k8s-wiretap replay FILE`: open a recording in the TUI (`views/tui/`).

A file that is not a recording this version reads is refused before the screen opens,
in one line, as `explain` refuses it; one that turns out bad further in (corrupt gzip
data) closes the TUI with the same one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import RecordingError, iter_records

__all__ = ["register"]


def register(subparsers: Any) -> None:
    replay = subparsers.add_parser(
        "replay",
        help="open a recording in the TUI: the exchange list, each exchange explained",
        description="Browse a recording: every exchange in a list (time, component, verb, "
        "resource, name, status, duration, size, events, summary), filtered with / "
        "(~c scheduler ~v patch !~r leases), and the selected one explained in tabs "
        "(Explain, Request, Response, Patch, Events). ? lists the keys.",
    )
    replay.add_argument("recording", type=Path)
    replay.set_defaults(handler=_replay)


def _check(path: Path) -> None:
    """RecordingError unless `path` starts like a recording this version reads."""
    next(iter(iter_records(path, [])), None)


def _replay(args: argparse.Namespace) -> int:
    from k8s_wiretap.views.tui import ReplayApp  # Textual loads only for this command

    _check(args.recording)
    app = ReplayApp(args.recording)
    app.run()
    if app.error is not None:
        raise RecordingError(app.error)
    return app.return_code or 0
