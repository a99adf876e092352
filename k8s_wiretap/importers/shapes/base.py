"""What a shape is, the registry of them, and detection (`importers/shapes/__init__.py`
says which there are).

A shape is one way a value of a log (a line, an array's item, an export's record: what
`framing` gives) holds audit Events: a `score` that says how much of the shape a value
has (0: none of it), and `events`, which gives the raw audit.k8s.io Event dicts the value
holds, or raises `Unfit` saying why it holds none usable. A file's shape is told once, by
its first value (`detect`); each later value is read by that shape, and only a value that
is none of it is told anew (a file that mixes shapes costs a detection a value, one of a
single shape none).

An Event a shape made, rather than found, says so under `TAKEN`: `taken` (which field of
the Event came from which of the source's), `absent` (what the source lacks that an Event
has); the importer keeps both in the record's `audit` field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture import jsonfast

__all__ = ["DEPTH", "REGISTRY", "TAKEN", "Shape", "Unfit", "detect", "loaded", "nested", "took"]

TAKEN = "wiretapTaken"  # an Event's key (none of audit.k8s.io's) for what a shape made of it
DEPTH = 4  # wrappers inside wrappers, at most (a shipper's line of a CloudWatch message ...)


class Unfit(ValueError):
    """A value that holds no usable audit Event in its shape; the message says why."""


@dataclass(frozen=True)
class Shape:
    """One shape: its name (said in the import's report), how much of it a value has,
    and the Events of a value of it."""

    name: str
    score: Callable[[Any], int]
    events: Callable[[Any], list[Any]]
    family: str = ""


REGISTRY: list[Shape] = []


def register(shape: Shape) -> Shape:
    REGISTRY.append(shape)
    return shape


def detect(value: Any) -> tuple[Shape | None, int]:
    """The shape that has most of `value` (the first of those that have as much), and how
    much; None when no shape has any of it."""
    best, most = None, 0
    for shape in REGISTRY:
        score = shape.score(value)
        if score > most:
            best, most = shape, score
    return best, most


def loaded(value: Any, what: str) -> Any:
    """`value`, parsed when it is JSON's text (a wrapper's string; `jsonfast.loads`, which
    reads as `json` does); Unfit when it is no JSON."""
    if isinstance(value, str | bytes):
        try:
            return jsonfast.loads(value)
        except RecursionError:
            raise Unfit(f"{what} is nested too deep to read") from None
        except ValueError as error:
            raise Unfit(f"{what} is not JSON ({error})") from None
    return value


def nested(value: Any, what: str, depth: int = 1) -> list[Any]:
    """The Events a wrapped value holds, by the shape it has (a wrapper's inner value
    may be any shape: a CloudWatch message inside a shipper's line)."""
    if depth > DEPTH:
        raise Unfit(f"{what} is wrapped more than {DEPTH} times")
    value = loaded(value, what)
    if isinstance(value, list):
        return [event for item in value for event in nested(item, what, depth + 1)]
    shape, _ = detect(value)
    if shape is None:
        raise Unfit(f"{what} is {_kind(value)}, in no shape of an audit log")
    return shape.events(value)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(value)[:6])
        return f"an object ({keys}{', ...' if len(value) > 6 else ''})" if value else "{}"
    return f"a JSON {type(value).__name__}"


def took(event: dict[str, Any], field: str, source: str) -> None:
    """Say under TAKEN that the Event's `field` came from the source's `source`."""
    event.setdefault(TAKEN, {}).setdefault("taken", {})[field] = source


TIMES = ("requestReceivedTimestamp", "stageTimestamp")
OLD_TIMES = ("timestamp", "metadata")  # where audit.k8s.io v1beta1 and v1alpha1 have them


def timed(events: list[Any], when: Any, source: str) -> list[Any]:
    """The events, each that has no time of its own given `when` (RFC 3339: the time its
    wrapper says it was written or received, `source`) as both its times, said."""
    if not isinstance(when, str) or not when:
        return events
    for event in events:
        if not isinstance(event, dict) or any(k in event for k in TIMES + OLD_TIMES):
            continue
        for key in TIMES:
            event[key] = when
            took(event, key, f"{source} (the event has no time of its own)")
    return events


def lacks(event: dict[str, Any], what: str) -> None:
    """Say under TAKEN that the source lacks `what`."""
    absent = event.setdefault(TAKEN, {}).setdefault("absent", [])
    if what not in absent:
        absent.append(what)
