"""Errors meant for the person at the terminal: one line, no traceback.

Every failure a user can cause or fix (a wrong flag, a missing kubeconfig, a missing binary, a
component that would not start) is raised as a `WiretapError` whose message is the whole
explanation. The CLI prints it as `k8s-wiretap: <message>` and exits with `exit_code`.
"""

from __future__ import annotations

__all__ = ["UsageError", "WiretapError"]


class WiretapError(Exception):
    """A failure explained in its message; exits with status 1."""

    exit_code = 1


class UsageError(WiretapError):
    """Bad flags or configuration (kubeconfig, context, port); exits with status 2."""

    exit_code = 2
