"""The errors of the patch engine: a patch the API server would reject.

`PatchError.message` is worded as the library the API server uses words it (apimachinery's
strategicpatch and mergepatch packages, evanphx/json-patch, structured-merge-diff); `status` is
the HTTP code the server answers with and `server_message` the `Status.message` it sends, which
for some errors is generic ("the server rejected our request due to an error in our request"
for every 422 of a JSON patch) while `message` keeps the reason.
"""

from __future__ import annotations

__all__ = ["REJECTED", "ConflictError", "PatchError"]

REJECTED = "the server rejected our request due to an error in our request"


class PatchError(ValueError):
    """The API server would reject this patch; the message is the server's wording."""

    def __init__(self, message: str, status: int = 500, server_message: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.server_message = message if server_message is None else server_message


class ConflictError(PatchError):
    """Server-side apply without force changed fields that other managers own (HTTP 409)."""

    def __init__(self, message: str, conflicts: list[tuple[str, str]]) -> None:
        super().__init__(message, 409)
        self.conflicts = conflicts  # (manager, field path) pairs
