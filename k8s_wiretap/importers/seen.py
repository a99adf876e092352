"""Ids an import has given, in memory that does not follow the input: the last `exact`
exactly, those before them in a Bloom filter of 8 MiB (`Bloom`).

An import gives each exchange an id no other has (a repeated one is renamed: `ID~N` in an
audit log, `ID-N` in HAR and flow files). To tell, it must know the ids it gave; a log of
millions would make that set grow with the log. Past `exact`, the oldest go to the
filter: it holds every id added, and may say it holds one never added (at a million ids,
about one in ten thousand), and that exchange is then renamed too, which costs nothing but
the rename.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

__all__ = ["EXACT", "Bloom", "Seen"]

EXACT = 100_000  # ids held exactly, the last ones given


class Bloom:
    """A set that may hold more than was added (a Bloom filter of 8 MiB, three hashes)."""

    BITS = 1 << 26

    def __init__(self) -> None:
        self._bits = bytearray(self.BITS // 8)

    def _places(self, key: str) -> list[int]:
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=24).digest()
        return [int.from_bytes(digest[i : i + 8]) % self.BITS for i in (0, 8, 16)]

    def add(self, key: str) -> None:
        for place in self._places(key):
            self._bits[place >> 3] |= 1 << (place & 7)

    def __contains__(self, key: str) -> bool:
        return all(self._bits[p >> 3] & (1 << (p & 7)) for p in self._places(key))


class Seen:
    """The ids given: the last `exact` exactly (an ordered set), those before in a
    `Bloom`, made when the first goes there."""

    def __init__(self, exact: int = EXACT) -> None:
        self.exact = exact
        self._last: OrderedDict[str, None] = OrderedDict()
        self._before: Bloom | None = None

    def add(self, key: str) -> None:
        self._last[key] = None
        if len(self._last) > self.exact:
            oldest, _ = self._last.popitem(last=False)
            if self._before is None:
                self._before = Bloom()
            self._before.add(oldest)

    def __contains__(self, key: str) -> bool:
        return key in self._last or (self._before is not None and key in self._before)
