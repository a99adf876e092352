"""Decode what repeats once: a bounded cache of decoded bodies, keyed by their bytes.

A recording says the same thing many times: every discovery poll gets the same documents,
health checks the same `ok`, kubectl fetches the same OpenAPI document (3 MB of protobuf,
a tenth of a second to decode) on every apply, informers relist unchanged objects. In the
committed apply story 39% of the bodies are byte for byte one seen before. The cache maps
(bytes, content type, release, truncated) to the `Decoded`, least recently used first out,
holding at most `limit` bytes of bodies (their decoded values are shared: nothing that reads
them changes them).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from k8s_wiretap.decode.body import Decoded

__all__ = ["DecodeCache"]

Key = tuple[bytes, str, str | None, bool]


class DecodeCache:
    def __init__(self, limit: int = 16 << 20) -> None:
        self.limit = limit
        self.hits = self.misses = 0
        self._held = 0
        self._entries: OrderedDict[Key, Decoded] = OrderedDict()

    def get(self, key: Key, decode: Callable[[], Decoded]) -> Decoded:
        """The decoded body for `key`, decoded by `decode()` the first time."""
        found = self._entries.get(key)
        if found is not None:
            self.hits += 1
            self._entries.move_to_end(key)
            return found
        self.misses += 1
        decoded = decode()
        size = len(key[0])
        if size <= self.limit:
            self._entries[key] = decoded
            self._held += size
            while self._held > self.limit:
                old, _ = self._entries.popitem(last=False)
                self._held -= len(old[0])
        return decoded
