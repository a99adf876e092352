"""An OpenAPI v3 document's address carries a 128-digit hash: on screen it is cut to its
first 12 digits and "…" (a line no longer wraps on it), and the recording keeps it whole."""

from __future__ import annotations

import re

from rich.console import Console

from k8s_wiretap.views.lines import exchange_line, shown_path
from k8s_wiretap.views.tui.detail.panes import TABS
from k8s_wiretap.views.tui.listing.window import Windows
from tests.recorded import story
from tests.views.tui.recorded import indexed

HASHED = re.compile(r"[?&]hash=([0-9A-F]+)")


def test_a_long_hash_is_cut_where_a_path_is_shown() -> None:
    hashed = [e for e in story().exchanges if HASHED.search(e.path)]
    assert hashed
    for exchange in hashed:
        found = HASHED.search(exchange.path)
        assert found is not None and len(found[1]) == 128  # a SHA-512, in the recording
        line = exchange_line(exchange)
        assert f"hash={found[1][:12]}…" in line and found[1][12:20] not in line, line
        assert len(line) < len(exchange.path)
        assert shown_path(exchange.path).endswith("&timeout=32s")  # the rest stays
    assert (
        shown_path("/openapi/v3/apis/apps/v1?hash=ABC123") == "/openapi/v3/apis/apps/v1?hash=ABC123"
    )
    assert shown_path("/api/v1/pods?labelSelector=hash%3DD9D93953F83C7ECEC5A3") == (
        "/api/v1/pods?labelSelector=hash%3DD9D93953F83C7ECEC5A3"
    )


def test_the_explain_tab_shows_the_cut_hash() -> None:
    index = indexed()
    position = next(n for n, row in enumerate(index.rows) if "hash=" in row.path)
    detail = Windows(index).detail(position)
    console = Console(width=200, record=True, color_system=None)
    console.print(TABS["explain"][1](detail))
    said = console.export_text()
    found = HASHED.search(index.rows[position].path)
    assert found is not None
    assert f"hash={found[1][:12]}…" in said and found[1] not in said
