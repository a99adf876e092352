"""Where k8s-wiretap keeps state and caches, following the XDG base directory conventions."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "config_dir", "state_dir"]


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
