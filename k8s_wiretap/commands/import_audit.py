"""`k8s-wiretap import audit LOG... -o RECORDING [--overwrite]`: the API server's audit log
as a recording (`importers.audit`, docs/importing.md).

The logs are read in the order given (a rotated log's older files first), one recording is
written. Every line that cannot be read is said on stderr (`FILE:LINE: skipped: REASON`)
and the import goes on; the last line says how many exchanges were written and how many
lines were skipped. A missing LOG, or a RECORDING that exists (without `--overwrite`) or
cannot be written, is a one-line error, exit 2, before anything is written
(`commands.importing`). Repeated or late events of an auditID, when the log has any, are
counted at the end of the last line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from k8s_wiretap.commands.importing import add_output, checked, count, said, sink
from k8s_wiretap.importers.audit import import_audit

__all__ = ["register"]


def register(sources: Any) -> None:
    parser = sources.add_parser(
        "audit",
        help="the API server's audit log (audit.k8s.io/v1 Events; EventList, wrapped, gzip)",
        description="Read audit.k8s.io/v1 Events (one a line, EventList batches, or under "
        "log, message or properties.log; gzip as is) and write them as a recording: one "
        "exchange per auditID, the user as who sent it, bodies when the level logs them, "
        "Secrets redacted (docs/importing.md).",
    )
    parser.add_argument("logs", nargs="+", type=Path, metavar="LOG")
    add_output(parser)
    parser.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    checked("audit", args.logs, args)
    with sink("audit", args, "audit log") as written:
        importer = import_audit(args.logs, written)
    ignored = count(importer.ignored, "repeated or late audit event")
    more = (f"{ignored} ignored",) if importer.ignored else ()
    return said(args, written, count(importer.events, "audit event"), "line", *more)
