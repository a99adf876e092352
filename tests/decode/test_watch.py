"""Watch events of recorded exchanges, decoded through the decode cache."""

from __future__ import annotations

import dataclasses

from k8s_wiretap.capture.exchange import Body, Exchange
from k8s_wiretap.decode.cache import DecodeCache
from k8s_wiretap.decode.watch import exchange_events
from tests.recorded import story, story_release

RELEASE = story_release().git_version  # the schema of the server the story was recorded on


def _watches() -> list[Exchange]:
    return [e for e in story().exchanges if e.watch_events()]


def test_cached_events_are_the_uncached_ones() -> None:
    cache = DecodeCache()
    for exchange in _watches():
        cached = exchange_events(exchange, "Pod", release=RELEASE, cache=cache)
        plain = exchange_events(exchange, "Pod", release=RELEASE)
        assert cached == plain
    assert cache.hits > 0  # the API server sends the same event to every watcher


def test_a_repeated_frame_shares_its_object_but_not_its_time_or_kind() -> None:
    cache, watch = DecodeCache(), _watches()[0]
    later = dataclasses.replace(
        watch,
        id=watch.id + "-again",
        events=[dataclasses.replace(e, time=e.time + 60) for e in watch.events],
    )
    first = exchange_events(watch, "Pod", release=RELEASE, cache=cache)
    again = exchange_events(later, "Node", release=RELEASE, cache=cache)
    assert [e.object for e in first] == [e.object for e in again]
    assert all(a.object is b.object for a, b in zip(first, again, strict=True) if a.object)
    pairs = zip(first, again, strict=True)
    assert all(a.time is not None and b.time == a.time + 60 for a, b in pairs)
    assert {e.resource_kind for e in first} == {"Pod"}
    assert {e.resource_kind for e in again} == {"Node"}


def test_an_undecodable_frame_is_reported_each_time_it_is_seen() -> None:
    cache, watch = DecodeCache(), _watches()[0]
    event = watch.watch_events()[0]
    broken = dataclasses.replace(event, data=Body(b"\x0a\xff", 2))
    damaged = dataclasses.replace(watch, events=[broken, broken])
    found = exchange_events(damaged, release=RELEASE, cache=cache)
    plain = exchange_events(damaged, release=RELEASE)
    assert found == plain and found[0].error and found[0].error == found[1].error
    assert found[0].error.startswith("undecodable: ")


def test_a_switched_off_cache_decodes_every_frame() -> None:
    cache, watch = DecodeCache(limit=0), _watches()[0]
    exchange_events(watch, release=RELEASE, cache=cache)
    exchange_events(watch, release=RELEASE, cache=cache)
    assert cache.hits == 0 and cache.misses == 2 * len(watch.watch_events())
