"""Decode what repeats once: a bounded cache of decoded bytes, keyed by those bytes.

A recording says the same thing many times: every discovery poll gets the same documents,
health checks the same `ok`, kubectl fetches the same OpenAPI document (3 MB of protobuf,
a tenth of a second to decode) on every apply, informers relist unchanged objects. In the
committed apply story 39% of the bodies are byte for byte one seen before; of its watch
event frames a third are (the API server serializes an event once for all its watchers).

The cache maps (bytes, content type, release, what) to what they decode to: `what` tells
the kinds of entries apart (a body's `truncated` flag; WATCH_FRAME for one frame of a watch
stream), so bodies and frames can share one cache and one bound. Least recently used first
out, holding at most `limit` bytes of keys (and what they decode to, with the JSON of each
once a line has printed it: `Decoded.json_bytes`); `limit = 0` turns it off. The decoded
values are shared: nothing that reads them changes them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar, cast

from k8s_wiretap.kube.release import ReleaseLike

__all__ = ["WATCH_FRAME", "DecodeCache", "Key"]

WATCH_FRAME = "watch frame"
Key = tuple[bytes, str, ReleaseLike, bool | str]
T = TypeVar("T")


class DecodeCache:
    def __init__(self, limit: int = 16 << 20) -> None:
        self.limit = limit
        self.hits = self.misses = 0
        self._held = 0
        self._entries: OrderedDict[Key, Any] = OrderedDict()

    def get(self, key: Key, decode: Callable[[], T]) -> T:
        """What `key` decodes to, decoded by `decode()` the first time. The caller's key
        says what kind of value it is (see the module docstring)."""
        found = self.found(key)
        return cast(T, found) if found is not None else self.keep(key, decode())

    def found(self, key: Key) -> Any:
        """What `key` decoded to, if held (it is then the most recently used); None if not:
        `get` without a function to call (a caller that decodes a body for every line)."""
        found = self._entries.get(key)
        if found is not None:
            self.hits += 1
            self._entries.move_to_end(key)
        return found

    def keep(self, key: Key, decoded: T) -> T:
        """Hold `decoded` as what `key` decodes to (not `found`: the caller decoded it),
        the least recently used going past the limit; `decoded` is returned."""
        self.misses += 1
        size = len(key[0])
        if self.limit > 0 and size <= self.limit:
            self._entries[key] = decoded
            self._held += size
            while self._held > self.limit:
                old, _ = self._entries.popitem(last=False)
                self._held -= len(old[0])
        return decoded
