"""The `k8s-wiretap` command line: one subcommand per capability, errors on one line.

Every subcommand module exposes `register(subparsers)`, which adds its parser and sets
`handler`, a function taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from k8s_wiretap import __version__
from k8s_wiretap.errors import WiretapError

__all__ = ["ArgumentParser", "main"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`prog: error: ... (see --help)`), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> ArgumentParser:
    from k8s_wiretap.commands import decode as decode_cli
    from k8s_wiretap.commands import demo, replay, serve
    from k8s_wiretap.commands import lab as lab_cli
    from k8s_wiretap.commands import proxy as proxy_cli

    parser = ArgumentParser(
        prog="k8s-wiretap",
        description="Record and explain what Kubernetes components say to each other.",
    )
    parser.add_argument("--version", action="version", version=f"k8s-wiretap {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=ArgumentParser
    )
    proxy_cli.register(subparsers)
    decode_cli.register(subparsers)
    lab_cli.register(subparsers)
    demo.register(subparsers)
    replay.register(subparsers)
    serve.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.handler(args)
    except WiretapError as error:
        print(f"k8s-wiretap: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("k8s-wiretap: interrupted", file=sys.stderr)
        return 130
    return status
