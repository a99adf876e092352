"""A picture as PNG: its SVG rendered by Chromium, headless (`make chromium` installs
Debian's), at the SVG's own size."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.views.pictures.svg import Svg

__all__ = ["ChromiumMissing", "chromium", "png"]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT = 120.0  # seconds: a cold start on a loaded machine takes a few


class ChromiumMissing(UsageError):
    """No Chromium to render with."""


def chromium() -> str:
    """The Chromium (or Chrome) on PATH."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise ChromiumMissing("no Chromium to render the PNG with (`make chromium` installs it)")


def png(svg: Svg) -> bytes:
    """`svg` as a PNG of its size, rendered by headless Chromium."""
    browser = chromium()
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-png-") as folder:
        source, shot = Path(folder) / "picture.svg", Path(folder) / "picture.png"
        source.write_text(svg.render(), encoding="utf-8")
        command = [
            browser,
            "--headless",
            "--no-sandbox",  # as root, and in containers, the sandbox cannot start
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={folder}/profile",
            f"--screenshot={shot}",
            f"--window-size={svg.width},{svg.height}",
            source.as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=False)
        if not shot.exists():
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise WiretapError(f"Chromium made no PNG: {said[-1] if said else done.returncode}")
        return shot.read_bytes()
