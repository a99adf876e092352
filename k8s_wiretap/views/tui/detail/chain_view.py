"""`c`: the chain view — the causal tree of the selected exchange, components as lanes.

One line per hop, in time order: in the lanes (one per component, in its list colour) a
dot where the hop is, joined to the lane of the write that set it off; then its time, its
delay after that write, and what it is. Below, the selected hop: what carried the change
to it (the watch event), and how long it took. Keys step along the chain — the next or
previous hop, up to the write that caused it, down to the first it caused, across to its
siblings —; enter shows the hop in the list (dismissing with its row), esc comes back.
The tree is found in a worker, over the selected exchange's window (`chain_tree.py`).
"""

from __future__ import annotations

import threading
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Static

from k8s_wiretap.views.story import colour_of
from k8s_wiretap.views.tui.detail.chain_tree import ChainTree, Node, build
from k8s_wiretap.views.tui.escaped import escaped_segments
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.rows import clock
from k8s_wiretap.views.tui.listing.window import Windows
from k8s_wiretap.wire.words import counted

__all__ = ["CHAIN_BINDINGS", "ChainScreen", "ChainView", "lanes_header", "line"]

LANE = 2  # cells per lane: its mark and the gap after it

CHAIN_BINDINGS: list[BindingType] = [
    Binding("j,down", "hop(1)", "next hop", id="chain.next"),
    Binding("k,up", "hop(-1)", "previous hop", id="chain.previous"),
    Binding("h,left,p", "parent", "what set it off", id="chain.parent"),
    Binding("l,right", "first_child", "what it set off", id="chain.child"),
    Binding("J,shift+down", "sibling(1)", "next sibling", id="chain.next_sibling", show=False),
    Binding("K,shift+up", "sibling(-1)", "previous sibling", id="chain.prev_sibling", show=False),
    Binding("g,home", "edge(0)", "the root", id="chain.first", show=False),
    Binding("G,end", "edge(-1)", "the last hop", id="chain.last", show=False),
    Binding("enter", "jump", "show in the list", id="chain.jump"),
    Binding("escape,c", "back", "back", id="chain.back"),
]


def _graph(tree: ChainTree, node: Node) -> Text:
    """The lanes for `node`'s line: its dot, joined to its parent's lane."""
    count = len(tree.lanes)
    marks = ["│"] * count
    gaps = [" "] * count
    styles = [f"dim {colour_of(lane)}" for lane in tree.lanes]
    own = tree.lane(node)
    if node.parent is not None:
        parent = tree.lane(tree.nodes[node.parent])
        low, high = sorted((own, parent))
        for lane in range(low, high):
            gaps[lane] = "─"
            if lane > low:
                marks[lane], styles[lane] = "─", "dim"
        if parent != own:
            marks[parent] = "╰" if parent < own else "╯"
            styles[parent] = colour_of(tree.lanes[parent])
    marks[own], styles[own] = "●", f"bold {colour_of(node.component)}"
    text = Text(no_wrap=True)
    for mark, gap, style in zip(marks, gaps, styles, strict=True):
        text.append(mark, style)
        text.append(gap, "dim")
    return text


def line(tree: ChainTree, at: int) -> Text:
    """Hop `at` as a line: lanes, time, delay after its cause, summary."""
    node = tree.nodes[at]
    text = _graph(tree, node)
    text.append(f" {clock(node.time)} ", "dim")
    delay = "" if node.delay_ms is None else f"+{node.delay_ms:.0f} ms"
    text.append(f"{delay:>8} ", "bold" if delay else "")
    text.append(node.summary, "dim" if node.noise else "")
    text.no_wrap, text.overflow = True, "ellipsis"
    return text


def lanes_header(tree: ChainTree) -> Text:
    """The lanes' names, a staircase: each name on its own line, from its lane on."""
    lines = []
    for number, lane in enumerate(tree.lanes):
        text = Text(no_wrap=True, overflow="ellipsis")
        for before in tree.lanes[:number]:
            text.append("│" + " " * (LANE - 1), f"dim {colour_of(before)}")
        text.append(lane, f"bold {colour_of(lane)}")
        lines.append(text)
    return Text("\n").join(lines)


def about(tree: ChainTree, at: int) -> Text:
    """The selected hop, in full: who, what, and what carried the change to it."""
    node = tree.nodes[at]
    text = Text.assemble(
        (f"{at + 1}/{len(tree.nodes)} ", "dim"),
        (node.component, f"bold {colour_of(node.component)}"),
        (f" {clock(node.time)}", "dim"),
    )
    text.append(f"\n{node.summary}", "bold")
    if node.parent is not None:
        cause = tree.nodes[node.parent]
        text.append(f"\n{node.delay_ms:.0f} ms after ", "")
        text.append(cause.component, colour_of(cause.component))
        text.append(f"'s write, by the {node.via}", "")
    else:
        text.append("\nthe root: no watch event set it off (a user's action, or its own)", "dim")
    if node.position is None:
        text.append("  (outside the list's rows)", "dim")
    return text


class ChainView(ScrollView, can_focus=True):
    """The hops of a tree, one line each, with a cursor (Line API: only what is seen)."""

    DEFAULT_CSS = """
    ChainView {
        height: 1fr;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    ChainView > .chain-view--cursor {
        background: $accent 60%;
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"chain-view--cursor"}

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Moved(Message):
        """The cursor is on another hop."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hops: ChainTree | None = None

    def show(self, tree: ChainTree) -> None:
        self.hops = tree
        self.virtual_size = Size(self.size.width, len(tree.nodes))
        self.cursor = tree.start
        self.call_after_refresh(self._follow)

    def validate_cursor(self, value: int) -> int:
        return 0 if self.hops is None else max(0, min(value, len(self.hops.nodes) - 1))

    def watch_cursor(self) -> None:
        self._follow()
        self.refresh()
        self.post_message(self.Moved())

    def _follow(self) -> None:
        top, rows = self.scroll_offset.y, max(1, self.size.height)
        if self.cursor < top or self.cursor >= top + rows:
            self.scroll_to(y=max(0, self.cursor - rows // 2), animate=False, immediate=True)

    def render_line(self, y: int) -> Strip:
        width, number = self.size.width, self.scroll_offset.y + y
        if self.hops is None or number >= len(self.hops.nodes):
            return Strip.blank(width, self.rich_style)
        style = self.rich_style
        if number == self.cursor:
            style += self.get_component_rich_style("chain-view--cursor")
        text = line(self.hops, number)
        text.truncate(width, overflow="ellipsis")
        segments = list(escaped_segments(text.render(self.app.console)))
        return Strip(segments).apply_style(style).crop_extend(0, width, style)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.hops is None:
            return
        number = self.scroll_offset.y + offset.y
        if number < len(self.hops.nodes):
            if number == self.cursor and event.chain > 1:
                self.screen.action_jump()  # type: ignore[attr-defined]
            self.cursor = number


class ChainScreen(Screen[int | None]):
    """The chain view over the whole terminal; dismissed with the row to jump to."""

    DEFAULT_CSS = """
    ChainScreen #chain-title {
        height: 1;
        background: $primary-background;
        padding: 0 1;
    }
    ChainScreen #chain-lanes {
        height: auto;
        max-height: 8;
        padding: 0 1;
        border-bottom: solid $panel-lighten-2;
    }
    ChainScreen ChainView {
        padding: 0 1;
    }
    ChainScreen #chain-about {
        height: auto;
        max-height: 6;
        padding: 0 1;
        border-top: solid $panel-lighten-2;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = CHAIN_BINDINGS

    def __init__(
        self, index: RecordingIndex, windows: Windows, lock: threading.Lock, position: int
    ) -> None:
        super().__init__()
        self.index, self.windows, self.position = index, windows, position
        self._detail_lock = lock
        self.view = ChainView(id="chain-view")
        self._lanes = Static(id="chain-lanes")
        self._about = Static(Text("finding the chain…", style="dim italic"), id="chain-about")

    def compose(self) -> ComposeResult:
        yield Static(Text.from_markup("[bold]causal chain[/]"), id="chain-title")
        yield self._lanes
        yield self.view
        yield self._about
        yield Footer()

    @property
    def hops(self) -> ChainTree | None:
        return self.view.hops

    def on_mount(self) -> None:
        self.view.focus()
        self.run_worker(self._find, thread=True, exclusive=True, group="chain")

    def _find(self) -> None:
        try:
            with self._detail_lock:
                explainer, exchanges = self.windows.around(self.position)
                exchange = exchanges[self.index.rows[self.position].id]
                tree = build(explainer, exchange, self.index.by_id.get)
        except Exception as error:  # one exchange's trouble, said on the screen
            self.app.call_from_thread(self._failed, f"cannot find its chain: {error!r}")
            return
        self.app.call_from_thread(self._show, tree)

    def _show(self, tree: ChainTree) -> None:
        self.view.show(tree)
        self._lanes.update(lanes_header(tree))
        hops = len(tree.nodes)
        lanes = counted(len(tree.lanes), "lane")
        title = f"[bold]causal chain[/]  ·  {counted(hops, 'hop')}, {lanes}"
        self.query_one("#chain-title", Static).update(Text.from_markup(title))
        self._describe()

    def _failed(self, message: str) -> None:
        self._about.update(Text(message, style="red"))

    def _describe(self) -> None:
        if self.hops is not None:
            self._about.update(about(self.hops, self.view.cursor))

    def on_chain_view_moved(self) -> None:
        self._describe()

    def _move(self, to: int) -> None:
        self.view.cursor = to

    # -- actions ----------------------------------------------------------------------------
    def action_hop(self, by: int) -> None:
        if self.hops is not None:
            self._move(self.hops.step(self.view.cursor, by))

    def action_parent(self) -> None:
        if self.hops is not None:
            self._move(self.hops.parent(self.view.cursor))

    def action_first_child(self) -> None:
        if self.hops is not None:
            self._move(self.hops.first_child(self.view.cursor))

    def action_sibling(self, by: int) -> None:
        if self.hops is not None:
            self._move(self.hops.sibling(self.view.cursor, by))

    def action_edge(self, end: int) -> None:
        if self.hops is not None:
            self._move(0 if end == 0 else len(self.hops.nodes) - 1)

    def action_jump(self) -> None:
        if self.hops is None:
            return
        position = self.hops.nodes[self.view.cursor].position
        if position is None:
            self.notify("that hop is not among the list's rows", severity="warning")
            return
        self.dismiss(position)

    def action_back(self) -> None:
        self.dismiss(None)
