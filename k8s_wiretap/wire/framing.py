"""Split a watch stream into events, whatever the chunk boundaries.

Two framings reach a client (apimachinery pkg/util/framer, apiserver handlers/watch.go):

- JSON (`application/json`): one `{"type": ..., "object": ...}` document per event, each
  followed by a newline (Go's json.Encoder). JSON text never holds a raw newline inside a
  document, so newlines are event boundaries.
- CBOR (`application/cbor-seq`, RFC 8742): one CBOR data item per event (a meta/v1
  WatchEvent map, self-described), with nothing between them: each item delimits itself
  (apimachinery runtime/serializer/cbor/framer.go). A stream that stops being CBOR cannot be
  cut again: what follows the bad bytes is one last frame, which decodes as undecodable.
- Everything else (`;stream=watch`, e.g. protobuf): each event is a 4-byte big-endian length
  and then that many bytes (a meta/v1 WatchEvent).

Framers are tiny stateful objects in the style of httpx's decoders: `feed(chunk)` returns the
complete frames it could cut, `flush()` returns what is left at the end of the stream.
"""

from __future__ import annotations

import struct
from typing import Protocol

from k8s_wiretap.wire.cborseq import CborError, item_end
from k8s_wiretap.wire.media import is_cbor, is_json

__all__ = ["CborSeqFramer", "Framer", "JsonFramer", "LengthPrefixFramer", "framer_for"]


class Framer(Protocol):
    def feed(self, chunk: bytes) -> list[bytes]: ...

    def flush(self) -> list[bytes]: ...

    @property
    def pending(self) -> int:
        """Bytes held for a frame not complete yet (what a caller bounds)."""
        ...


class JsonFramer:
    """Newline-delimited JSON documents; blank lines are skipped."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            self._pending += chunk
            return []
        self._pending += chunk
        *complete, rest = bytes(self._pending).split(b"\n")
        self._pending = bytearray(rest)
        return [line for line in complete if line.strip()]

    def flush(self) -> list[bytes]:
        rest, self._pending = bytes(self._pending), bytearray()
        return [rest] if rest.strip() else []

    @property
    def pending(self) -> int:
        return len(self._pending)


class LengthPrefixFramer:
    """4-byte big-endian length, then the frame; an incomplete tail is returned by flush."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        self._pending += chunk
        frames = []
        offset = 0
        pending = self._pending
        while len(pending) - offset >= 4:
            (size,) = struct.unpack_from(">I", pending, offset)
            end = offset + 4 + size
            if end > len(pending):
                break
            frames.append(bytes(pending[offset + 4 : end]))
            offset = end
        if offset:
            del pending[:offset]
        return frames

    def flush(self) -> list[bytes]:
        rest, self._pending = bytes(self._pending), bytearray()
        return [rest] if rest else []

    @property
    def pending(self) -> int:
        return len(self._pending)


class CborSeqFramer:
    """One CBOR data item per frame. An item split across chunks waits for the rest; bytes
    that are not CBOR end the framing: they and everything after them are the last frame."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._broken = False

    def feed(self, chunk: bytes) -> list[bytes]:
        self._pending += chunk
        if self._broken:
            return []
        frames = []
        offset = 0
        pending = bytes(self._pending)
        while offset < len(pending):
            try:
                end = item_end(pending, offset)
            except CborError:
                self._broken = True
                break
            if end is None:
                break
            frames.append(pending[offset:end])
            offset = end
        if offset:
            del self._pending[:offset]
        return frames

    def flush(self) -> list[bytes]:
        rest, self._pending = bytes(self._pending), bytearray()
        return [rest] if rest else []

    @property
    def pending(self) -> int:
        return len(self._pending)


def framer_for(content_type: str) -> Framer:
    """The framer for a watch response of `content_type`: JSON, CBOR (`application/cbor-seq`;
    the API server never answers a watch as plain `application/cbor`, but a stream labelled
    so is still a sequence of items), else length-prefixed."""
    if is_json(content_type):
        return JsonFramer()
    if is_cbor(content_type):
        return CborSeqFramer()
    return LengthPrefixFramer()
