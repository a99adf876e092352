"""The filter state: one value, each key making the next from the one before."""

from __future__ import annotations

from k8s_wiretap.views.tui.filtering.state import FilterState


def test_a_filter_typed_is_on_and_one_that_does_not_parse_keeps_the_one_before() -> None:
    state = FilterState().typed("~c kubelet")
    assert state.text == "~c kubelet" and state.enabled and not state.error
    assert state.check is state.filter
    wrong = state.toggled().typed("~c (")
    assert wrong.text == "~c kubelet" and not wrong.enabled  # the filter before, still off
    assert "needs a pattern" in wrong.error
    assert wrong.typed("").filter is None and wrong.typed("").error == ""


def test_f_turns_the_filter_off_and_n_hides_noise_both_in_the_check() -> None:
    state = FilterState()
    assert state.toggled() is state and state.check is None  # no filter: nothing to turn off
    quiet = state.noise_toggled()
    assert quiet.check is not None and quiet.check.text == "!~noise"
    assert not quiet.shows_as(state) and quiet.noise_toggled().shows_as(state)
    off = quiet.typed("~v patch").toggled()
    assert off.check is not None and off.check.text == "!~noise"
    assert off.shows_as(quiet)  # the filter off lets through what no filter does
    on = off.toggled()
    assert on.check is not None and on.check.text == "(~v patch) !~noise"


def test_esc_clears_the_search_first_then_the_filter() -> None:
    state = FilterState().typed("~c kubelet").searching("binds pod")
    once = state.cleared()
    assert not once.search and once.text == "~c kubelet"
    twice = once.cleared()
    assert twice.filter is None and twice.cleared() is twice
    assert FilterState().typed("~c (").cleared().error == ""


def test_each_search_typed_is_a_new_one_even_for_the_same_text() -> None:
    state = FilterState().searching("web")
    again = state.searching("web")
    assert again.search.text == "web" and again.search is not state.search and again != state


def test_a_row_the_list_must_show_turns_the_filter_off_and_shows_noise() -> None:
    state = FilterState().typed("~c kubelet").noise_toggled().revealing()
    assert state.check is None and state.text == "~c kubelet"
