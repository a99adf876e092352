"""`k8s-wiretap walkthrough [NAME]`: a recording's story, step by step, in the replay TUI.

NAME is a walkthrough beside the bundled recordings (`NAME.walkthrough.yaml`, default
`apply-story`: kubectl apply on the default release's recording); `--list` lists them. The TUI opens
with its narration (`views/tui/walkthrough/narration_panel.py`): → or space the next step,
← the one before, esc leaves it for the plain replay. When stdout is not a terminal (a
pipe, a log, CI) the TUI is not started: every step's narration is printed as text
instead, as `--text` asks, so that nothing waits for a key no one can press. A Textual
driver named in the environment (`TEXTUAL_DRIVER`: textual-serve's web page, `serve
walkthrough`) is a screen, pipes or not.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import RecordingError
from k8s_wiretap.commands.replay import add_theme_option
from k8s_wiretap.commands.warn import warn_all
from k8s_wiretap.errors import UsageError
from k8s_wiretap.views.tui.walkthrough.chapters import (
    DEFAULT,
    RECORDINGS,
    Walkthrough,
    load,
    names,
)
from k8s_wiretap.wire.words import counted

__all__ = ["interactive", "register", "run_walkthrough"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "walkthrough",
        help="step through a recording's story with narration (default: the kubectl apply story)",
        description="The story of a recording, step by step: each chapter selects its "
        "exchange in the replay TUI and narrates it (→/space next, ← back, esc leaves). "
        "Without a terminal, the narration is printed as text.",
    )
    parser.add_argument(
        "name", nargs="?", default=DEFAULT, help=f"which walkthrough (default {DEFAULT})"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=RECORDINGS,
        help="where the walkthroughs and their recordings are (default: the bundled ones)",
    )
    parser.add_argument(
        "--text", action="store_true", help="print the narration, do not open the TUI"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the walkthroughs: name, title, recording"
    )
    add_theme_option(parser)
    parser.set_defaults(handler=_walkthrough)


def _walkthrough(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args.dir)
    walkthrough = load(args.name, args.dir)
    return run_walkthrough(walkthrough, text=args.text or not interactive(), theme=args.theme)


def interactive() -> bool:
    """Whether someone can see the TUI: a terminal, or a Textual driver of its own."""
    return sys.stdout.isatty() or bool(os.environ.get("TEXTUAL_DRIVER"))


def _list(folder: Path) -> int:
    """Each walkthrough of `folder`, a line each: its name, title and chapters, and the
    recording it walks through."""
    found = names(folder)
    if not found:
        raise UsageError(f"no walkthroughs in {folder}")
    width = max(len(name) for name in found)
    for name in found:
        spec = load(name, folder)
        count = len(spec.chapters)
        print(f"{name:<{width}}  {spec.title} ({counted(count, 'step')}, {spec.recording.name})")
    return 0


def run_walkthrough(
    walkthrough: Walkthrough, *, text: bool = False, theme: str | None = None
) -> int:
    if text:
        return _print(walkthrough)
    from k8s_wiretap.views.tui import ReplayApp  # Textual loads only for the TUI
    from k8s_wiretap.views.tui.themes import DARK

    app = ReplayApp(walkthrough.recording, walkthrough=walkthrough, theme=theme or DARK)
    app.run()
    if app.error is not None:
        raise RecordingError(app.error)
    return app.return_code or 0


def _print(walkthrough: Walkthrough) -> int:
    from k8s_wiretap.views.tui.listing.explaining import explain_rows
    from k8s_wiretap.views.tui.listing.index import RecordingIndex
    from k8s_wiretap.views.tui.listing.window import Windows
    from k8s_wiretap.views.tui.walkthrough.narration import write_text
    from k8s_wiretap.views.tui.walkthrough.steps import find_steps

    index = RecordingIndex(walkthrough.recording)
    try:
        index.scan()
        explain_rows(index, lambda _count: None)
        steps = find_steps(walkthrough, index, Windows(index))
    finally:
        index.close()
    warn_all(index.warnings)
    try:
        write_text(steps, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head` has read enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
