"""The list's columns at the widths people use, on real rows."""

from __future__ import annotations

import pytest

from k8s_wiretap.views.tui.listing.columns import header, layout, line
from tests.views.tui.recorded import explained_index

ALWAYS = ["time", "component", "verb", "resource", "target", "status", "summary"]


@pytest.mark.parametrize("width", [79, 99, 119, 159, 239])
def test_the_columns_fit_and_the_summary_keeps_room(width: int) -> None:
    columns = layout(width)
    keys = [c.key for c in columns]
    assert [k for k in keys if k in ALWAYS] == ALWAYS
    assert sum(c.width + 1 for c in columns) - 1 <= width
    assert columns[-1].width >= (16 if width < 100 else 30)
    if width >= 119:
        assert {"duration", "size", "events"} <= set(keys)
    for row in explained_index().rows[:50]:
        assert line(row, columns).cell_len <= width
    assert header(columns).cell_len <= width


def test_a_long_name_keeps_its_start_and_its_end() -> None:
    columns = layout(99)
    pods = [r for r in explained_index().rows if r.resource == "pods" and len(r.target) > 20]
    text = line(pods[0], columns).plain
    assert "default" in text and pods[0].name[-5:] in text and "…" in text


def test_a_sub_component_shows_its_own_name_when_the_whole_is_too_long() -> None:
    rows = [r for r in explained_index().rows if r.component.endswith("/deployment-controller")]
    assert "deployment-" in line(rows[0], layout(119)).plain


def test_a_collection_is_its_namespace_an_object_namespace_and_name() -> None:
    rows = explained_index().rows
    listed = next(r for r in rows if r.verb == "list" and r.namespace == "default")
    assert listed.target == "default"
    got = next(r for r in rows if r.verb == "get" and r.resource == "deployments")
    assert got.target == "default/web"
    cluster = next(r for r in rows if r.resource == "nodes" and r.name)
    assert cluster.target == cluster.name
