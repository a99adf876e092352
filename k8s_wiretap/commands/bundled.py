"""The recordings the package carries, reachable by name from any folder.

A recording argument (`explain`, `replay`, `history`, `export`, `serve replay`, `import
audit`) is a path; when no file of that name exists and it names a bundled recording
(`wide-session`, `apply-story.jsonl.gz`, `wide-session.audit.log.gz`), the bundled one is
read: a person who installed the tool has no `recordings/` folder. A real file always wins.
`k8s-wiretap recordings` lists them with their full paths.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from k8s_wiretap.paths import RECORDING_SUFFIXES, bundled, bundled_recordings

__all__ = ["recording_path", "register"]


def recording_path(text: str) -> Path:
    """argparse's `type` for a recording: the file `text`, else the bundled one it names,
    else `text` as it is (the command then says the file is missing)."""
    path = Path(text)
    if path.exists():
        return path
    return bundled(text) or path


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "recordings",
        help="list the bundled recordings: name and full path",
        description="The recordings that come with k8s-wiretap, one a line: the name that "
        "every command taking a recording accepts (`k8s-wiretap explain wide-session`), and "
        "the file's full path. A file of that name in the current folder wins.",
    )
    parser.set_defaults(handler=_list)


def _name(path: Path) -> str:
    """The short name of a bundled file: a recording without its suffix, an audit log whole."""
    for suffix in RECORDING_SUFFIXES[:2]:
        if path.name.endswith(suffix) and not path.name.endswith(RECORDING_SUFFIXES[2]):
            return path.name.removesuffix(suffix)
    return path.name


def _list(_args: argparse.Namespace) -> int:
    found = sorted(bundled_recordings(), key=_name)
    width = max(len(_name(path)) for path in found)
    for path in found:
        print(f"{_name(path):<{width}}  {path}")
    return 0
