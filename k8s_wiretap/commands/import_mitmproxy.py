"""`k8s-wiretap import mitmproxy FILE -o RECORDING [--overwrite]`: a mitmproxy flow file
(`mitmdump -w FILE`) as a recording (`importers.mitmflows`, docs/importing.md).

Every flow that cannot be imported is said on stderr (`FILE:flow N: skipped: REASON`) and
the import goes on; the last line says how many exchanges were written and how many flows
were skipped. A missing FILE, a FILE that is no flow file, or a RECORDING that exists
(without `--overwrite`) or cannot be written, is a one-line error, exit 2
(`commands.importing`); so is one whose first flow says it is longer than the file. A flow
longer than `--max-flow` is skipped unread, a body inflated no further than `--max-body`
(`importers.limits`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from k8s_wiretap.commands.importing import add_limits, add_output, imported

__all__ = ["register"]


def register(sources: Any) -> None:
    parser = sources.add_parser(
        "mitmproxy",
        help="a mitmproxy flow file (mitmdump -w FILE)",
        description="Read a mitmproxy flow file with mitmproxy's own reader and write its "
        "HTTP flows as a recording: one exchange per flow, watch responses split into "
        "events, Secrets redacted (docs/importing.md).",
    )
    parser.add_argument("file", type=Path, metavar="FILE")
    add_output(parser)
    add_limits(parser, "max_flow", "max_body")
    parser.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    # read only here: mitmproxy's flow reader (its TLS and certificate modules) takes a
    # quarter of a second to import, which every other command would pay at start
    from k8s_wiretap.importers.mitmflows import mitm_reader

    return imported(args, "mitmproxy", "mitmproxy flows", mitm_reader, "flow")
