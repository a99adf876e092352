"""A content-encoded stream (`Content-Encoding: gzip` or `deflate`), inflated as it arrives.

A gzip stream may be several gzip members, one after another, and must be read to its end
(RFC 1952 2.2; Go's gzip.Reader does so by default). The default release sends exactly that
for a compressed watch list (gate WatchListCompression, beta and on by default there): its
`perFlushGzipWriter` (apiserver pkg/endpoints/handlers/watch.go) closes the gzip member at
every flush, so each burst of events is a member of its own. zlib's decompressobj stops at
the end of the first member, which lost every event after the initial ones.

Bytes that do not inflate are handed on as they came, from then on, and `error` says why:
the framer and decoder downstream then show them as undecodable, and nothing is lost.
"""

from __future__ import annotations

import zlib

__all__ = ["Inflater"]


class Inflater:
    """`feed(chunk)` gives the inflated bytes of `chunk`, as far as they are in."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding == "gzip"
        self._decoder = self._new()
        self.error: str | None = None

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)

    def feed(self, chunk: bytes) -> bytes:
        if self.error is not None:
            return chunk
        out = bytearray()
        data = chunk
        try:
            while data:
                out += self._decoder.decompress(data)
                if not (self._decoder.eof and self._gzip):
                    break
                data = self._decoder.unused_data  # the next member, if it has begun
                self._decoder = self._new()
        except zlib.error as error:
            self.error = f"not {'gzip' if self._gzip else 'deflate'} data: {error}"
            return bytes(out) + data
        return bytes(out)
