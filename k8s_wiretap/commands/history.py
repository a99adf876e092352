"""`k8s-wiretap history RECORDING OBJECT [--field PATH]`: who changed an object, when, why.

The object is named as kubectl names it (`deploy/web -n default`, `deployments/default/web`,
`node/node-1`, a custom resource by its kind or plural); the recording is read as a stream,
in bounded memory (`explain/objects.history_streamed` turns its exchanges around, into the
object's versions).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.commands.bundled import recording_path
from k8s_wiretap.commands.warn import warn_all
from k8s_wiretap.explain.objects import field_story, history_streamed
from k8s_wiretap.views.history import write_field_story, write_history

__all__ = ["register"]


def register(subparsers: Any) -> None:
    history = subparsers.add_parser(
        "history",
        help="an object's history: who changed each field, when, and why",
        description="Every version of one object the recording shows (write answers, "
        "watch events, LIST items), in resourceVersion order: what changed, who wrote it "
        "(component, kubectl command, field manager), why (the explanation and its causal "
        "chain), and what managedFields say.",
    )
    history.add_argument("recording", type=recording_path)
    history.add_argument(
        "object",
        nargs="+",
        help="TYPE/NAME, TYPE/NAMESPACE/NAME or TYPE NAME (deploy/web, node/node-1)",
    )
    history.add_argument("-n", "--namespace", help="the object's namespace")
    history.add_argument("--field", help="one field's story: spec.replicas, metadata.labels")
    history.add_argument(
        "--format",
        choices=("story", "markdown", "json"),
        default="story",
        help="story: text (default); markdown: for a handout; json: one object",
    )
    history.set_defaults(handler=_history)


def _history(args: argparse.Namespace) -> int:
    warnings: list[str] = []
    records = iter_records(args.recording, warnings)
    history = history_streamed(records, " ".join(args.object), args.namespace)
    warn_all(warnings)
    if args.field:
        steps = field_story(history, args.field)
        write_field_story(history, args.field, steps, sys.stdout, args.format)
    else:
        write_history(history, sys.stdout, args.format)
    return 0
