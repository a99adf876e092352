"""The selected exchange, explained on demand over its window of the recording."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from k8s_wiretap.views.tui.detail.panes import TABS
from k8s_wiretap.views.tui.listing import window
from k8s_wiretap.views.tui.listing.window import Detail, Windows
from tests.views.tui.recorded import indexed, position


def shown(renderable: object) -> str:
    console = Console(width=140, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_three_replica_apply_replays_as_the_server_did() -> None:
    index = indexed()
    apply = position(index, component="kubectl", verb="patch", resource="deployments")
    detail = Windows(index).detail(apply)
    assert detail.explained.explanation.summary == (
        "kubectl apply patches Deployment default/web (strategic merge patch, three-way)"
    )
    assert detail.replay is not None and detail.replay.matches_server is True
    patch = shown(TABS["patch"][1](detail))
    assert "matches the server's result" in patch
    assert "replicas: 3" in patch
    assert "/spec/replicas" in patch  # the diff and the apply, field by field
    assert "changed by your file" in patch


def test_a_controllers_write_shows_its_chain_back_to_the_users_action() -> None:
    index = indexed()
    windows = Windows(index)
    found = None
    for number, row in enumerate(index.rows):
        if row.component == "scheduler" and row.resource == "pods/binding":
            found = windows.detail(number)
            if len(found.chain) > 2:
                break
    assert found is not None and len(found.chain) > 2
    assert found.chain[0].component == "kubectl"
    assert found.chain[-1].id == found.exchange.id
    explain = shown(TABS["explain"][1](found))
    assert "causal chain" in explain and "caused by" in explain
    assert "binds Pod" in explain


def test_request_response_and_events_tabs_show_the_decoded_exchange() -> None:
    index = indexed()
    windows = Windows(index)
    watch = position(index, component="kubelet", verb="watch", resource="nodes")
    detail = windows.detail(watch)
    events = shown(TABS["events"][1](detail))
    assert "BOOKMARK" in events and "Node" in events and "initial" in events
    request = shown(TABS["request"][1](detail))
    assert request.startswith("GET") and "/api/v1/nodes?allowWatchBookmarks=true" in request
    assert "user-agent" in request.lower() and "hollow-kubelet" in request
    response = shown(TABS["response"][1](detail))
    assert "200 OK" in response and "events: see Events" in response
    get = windows.detail(position(index, component="kubelet", verb="get", resource="nodes"))
    response = shown(TABS["response"][1](get))
    assert "body (protobuf, decoded)" in response and "kind: Node" in response
    assert "6b 38 73 00" in response and "k8s." in response  # the bytes: the k8s\0 envelope
    assert shown(TABS["patch"][1](get)).strip() == "not a PATCH"


def test_a_large_recording_is_explained_over_a_window(monkeypatch: object) -> None:
    import pytest

    patch = pytest.MonkeyPatch()
    patch.setattr(window, "WHOLE", 10)
    patch.setattr(window, "MAX_BEFORE", 100)
    patch.setattr(window, "MAX_AFTER", 50)
    try:
        index = indexed()
        windows = Windows(index)
        apply = position(index, component="kubectl", verb="patch", resource="deployments")
        detail = windows.detail(apply)
        kept = windows._window
        assert kept is not None and 0 < kept.low < apply < kept.high < len(index)
        assert detail.replay is not None and detail.replay.matches_server is True
        windows.detail(apply + 1)
        assert windows._window is kept  # a neighbour reuses the window
    finally:
        patch.undo()


def a_binding(fits: Callable[[Detail], bool]) -> Detail:
    """The first of the scheduler's bindings in the apply story whose detail `fits`."""
    index = indexed()
    windows = Windows(index)
    return next(
        detail
        for number, row in enumerate(index.rows)
        if row.component == "scheduler"
        and row.resource == "pods/binding"
        and fits(detail := windows.detail(number))
    )


def test_a_wrapped_hop_of_the_chain_keeps_its_indent() -> None:
    found = a_binding(lambda detail: len(detail.chain) > 2)
    console = Console(width=60, record=True, color_system=None)  # a narrow pane: hops wrap
    console.print(TABS["explain"][1](found))
    lines = console.export_text().splitlines()
    start = next(n for n, text in enumerate(lines) if "U: the root)" in text) + 1
    hops = lines[start : start + 3 * len(found.chain)]
    depth, wrapped, first = -1, 0, 0
    for text in hops:
        if not text.strip():
            break
        if text.strip()[0].isdigit() or text.lstrip().startswith("▶"):  # a hop's first line
            depth += 1
            first = len(text) - len(text.lstrip())
            if text.lstrip().startswith("▶"):
                first += 2
            continue
        wrapped += 1
        assert len(text) - len(text.lstrip()) >= first, (text, hops)  # under its first line
    assert depth == len(found.chain) - 1 and wrapped > 0, hops


def test_a_hop_of_the_chain_says_its_component_once() -> None:
    """A summary that opens with its component ("kubectl apply patches ...") is not
    preceded by it again ("kubectl: kubectl apply patches ...")."""
    found = a_binding(lambda detail: detail.chain[0].component == "kubectl")
    text = shown(TABS["explain"][1](found))
    chain = text[text.index("U: the root)") :]
    root = found.chain[0]
    assert root.summary.startswith("kubectl ")
    assert f" {root.summary}" in chain
    assert f"kubectl: {root.summary}" not in chain
