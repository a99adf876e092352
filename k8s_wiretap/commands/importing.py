"""`k8s-wiretap import SOURCE ...`: another tool's records made a recording that `explain`,
`replay` and the rest read as the proxy's own.

Each source has a module of its own, `commands/import_<source>.py`, whose `register(sources)`
adds its subcommand; `SOURCES` lists those that exist, in the order `--help` shows them.
"""

from __future__ import annotations

import importlib
from typing import Any

# each one's module: k8s_wiretap.commands.import_<source>
SOURCES: tuple[str, ...] = ("audit", "har", "mitmproxy")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "import",
        help="make a recording of another tool's records (audit logs, HAR, mitmproxy flows)",
        description="Read another tool's records and write them as a recording, redacted "
        "as the proxy redacts (docs/importing.md).",
    )
    sources = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)
    for source in SOURCES:
        importlib.import_module(f"k8s_wiretap.commands.import_{source}").register(sources)
