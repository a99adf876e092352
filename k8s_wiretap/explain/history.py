"""Every observation of every object in a recording, indexed by object and resourceVersion.

An object is seen in a GET or LIST response, a watch event, or a write's response. Each
`Observation` says when, through which exchange and so which component (a watch event is
seen by the client whose watch delivered it), and which incarnation (uid) it was. The
`History` keeps them per `ObjectRef` in time order, and by resourceVersion: the version a
write returns is the version its watch events carry, which is how a write is linked to the
events it causes (`at`). Inserts cost O(log n) (a bisection; recordings arrive almost in
time order, so the list insert is nearly always an append).

A history read as a stream (`explain --format json`) is kept bounded with `forget(before)`:
per object, only the observations from `before` on and the latest one before it (what a
patch at `before` or later can start from, and every version seen since), so what it holds
is the recent traffic plus one observation per object — the size of the cluster, not of
the recording.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.kube.refs import ObjectRef, resource_version, uid_of

__all__ = ["History", "Observation"]


@dataclass(slots=True)
class Observation:
    time: float
    object: dict[str, Any]
    source: str  # "get", "list", "watch", "create", "update", "patch", or what a replay used
    exchange: str  # the exchange's id
    component: str = ""  # who saw it: the client of that exchange
    event: int | None = None  # the watch event's sequence number in its exchange
    resource_version: int | None = None
    uid: str = ""
    # served without metadata.managedFields because its client asked (KEP-5958's Accept
    # drop=metadata.managedFields): its managers are unknown, not none
    managed_fields_dropped: bool = False

    @classmethod
    def of(
        cls,
        obj: dict[str, Any],
        time: float,
        source: str,
        exchange: str,
        component: str = "",
        event: int | None = None,
    ) -> Observation:
        return cls(
            time, obj, source, exchange, component, event, resource_version(obj), uid_of(obj)
        )


@dataclass(slots=True)
class _Timeline:
    times: list[float] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)  # sorted, one entry per distinct version
    by_version: dict[int, list[Observation]] = field(default_factory=dict)

    def add(self, observation: Observation) -> None:
        index = bisect.bisect_right(self.times, observation.time)
        self.times.insert(index, observation.time)
        self.observations.insert(index, observation)
        version = observation.resource_version
        if version is None:
            return
        seen = self.by_version.get(version)
        if seen is None:
            self.by_version[version] = [observation]
            bisect.insort(self.versions, version)
        else:
            bisect.insort(seen, observation, key=_time)

    def forget(self, before: float) -> None:
        """Drop the observations older than `before` but the latest of them."""
        index = bisect.bisect_left(self.times, before) - 1
        if index <= 0:
            return
        dropped = self.observations[:index]
        del self.times[:index], self.observations[:index]
        gone = {id(o) for o in dropped}
        for version in {o.resource_version for o in dropped} - {None}:
            assert version is not None
            left = [o for o in self.by_version.get(version, ()) if id(o) not in gone]
            if left:
                self.by_version[version] = left
            else:
                self.by_version.pop(version, None)
        kept = [o.resource_version for o in self.observations if o.resource_version is not None]
        if kept:  # versions below every kept one can no longer make a kept one stale
            del self.versions[: bisect.bisect_left(self.versions, min(kept))]


def _time(observation: Observation) -> float:
    return observation.time


class History:
    """Observations per object: in time order, and by resourceVersion."""

    def __init__(self) -> None:
        self._objects: dict[ObjectRef, _Timeline] = {}

    def add(self, ref: ObjectRef, observation: Observation) -> None:
        timeline = self._objects.get(ref)
        if timeline is None:
            timeline = self._objects[ref] = _Timeline()
        timeline.add(observation)

    def __len__(self) -> int:
        return len(self._objects)

    def forget(self, before: float) -> None:
        """Keep, per object, the observations from `before` on and the latest before it."""
        for timeline in self._objects.values():
            timeline.forget(before)

    @property
    def held(self) -> int:
        """How many observations it holds."""
        return sum(len(t.observations) for t in self._objects.values())

    def __iter__(self) -> Iterator[ObjectRef]:
        return iter(self._objects)

    def timeline(self, ref: ObjectRef) -> list[Observation]:
        timeline = self._objects.get(ref)
        return timeline.observations if timeline else []

    def before(self, ref: ObjectRef, time: float, uid: str = "") -> Observation | None:
        """The latest observation strictly before `time` — of incarnation `uid` if given
        (an object deleted and created again under its name is another object)."""
        timeline = self._objects.get(ref)
        if timeline is None:
            return None
        index = bisect.bisect_left(timeline.times, time)
        for observation in reversed(timeline.observations[:index]):
            if not uid or not observation.uid or observation.uid == uid:
                return observation
        return None

    def at(self, ref: ObjectRef, version: int) -> list[Observation]:
        """Every observation of `ref` at resourceVersion `version`, in time order."""
        timeline = self._objects.get(ref)
        return list(timeline.by_version.get(version, ())) if timeline else []

    def versions(self, ref: ObjectRef) -> list[int]:
        timeline = self._objects.get(ref)
        return list(timeline.versions) if timeline else []

    def stale(self, ref: ObjectRef, before: Observation, after_version: int | None) -> bool:
        """True if some observation proves a write happened between `before` and the write
        that produced `after_version` (so `before` is not what the server patched)."""
        seen = before.resource_version
        if seen is None or after_version is None:
            return False
        if seen > after_version:
            return True
        timeline = self._objects.get(ref)
        if timeline is None:
            return False
        index = bisect.bisect_right(timeline.versions, seen)
        return index < len(timeline.versions) and timeline.versions[index] < after_version
