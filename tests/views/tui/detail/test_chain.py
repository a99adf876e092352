"""The chain view: the causal tree from the explanation layer, drawn in lanes and walked
with keys, on the committed apply story."""

from __future__ import annotations

from functools import cache

from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import Static

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.detail.chain_tree import ChainTree, build
from k8s_wiretap.views.tui.detail.chain_view import ChainScreen, lanes_header, line
from k8s_wiretap.views.tui.listing.window import Windows
from tests.views.tui.pilot import drive, settle, tab_text
from tests.views.tui.recorded import indexed
from tests.views.tui.test_app import APPLY, status, type_filter


def apply_position() -> int:
    """The row of the three-replica apply's PATCH (the first of kubectl's)."""
    index = indexed()
    return next(
        n
        for n, row in enumerate(index.rows)
        if row.component == "kubectl" and row.method == "PATCH" and row.resource == "deployments"
    )


@cache
def apply_tree() -> ChainTree:
    index = indexed()
    position = apply_position()
    explainer, exchanges = Windows(index).around(position)
    return build(explainer, exchanges[index.rows[position].id], index.by_id.get)


def test_the_tree_of_the_apply_runs_from_kubectl_to_the_kubelet() -> None:
    tree = apply_tree()
    assert tree.start == 0 and tree.nodes[0].component == "kubectl"
    assert tree.nodes[0].parent is None and tree.nodes[0].delay_ms is None
    assert tree.lanes == [
        "kubectl",
        "controller-manager/deployment-controller",
        "controller-manager/replicaset-controller",
        "scheduler",
        "kubelet",
    ]
    times = [node.time for node in tree.nodes]
    assert times == sorted(times)
    for node in tree.nodes[1:]:  # each hop after the write that set it off
        assert node.parent is not None and node.delay_ms is not None
        assert node.delay_ms == (node.time - tree.nodes[node.parent].time) * 1000 >= 0
        assert node.via and node.position is not None
    binding = next(n for n, node in enumerate(tree.nodes) if "binds Pod" in node.summary)
    pod = tree.nodes[binding].parent
    assert pod is not None and "creates Pod" in tree.nodes[pod].summary
    assert "ADDED pods" in tree.nodes[binding].via and "to scheduler" in tree.nodes[binding].via


def test_moving_along_the_tree() -> None:
    tree = apply_tree()
    assert tree.first_child(0) == 1 and tree.parent(1) == 0
    assert tree.parent(0) == 0  # the root has none
    assert tree.step(0, -1) == 0 and tree.step(len(tree.nodes) - 1, 1) == len(tree.nodes) - 1
    parent = next(n for n in range(len(tree.nodes)) if len(tree.children(n)) > 1)
    siblings = tree.children(parent)
    assert tree.sibling(siblings[0], 1) == siblings[1]
    assert tree.sibling(siblings[-1], 1) == siblings[-1]
    leaf = next(n for n in range(len(tree.nodes)) if not tree.children(n))
    assert tree.first_child(leaf) == leaf


def test_a_hop_is_drawn_in_its_lane_joined_to_its_cause() -> None:
    tree = apply_tree()
    root = line(tree, 0)
    assert root.plain.startswith("● │ │ │ │") and "kubectl apply patches" in root.plain
    first = line(tree, 1).plain  # the deployment controller, set off by kubectl
    delay = tree.nodes[1].delay_ms  # after kubectl's write, as the recording's times say
    assert first.startswith("╰─● │ │ │") and delay is not None and f"+{delay:.0f} ms" in first
    colours = {span.style for span in line(tree, 1).spans if "●" in line(tree, 1).plain}
    assert any("green" in str(style) for style in colours)
    header = lanes_header(tree).plain.splitlines()
    assert header[0] == "kubectl" and header[-1] == "│ │ │ │ kubelet"


async def opened(app: ReplayApp, pilot: Pilot[int]) -> ChainScreen:
    await pilot.press("c")
    for _ in range(200):
        await pilot.pause(0.05)
        screen = app.screen
        if isinstance(screen, ChainScreen) and screen.hops is not None:
            await pilot.pause()
            return screen
    raise TimeoutError("the chain view did not show its tree")


def about_text(screen: ChainScreen) -> str:
    return str(screen.query_one("#chain-about", Static).content)


def test_from_the_apply_down_to_the_binding_and_the_kubelet_and_back() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, APPLY)
        await settle(app, pilot)
        screen = await opened(app, pilot)
        assert screen.hops is not None and screen.view.cursor == 0
        await pilot.press("l", "l")  # the ReplicaSet, its new Pod
        assert "creates Pod" in screen.hops.nodes[screen.view.cursor].summary
        await pilot.press("l", "J")  # its first child, then the next sibling
        binding = screen.hops.nodes[screen.view.cursor]
        assert binding.component == "scheduler" and "binds Pod" in binding.summary
        assert "ms after" in about_text(screen) and "ADDED pods" in about_text(screen)
        await pilot.press("enter")  # the list jumps to it, the filter that hid it off
        await pilot.pause()
        assert not isinstance(app.screen, ChainScreen)
        assert app.exchange_list.selected == binding.position
        await settle(app, pilot)
        assert app.detail_pane.detail is not None
        assert app.detail_pane.detail.exchange.id == binding.id

        screen = await opened(app, pilot)  # from the binding: the same tree, on it
        assert screen.hops is not None
        assert screen.hops.nodes[screen.view.cursor].id == binding.id
        below = screen.hops.children(screen.view.cursor)  # in time order: found by what it is
        reports = next(
            n for n, c in enumerate(below) if screen.hops.nodes[c].component == "kubelet"
        )
        await pilot.press("l", *["J"] * reports)
        kubelet = screen.hops.nodes[screen.view.cursor]
        assert kubelet.component == "kubelet" and "reports Pod" in kubelet.summary
        await pilot.press("h")
        assert screen.hops.nodes[screen.view.cursor].id == binding.id
        await pilot.press("G", "k", "g")
        assert screen.view.cursor == 0
        await pilot.press("escape")  # back, nothing moved
        assert not isinstance(app.screen, ChainScreen)
        assert app.exchange_list.selected == binding.position

        screen = await opened(app, pilot)
        await pilot.press("l", *["J"] * reports, "enter")
        await pilot.pause()
        await settle(app, pilot)
        assert app.exchange_list.selected == kubelet.position
        detail = app.detail_pane.detail
        assert detail is not None and detail.exchange.method == "PATCH"
        assert detail.exchange.info.subresource == "status"

    drive(script)


def test_the_walkthrough_keys_do_not_reach_through_the_chain_view() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await pilot.press("w")
        await pilot.pause()
        screen = await opened(app, pilot)
        at = app._narration.at
        await pilot.press("l", "right", "h")
        assert app._narration.at == at and isinstance(app.screen, ChainScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, ChainScreen) and app._narration.is_open
        assert screen.hops is not None

    drive(script)


def test_u_and_U_walk_the_explain_tabs_chain_from_the_keys() -> None:
    """The Explain tab's hops, as a click on them: `u` the one above, `U` the root."""

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~r pods/binding")
        await pilot.press("j", "j")
        await settle(app, pilot)
        detail = app.detail_pane.detail
        assert detail is not None and len(detail.chain) > 2
        assert "u: up one, U: the root" in tab_text(app, "explain")
        above = detail.chain[-2]  # what set the binding off (the pod's create)
        await pilot.press("enter", "u")  # from the detail pane too
        assert app.exchange_list.has_focus
        assert app.exchange_list.selected == above.position  # the filter hid it: off now
        assert "off" in status(app)
        await settle(app, pilot)
        hops = [hop.id for hop in detail.chain]
        again = app.detail_pane.detail
        assert again is not None and [hop.id for hop in again.chain] == hops[:-1]
        await pilot.press("U")
        root = detail.chain[0]
        assert root.component == "kubectl" and app.exchange_list.selected == root.position
        await settle(app, pilot)
        app.commands.said = ""
        await pilot.press("u")  # the root: nothing above it
        assert app.commands.said == "nothing in the recording caused it: its chain begins here"
        assert app.exchange_list.selected == root.position

    drive(script)


def test_u_and_U_are_bindings_of_their_own() -> None:
    ids = {b.id: b.key for b in ReplayApp.all_bindings() if isinstance(b, Binding)}
    assert (ids["app.cause"], ids["app.chain_root"]) == ("u", "U")
