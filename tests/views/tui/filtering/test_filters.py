"""The filter language, over the rows of the real recording of the default release."""

from __future__ import annotations

import pytest

from k8s_wiretap.views.tui.filtering.filters import FilterError, parse, shown
from k8s_wiretap.views.tui.listing.masks import from_mask
from k8s_wiretap.views.tui.listing.rows import Row
from tests.views.tui.recorded import explained_index


def matching(text: str) -> list[Row]:
    check = parse(text)
    return [row for row in explained_index().rows if check(row)]


def test_a_term_matches_its_field_case_insensitively() -> None:
    rows = matching("~c SCHEDULER")
    assert rows and all(r.component.startswith("scheduler") for r in rows)
    assert {r.verb for r in matching("~v ^patch$")} == {"patch"}


def test_terms_side_by_side_must_all_match() -> None:
    rows = matching("~c kubectl ~v patch ~r ^deployments$")
    assert len(rows) == 3
    assert all(r.name == "web" and r.namespace == "default" for r in rows)
    assert matching("~c kubectl & ~v patch & ~r ^deployments$") == rows


def test_not_or_and_parentheses() -> None:
    everything = explained_index().rows
    scheduler, leases = matching("~c scheduler"), matching("~c scheduler ~r leases")
    assert leases and len(matching("~c scheduler !~r leases")) == len(scheduler) - len(leases)
    either = matching("~c kubelet | ~c scheduler")
    assert len(either) == len(matching("~c kubelet")) + len(scheduler)
    assert len(matching("!(~c kubelet | ~c scheduler)")) == len(everything) - len(either)
    assert matching("!!~c kubelet") == matching("~c kubelet")


def test_a_bare_word_matches_anywhere_even_the_summary() -> None:
    assert {r.name for r in matching("web-")} and all(
        "web-" in r.name or "web-" in r.path or "web-" in r.summary for r in matching("web-")
    )
    binds = matching('"binds pod"')
    assert binds and all(r.component == "scheduler" for r in binds)
    assert matching("~t binds") == matching("~t binds & ~c scheduler")


def test_flags_errors_watches_noise() -> None:
    assert all((r.status or 0) >= 400 or r.error for r in matching("~e"))
    assert any(r.status == 404 for r in matching("~e"))
    assert matching("~w") == [r for r in explained_index().rows if r.verb == "watch"]
    noise = matching("~noise")
    assert noise and all(r.noise for r in noise)
    assert len(noise) + len(matching("!~noise")) == len(explained_index().rows)


def test_status_and_namespace() -> None:
    assert {r.status for r in matching("~s ^201$")} == {201}
    assert {r.namespace for r in matching("~ns ^kube-node-lease$")} == {"kube-node-lease"}


def test_an_empty_filter_lets_everything_through() -> None:
    assert len(matching("  ")) == len(explained_index().rows)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("~q x", "unknown filter ~q"),
        ("~c", "~c needs a pattern"),
        ("(~c kubelet", "missing )"),
        ("~c kubelet )", "unexpected ')'"),
        ("~c (", "~c needs a pattern"),
        ('"open', "unclosed quote"),
        ("~c [", "bad pattern"),
        ("~c kubelet |", "ends where a term should be"),
    ],
)
def test_what_does_not_parse_says_why(text: str, said: str) -> None:
    with pytest.raises(FilterError, match=said.replace("(", r"\(").replace(")", r"\)")):
        parse(text)


EXPRESSIONS = [
    "~c scheduler",
    "~c SCHEDULER ~v patch !~r leases",
    "~c kubelet | ~c scheduler",
    "!(~v watch | ~v list) web",
    '"binds pod"',
    "~s ^4",
    "~s err",
    "~s …",
    "~e",
    "~w",
    "~noise",
    "!~noise ~ns kube",
    "~u watch=true ~n .",
    "~t replicas",
    "~m ^get$ | ~e",
    "",
]


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_a_filter_over_the_columns_says_what_it_says_of_each_row(text: str) -> None:
    rows = explained_index().rows
    check = parse(text)
    expected = bytes(check(row) for row in rows)
    assert from_mask(check.mask(rows, 0, len(rows)), len(rows)) == expected
    assert from_mask(check.mask(rows, 100, 300), 200) == expected[100:300]


def test_hiding_noise_joins_the_filter() -> None:
    rows = explained_index().rows
    quiet = shown(parse("~c kubelet"), hide_noise=True)
    assert quiet is not None and shown(None, hide_noise=False) is None
    assert [r for r in rows if quiet(r)] == [r for r in matching("~c kubelet") if not r.noise]
    assert from_mask(quiet.mask(rows, 0, len(rows)), len(rows)) == bytes(quiet(r) for r in rows)
