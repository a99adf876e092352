"""The decode cache: what repeats is decoded once, within a limit of bytes."""

from __future__ import annotations

from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.decode.cache import DecodeCache


def test_a_body_seen_before_is_not_decoded_again() -> None:
    cache, calls = DecodeCache(), []

    def decode() -> Decoded:
        calls.append(1)
        return Decoded("json", {"kind": "Pod"})

    first = cache.get((b'{"kind":"Pod"}', "application/json", None, False), decode)
    again = cache.get((b'{"kind":"Pod"}', "application/json", None, False), decode)
    other = cache.get((b'{"kind":"Pod"}', "application/json", "v1.20.2", False), decode)
    assert first is again and other is not first and len(calls) == 2
    assert (cache.hits, cache.misses) == (1, 2)


def test_the_least_recently_used_bodies_go_first_beyond_the_limit() -> None:
    cache = DecodeCache(limit=10)
    for data in (b"aaaa", b"bbbb", b"aaaa", b"cccc"):  # 12 bytes: bbbb goes, aaaa was used
        cache.get((data, "", None, False), lambda: Decoded("text", "x"))
    assert cache.misses == 3
    cache.get((b"aaaa", "", None, False), lambda: Decoded("text", "x"))
    cache.get((b"bbbb", "", None, False), lambda: Decoded("text", "x"))
    assert (cache.hits, cache.misses) == (2, 4)
    cache.get((b"x" * 11, "", None, False), lambda: Decoded("text", "x"))  # larger: not kept
    cache.get((b"x" * 11, "", None, False), lambda: Decoded("text", "x"))
    assert cache.misses == 6
