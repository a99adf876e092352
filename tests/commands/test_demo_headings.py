"""`demo --live`'s headings are bold on a terminal only: into a pipe (`demo --live | tee`)
or with NO_COLOR set they are plain text, no escape codes."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

SAY = "from k8s_wiretap.commands.demo import _say; _say('kubectl apply')"


def said(env: dict[str, str], terminal: bool) -> bytes:
    if not terminal:
        done = subprocess.run(
            [sys.executable, "-c", SAY], capture_output=True, env=env, timeout=60, check=True
        )
        return done.stdout
    leader, follower = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-c", SAY], stdout=follower, env=env, timeout=60, check=True
        )
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 1024)
            except OSError:  # the terminal's other side is closed: all is read
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        os.close(leader)


def test_a_heading_is_bold_on_a_terminal_and_plain_elsewhere() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert said(env, terminal=True).strip() == b"\x1b[1m== kubectl apply\x1b[0m"
    assert said(env, terminal=False) == b"\n== kubectl apply\n"  # a pipe
    assert said({**env, "NO_COLOR": "1"}, terminal=True).strip() == b"== kubectl apply"
