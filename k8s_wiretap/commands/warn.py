"""The one way a command warns: `k8s-wiretap: warning: MESSAGE` on stderr, one line.

A warning is something the user should know that does not stop the command (a line of a
recording that was skipped, a listener reachable from other machines). Its message may
quote what a recording or a file holds, so its control characters are escaped
(`wire.controls.escape_controls`, a line break included): a warning is always one line
and nothing in it acts on the terminal. Errors that stop a command are raised as
`errors.WiretapError` and said by `cli.main` instead.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from k8s_wiretap.wire.controls import escape_controls

__all__ = ["PREFIX", "warn", "warn_all"]

PREFIX = "k8s-wiretap: warning: "


def warn(message: str) -> None:
    """Say `message` on stderr as a warning, one line, flushed at once (a warning that
    comes before a long run is seen before it)."""
    print(PREFIX + escape_controls(message), file=sys.stderr, flush=True)


def warn_all(messages: Iterable[str]) -> None:
    """`warn` each of `messages` once, in order (a repeated one is said once)."""
    for message in dict.fromkeys(messages):
        warn(message)
