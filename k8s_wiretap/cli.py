"""The `k8s-wiretap` command line: one subcommand per capability, errors on one line.

Every subcommand module exposes `register(subparsers)`, which adds its parser and sets
`handler`, a function taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from k8s_wiretap import __version__
from k8s_wiretap.errors import Stopped, WiretapError
from k8s_wiretap.wire.controls import escape_controls

__all__ = ["ArgumentParser", "main"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`prog: error: ... (see --help)`), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {escape_controls(message)} (see --help)\n")


# The module that registers each command, in the order `--help` lists them. Only the
# asked-for command's module is imported: the proxy's mitmproxy stack alone takes 0.6 s,
# more than `explain` needs for a small recording. A new command goes in this table.
COMMANDS = {
    "proxy": "proxy",
    "run": "proxy",
    "kubeconfig": "proxy",
    "decode": "decode",
    "explain": "decode",
    "history": "history",
    "export": "export",
    "import": "importing",
    "audit-webhook": "audit_webhook",
    "lab": "lab",
    "demo": "demo",
    "replay": "replay",
    "serve": "serve",
    "walkthrough": "walkthrough",
}


def _modules(argv: Sequence[str] | None) -> list[str]:
    """The command modules to import: the named command's, or all (no `argv`, help, a typo)."""
    first = next((word for word in argv or () if not word.startswith("-")), None)
    if first in COMMANDS:
        return [COMMANDS[first]]
    return list(dict.fromkeys(COMMANDS.values()))


def build_parser(argv: Sequence[str] | None = None) -> ArgumentParser:
    """The parser, with the subcommands `argv` needs (all of them without `argv`)."""
    parser = ArgumentParser(
        prog="k8s-wiretap",
        description="Record and explain what Kubernetes components say to each other.",
    )
    parser.add_argument("--version", action="version", version=f"k8s-wiretap {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=ArgumentParser
    )
    for name in _modules(argv):
        importlib.import_module(f"k8s_wiretap.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
    try:
        status: int = args.handler(args)
    except WiretapError as error:
        print(f"k8s-wiretap: {escape_controls(str(error))}", file=sys.stderr)
        return error.exit_code
    except Stopped as stopped:  # a command that was writing says what became of it
        print(f"k8s-wiretap: {escape_controls(str(stopped))}", file=sys.stderr)
        return stopped.exit_code
    except KeyboardInterrupt:
        print("k8s-wiretap: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `| head`: the reader has what it wanted; say nothing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # for the exit flush
        return 141  # as a shell reports a pipe's writer stopped by SIGPIPE
    return status
