"""The rows' exchange ids, and the row of an id, in a few bytes a row.

A dict of a million ids to positions costs some 160 bytes an entry (the string, the
entry, the int); here the ids sit end to end in one byte string (`offsets` says where
each starts) and an open-addressing hash table of positions finds them again: about
60 bytes a row for a uuid. It reads as a mapping (`get`, `[]`, `in`), as the dict did.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping

__all__ = ["Ids"]

EMPTY = -1


class Ids(Mapping[str, int]):
    """Ids in row order; `ids[id]` is the (last) row with that id."""

    def __init__(self) -> None:
        self._blob = bytearray()
        self._offsets = array("q", [0])  # id n is _blob[_offsets[n]:_offsets[n + 1]]
        self._slots = array("i", [EMPTY]) * 8  # positions; replaced whole when it grows
        self._used = 0

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def id_of(self, position: int) -> str:
        offsets = self._offsets
        return self._blob[offsets[position] : offsets[position + 1]].decode()

    def add(self, exchange_id: str) -> int:
        """Append `exchange_id` as the next row's; its position."""
        key = exchange_id.encode()
        position = len(self)
        self._blob += key
        self._offsets.append(len(self._blob))
        slot = self._find(key, self._slots)
        if self._slots[slot] == EMPTY:
            self._used += 1
        self._slots[slot] = position
        if self._used * 2 > len(self._slots):
            self._grow()
        return position

    def get(self, exchange_id: str, default: int | None = None) -> int | None:  # type: ignore[override]
        if not isinstance(exchange_id, str):
            return default
        slots = self._slots
        position = slots[self._find(exchange_id.encode(), slots)]
        return default if position == EMPTY else position

    def __getitem__(self, exchange_id: str) -> int:
        position = self.get(exchange_id)
        if position is None:
            raise KeyError(exchange_id)
        return position

    def __contains__(self, exchange_id: object) -> bool:
        return isinstance(exchange_id, str) and self.get(exchange_id) is not None

    def __iter__(self) -> Iterator[str]:
        return (self.id_of(n) for n in range(len(self)) if self.get(self.id_of(n)) == n)

    def _find(self, key: bytes, slots: array[int]) -> int:
        """The slot holding `key`'s row, or the empty one where it would go."""
        mask = len(slots) - 1
        slot = hash(key) & mask
        blob, offsets = self._blob, self._offsets
        while True:
            position = slots[slot]
            if position == EMPTY or blob[offsets[position] : offsets[position + 1]] == key:
                return slot
            slot = (slot + 1) & mask

    def _grow(self) -> None:
        slots = array("i", [EMPTY]) * (len(self._slots) * 2)
        blob, offsets = self._blob, self._offsets
        for position in range(len(self)):  # in order: a repeated id keeps its last row
            slots[self._find(bytes(blob[offsets[position] : offsets[position + 1]]), slots)] = (
                position
            )
        self._slots = slots  # whole: a reader in another thread sees the old or the new
