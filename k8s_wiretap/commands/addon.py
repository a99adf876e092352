"""`k8s-wiretap addon`: where the mitmproxy scripts the package carries are installed.

`mitmdump -s "$(k8s-wiretap addon --path)"` loads the recording addon (`wiretap.py`) in
plain mitmproxy, `--path contentview` the Kubernetes contentview: the same files as
`addons/` in a checkout.
"""

from __future__ import annotations

import argparse
from typing import Any

from k8s_wiretap.paths import ADDONS

__all__ = ["SCRIPTS", "register"]

# Each script, and what it does in mitmproxy.
SCRIPTS = {
    "wiretap": "records as `k8s-wiretap proxy` does (--set wiretap_record=FILE)",
    "contentview": "shows Kubernetes bodies (protobuf, CBOR, watch streams) decoded",
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "addon",
        help='the mitmproxy scripts: mitmdump -s "$(k8s-wiretap addon --path)"',
        description="The scripts plain mitmproxy (mitmproxy, mitmweb, mitmdump) loads with "
        "-s. Without --path, each (or the one named) with its path and what it does.",
    )
    parser.add_argument(
        "name",
        nargs="?",
        choices=tuple(SCRIPTS),
        default=None,
        help="which script (--path: wiretap unless named)",
    )
    parser.add_argument("--path", action="store_true", help="print only the script's path")
    parser.set_defaults(handler=_addon)


def _addon(args: argparse.Namespace) -> int:
    if args.path:
        print(ADDONS / f"{args.name or 'wiretap'}.py")
        return 0
    for name, what in SCRIPTS.items():
        if args.name in (None, name):
            print(f"{ADDONS / f'{name}.py'}  {what}")
    return 0
