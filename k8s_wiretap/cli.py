"""The `k8s-wiretap` command line: one subcommand per capability, errors on one line.

Every subcommand module exposes `register(subparsers)`, which adds its parser and sets
`handler`, a function taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import atexit
import difflib
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from k8s_wiretap import __version__
from k8s_wiretap.errors import Stopped, WiretapError
from k8s_wiretap.wire.controls import escape_controls

__all__ = ["ArgumentParser", "main"]

# At exit, every object is put out of the collector's sight: the interpreter's last
# collections would traverse all that is left (after `explain` of a large recording, its
# tables and decode cache: 0.7 s of CPU) only to free what the process's end frees anyway.
atexit.register(gc.freeze)


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`prog: error: ... (see --help)`), exit 2;
    an unknown command or option is `k8s-wiretap: unknown ...`, with the likely one."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {escape_controls(message)} (see --help)\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if isinstance(action, argparse._SubParsersAction) and value not in action.choices:
            words = " ".join([*self.prog.split()[1:], ""])  # "k8s-wiretap lab": "lab "
            known = [words + choice for choice in action.choices]
            _unknown("command", words + value, known, self)
        super()._check_value(action, value)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(parsed, _LEFT_OVER_BY):  # the innermost command's parser
            setattr(parsed, _LEFT_OVER_BY, self)
        return parsed, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        parser: ArgumentParser = getattr(parsed, _LEFT_OVER_BY, self)
        if extras:
            word = extras[0]
            if word.startswith("-") and word != "-":
                options = [o for o in parser._option_string_actions if o.startswith("--")]
                _unknown("option", word.split("=")[0], options, parser)
            _fail(f"{_command(parser)}unexpected argument {_quoted(word)}", parser)
        if hasattr(parsed, _LEFT_OVER_BY):
            delattr(parsed, _LEFT_OVER_BY)
        return parsed


_LEFT_OVER_BY = "_k8s_wiretap_left_over_by"


def _quoted(word: str) -> str:
    return f"'{escape_controls(word)}'"


def _command(parser: argparse.ArgumentParser) -> str:
    """`lab up: ` for the parser of `k8s-wiretap lab up`; nothing for the top one."""
    words = parser.prog.split()[1:]
    return f"{' '.join(words)}: " if words else ""


def _fail(message: str, parser: argparse.ArgumentParser) -> NoReturn:
    parser.exit(2, f"k8s-wiretap: {message} (see {parser.prog} --help)\n")


def _unknown(kind: str, word: str, known: list[str], parser: argparse.ArgumentParser) -> NoReturn:
    """`k8s-wiretap: unknown command 'explian' (did you mean 'explain'?)`, exit 2."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    where = _command(parser) if kind == "option" else ""
    said = f"{where}unknown {kind} {_quoted(word)}"
    if close:
        parser.exit(2, f"k8s-wiretap: {said} (did you mean {_quoted(close[0])}?)\n")
    _fail(said, parser)


class _Version(argparse.Action):
    """`--version`: the installed distribution's version, this tree's when not installed."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("k8s-wiretap")
        except PackageNotFoundError:
            installed = __version__
        print(f"k8s-wiretap {installed}")
        parser.exit(0)


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
    "recordings": "bundled",
    "addon": "addon",
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
    parser.add_argument("--version", action=_Version)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=ArgumentParser
    )
    for name in _modules(argv):
        importlib.import_module(f"k8s_wiretap.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    first = words[0] if words else ""
    known = ["--help", "--version"]
    if first.startswith("-") and first not in ("-h", *known):  # before the command: argparse
        _unknown("option", first, known, parser)  # would only say that COMMAND is missing
    args = parser.parse_args(words)
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
