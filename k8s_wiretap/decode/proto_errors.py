"""DecodeError: the one exception protobuf decoding raises, with a short reason."""

from __future__ import annotations

__all__ = ["DecodeError"]


class DecodeError(ValueError):
    """Bytes that do not decode as the Kubernetes protobuf they claim to be."""
