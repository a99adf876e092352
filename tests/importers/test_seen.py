"""The ids an import has given, in bounded memory: the last ones exactly, those before in a
Bloom filter that never forgets one (it may hold one never given: a rename, no more)."""

from __future__ import annotations

from k8s_wiretap.importers.seen import Bloom, Seen


def test_ids_past_the_exact_ones_are_still_seen_and_the_exact_set_stays_bounded() -> None:
    seen = Seen(exact=1000)
    given = [f"flow-{n}" for n in range(10_000)]
    for key in given:
        seen.add(key)
    assert all(key in seen for key in given)
    assert len(seen._last) == 1000  # the rest are bits of the filter
    never = [f"other-{n}" for n in range(10_000)]
    assert sum(key in seen for key in never) <= 2  # a Bloom filter's rare yes


def test_a_bloom_filter_holds_what_was_added() -> None:
    bloom = Bloom()
    bloom.add("ü\ud800")  # any text, a lone surrogate too (an id from a file)
    assert "ü\ud800" in bloom
    assert "x" not in bloom
