"""`k8s-wiretap import har FILE -o RECORDING [--overwrite]`: a HAR 1.2 file as a recording
(`importers.har`, docs/importing.md).

Every entry that cannot be read is said on stderr (`FILE:entry N: skipped: REASON`) and the
import goes on; the last line says how many exchanges were written and how many entries
were skipped. A missing FILE, a FILE that is no HAR file, or a RECORDING that exists
(without `--overwrite`) or cannot be written, is a one-line error, exit 2
(`commands.importing`); so is a FILE larger than `--max-file` or of more JSON values than
`--max-values`, before it is parsed (`importers.limits`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from k8s_wiretap.commands.importing import add_limits, add_output, imported
from k8s_wiretap.importers.har import har_reader

__all__ = ["register"]


def register(sources: Any) -> None:
    parser = sources.add_parser(
        "har",
        help="a HAR 1.2 file (browser devtools, HAR tools, export --har)",
        description="Read a HAR 1.2 file and write its entries as a recording: one exchange "
        "per entry, watch responses split into events, Secrets redacted; what export --har "
        "wrote in _k8sWiretap read back (docs/importing.md).",
    )
    parser.add_argument("file", type=Path, metavar="FILE")
    add_output(parser)
    add_limits(parser, "max_file", "max_values", "max_body")
    parser.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    return imported(args, "har", "HAR file", har_reader, "entry|entries")
