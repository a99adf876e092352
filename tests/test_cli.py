"""The command line: each command imports only what it needs, and every command is listed."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from k8s_wiretap.cli import COMMANDS, build_parser
from tests.recorded import STORY


def _imported_by(*argv: str) -> set[str]:
    """The modules a fresh interpreter has imported once `argv` is parsed."""
    script = (
        "import sys; from k8s_wiretap.cli import build_parser; "
        f"build_parser({list(argv)!r}).parse_args({list(argv)!r}); print('\\n'.join(sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_explain_does_not_import_the_proxy() -> None:
    modules = _imported_by("explain", "some.jsonl", "--format", "json")
    assert "k8s_wiretap.commands.decode" in modules
    assert "mitmproxy" not in modules and "k8s_wiretap.commands.proxy" not in modules


def test_the_proxy_imports_its_stack() -> None:
    assert "k8s_wiretap.proxy.server" in _imported_by("proxy", "--listen", "127.0.0.1:0")


@pytest.mark.parametrize("argv", [[], ["--help"], ["explian"]])
def test_without_a_known_command_every_command_is_there(argv: list[str]) -> None:
    subparsers = build_parser(argv)._subparsers
    assert subparsers is not None
    choices = subparsers._group_actions[0].choices
    assert choices is not None and set(choices) == set(COMMANDS)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["explian", "x"], "unknown command 'explian' (did you mean 'explain'?)"),
        (["frobnicate"], "unknown command 'frobnicate' (see k8s-wiretap --help)"),
        (["lab", "upp"], "unknown command 'lab upp' (did you mean 'lab up'?)"),
        (["serve", "replya", "x"], "unknown command 'serve replya' (did you mean 'serve replay'?)"),
        (
            ["walkthrough", "--lsit"],
            "walkthrough: unknown option '--lsit' (did you mean '--list'?)",
        ),
        (
            ["explain", "x", "--frmat=json"],
            "explain: unknown option '--frmat' (did you mean '--format'?)",
        ),
        (
            ["lab", "up", "--kube-verion", "1.20"],
            "lab up: unknown option '--kube-verion' (did you mean '--kube-version'?)",
        ),
        (
            ["explain", "x", "--zzz"],
            "explain: unknown option '--zzz' (see k8s-wiretap explain --help)",
        ),
        (["--verison"], "unknown option '--verison' (did you mean '--version'?)"),
        (
            ["explain", "x", "y"],
            "explain: unexpected argument 'y' (see k8s-wiretap explain --help)",
        ),
    ],
)
def test_a_typo_is_one_line_with_the_likely_word(argv: list[str], said: str) -> None:
    """The README's form, `k8s-wiretap: <what is wrong>`, never argparse's "invalid choice"."""
    done = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *argv], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"k8s-wiretap: {said}\n")


def test_the_version_is_the_installed_one() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "--version"], capture_output=True, text=True
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"k8s-wiretap {version('k8s-wiretap')}\n"


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    """`explain ... | head`: the pipe closes under the writer; it stops, saying nothing."""
    writer = subprocess.Popen(
        [sys.executable, "-m", "k8s_wiretap", "explain", str(STORY), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert writer.stdout is not None and writer.stderr is not None
    assert writer.stdout.read(100).startswith(b'{"id":')
    writer.stdout.close()  # as head does once it has its lines
    assert writer.wait(timeout=120) == 141
    assert writer.stderr.read() == b""
