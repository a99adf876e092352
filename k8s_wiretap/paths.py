"""Where k8s-wiretap keeps state and caches (the XDG base directory conventions), and where its
bundled files are: the recordings, the walkthroughs and the mitmproxy scripts travel inside the
package, so a checkout and an installed wheel find them alike (the checkout's top-level
`recordings/` and `addons/` are links to them)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "ADDONS",
    "RECORDINGS",
    "RECORDING_SUFFIXES",
    "bundled",
    "bundled_recordings",
    "cache_dir",
    "config_dir",
    "state_dir",
]

PACKAGE = Path(__file__).resolve().parent
RECORDINGS = PACKAGE / "recordings"  # the recordings and walkthroughs that come with the tool
ADDONS = PACKAGE / "addons"  # the scripts for plain mitmproxy (`mitmdump -s`)
# What a bundled file may be, in the order a bare name is tried: a recording, an audit log.
RECORDING_SUFFIXES = (".jsonl.gz", ".jsonl", ".audit.log.gz")


def bundled(name: str) -> Path | None:
    """The bundled file `name` names: `wide-session`, `wide-session.jsonl.gz` or
    `wide-session.audit.log.gz`; None for a path with a folder in it or a name of none."""
    if not name or name != Path(name).name or name.startswith("."):
        return None
    for candidate in (name, *(name + suffix for suffix in RECORDING_SUFFIXES)):
        path = RECORDINGS / candidate
        if path.name.endswith(RECORDING_SUFFIXES) and path.is_file():
            return path
    return None


def bundled_recordings() -> list[Path]:
    """The bundled recordings and audit logs."""
    return sorted(path for path in RECORDINGS.iterdir() if path.name.endswith(RECORDING_SUFFIXES))


def _xdg(variable: str, fallback: str) -> Path:
    value = os.environ.get(variable)
    base = Path(value) if value else Path.home() / fallback
    return base / "k8s-wiretap"


def state_dir() -> Path:
    """Per-user state (`$XDG_STATE_HOME/k8s-wiretap`), e.g. the default lab folder."""
    return _xdg("XDG_STATE_HOME", ".local/state")


def cache_dir() -> Path:
    """Per-user cache (`$XDG_CACHE_HOME/k8s-wiretap`), e.g. built control-plane binaries."""
    return _xdg("XDG_CACHE_HOME", ".cache")


def config_dir() -> Path:
    """Per-user settings (`$XDG_CONFIG_HOME/k8s-wiretap`), e.g. your own keys."""
    return _xdg("XDG_CONFIG_HOME", ".config")
