"""`o`: the object timeline — every version of the selected exchange's object.

From any exchange about one object (a write, a GET, a watch of one name; a LIST or a
watch of many has none), the object's versions in resourceVersion order, each
incarnation (uid) apart, are listed on the left: resourceVersion, time (not on a narrow
screen), who wrote it, what changed in one line. On the right, the selected version's
changes, one a line, and below them why: the write (its client, verb, patch type, field
manager), its explanation, the causal chain up to its root, what managedFields say (the
manager recorded, who no longer manages which fields, where the write's manager is not
among them), and where it was seen. A version the wiretap did not see being written says
so, with its sightings and managedFields.

Keys: `tab` moves between the two sides (`h` `l`: to the left one, to the right one);
`enter` shows the version's write (or, for a version not seen written, the first exchange
it was seen in) in the list and closes the timeline; `c` opens the chain view of that
write; `f` on a change tells that field's story, value by value, each step with its
writer and cause (`f` or `esc` back to the versions); `esc` closes.

The history is made in a worker (`object_rows.py`: the object's rows, read back), and
kept per object: opened again, it shows at once. A recording being followed is looked
at every `LIVE_EVERY` seconds: when the object's rows changed, the timeline is made
again, the cursor kept on the version it was on, and the title says how many versions
came since it opened.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from k8s_wiretap.errors import UsageError
from k8s_wiretap.explain.changes import Changed
from k8s_wiretap.explain.names import spoken
from k8s_wiretap.explain.objects import FieldStep, ObjectHistory, Version, field_story
from k8s_wiretap.kube.refs import ObjectRef
from k8s_wiretap.views.story import colour_of
from k8s_wiretap.views.tui.detail.chain_view import ChainScreen
from k8s_wiretap.views.tui.detail.object_rows import Timelines
from k8s_wiretap.views.tui.escaped import escaped
from k8s_wiretap.views.tui.listing.rows import clock
from k8s_wiretap.wire.words import counted

__all__ = ["TIMELINE_BINDINGS", "TimelineScreen", "version_line", "why_text"]

LIVE_EVERY = 1.0  # seconds between two looks at a followed recording
BECAUSE = 3  # causes said at most, nearest first, the root last (`c`: the whole chain)
WHO = 22  # cells of the writer's column
NARROW = 60  # cells of the versions list under which a line has no time (the pane says it)
BOOKKEEPING = frozenset({"metadata.generation", "status.observedGeneration"})

TIMELINE_BINDINGS: list[BindingType] = [
    Binding("tab", "switch", "versions/changes", id="timeline.switch"),
    Binding("h,left", "side('versions')", "the versions", id="timeline.versions", show=False),
    Binding("l,right", "side('changes')", "the changes", id="timeline.changes", show=False),
    Binding("enter", "jump", "show in the list", id="timeline.jump"),
    Binding("c", "chain", "its chain", id="timeline.chain"),
    Binding("f", "field", "field's story", id="timeline.field"),
    Binding("escape,o", "back", "back", id="timeline.back"),
]


def _who(version: Version) -> str:
    writer = version.writer
    if writer is None:
        return "not seen written"
    return writer.command or spoken(writer.component)


def version_line(version: Version, changes: bool = True, narrow: bool = False) -> Text:
    """A version as a line of the list: rv, time (not when `narrow`), its writer, what
    changed (`changes`)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"rv {version.resource_version or '?':<6} ", "bold")
    who_cells = WHO - 4 if narrow else WHO
    if not narrow:
        text.append(f"{clock(version.time)} ", "dim")
    writer = version.writer
    who = _who(version).removeprefix("the ")
    style = colour_of(writer.component) if writer else "yellow italic"
    text.append(f"{who[:who_cells]:<{who_cells}} ", style)
    if not changes:
        return text
    if version.first and not version.changes:
        text.append("created" if version.created else "first seen", "italic")
    elif version.changes:
        text.append(_telling(version).words)
        if len(version.changes) > 1:
            text.append(f" (+{len(version.changes) - 1})", "dim")
    else:
        text.append("no field changed", "dim")
    return text


def _telling(version: Version) -> Changed:
    """The change a version's line says: the first but the generation's, which every
    change of the spec bumps."""
    said = [c for c in version.changes if c.path not in BOOKKEEPING]
    return (said or version.changes)[0]


def _head(version: Version) -> Text:
    writer = version.writer
    text = Text.assemble((f"rv {version.resource_version or '?'}", "bold"))
    text.append(f"  {clock(version.time)}  ", "dim")
    if writer is None:
        seen = sorted({f"{spoken(s.component)}'s {s.source}" for s in version.sightings})
        text.append("written by a client the wiretap did not see", "yellow")
        text.append(f"; seen in {', '.join(seen)}")
        return text
    how = writer.verb + (f" ({writer.patch})" if writer.patch else "")
    how += f" of {writer.subresource}" if writer.subresource else ""
    text.append(("created by " if version.created else "") + _who(version), "bold")
    text.append(f": {how}, field manager {writer.field_manager}")
    return text


def why_text(version: Version, because: list[str] | None) -> Text:
    """Why `version` is: its write, the explanation, the chain (`because`, nearest first;
    None while it is being found), managedFields, and where it was seen."""
    text = _head(version)
    writer = version.writer
    if writer is not None:
        text.append("\nwhy: ", "bold")
        text.append(writer.summary)
        if because is None:
            text.append("\nbecause: finding the causal chain…", "dim italic")
        for said in _shortened(because or []):
            text.append("\nbecause: ", "bold")
            text.append(said, "dim" if said.startswith("…") else "")
    if version.managers:
        text.append("\nmanagedFields: ", "bold")
        text.append(", ".join(str(m) for m in version.managers))
    for lost in version.lost:
        text.append("\nmanagedFields: ", "bold")
        text.append(str(lost))
    if version.disagrees and writer is not None:
        text.append(
            f"\nmanagedFields do not name {writer.field_manager}, the write's manager", "yellow"
        )
    sources = ", ".join(sorted({s.source for s in version.sightings}))
    times = len(version.sightings)
    text.append(f"\nseen {'once' if times == 1 else f'{times} times'} ({sources})", "dim")
    return text


def _shortened(because: list[str]) -> list[str]:
    """The nearest causes and the root, the others counted (as `k8s-wiretap history`)."""
    if len(because) <= BECAUSE:
        return because
    left = len(because) - BECAUSE + 1
    return [*because[: BECAUSE - 1], f"… ({left} more: c shows them) …", because[-1]]


class _Lines(OptionList):
    """A list with the list's keys, a line an option (cut, not wrapped)."""

    DEFAULT_CSS = """
    _Lines {
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
        Binding("g", "first", "first", show=False),
        Binding("G", "last", "last", show=False),
    ]


class TimelineScreen(Screen[int | None]):
    """An object's versions and what changed in each; dismissed with the row to jump to."""

    DEFAULT_CSS = """
    TimelineScreen #timeline-title {
        height: 1;
        background: $primary-background;
        padding: 0 1;
    }
    TimelineScreen #timeline-versions {
        width: 58%;
        height: 1fr;
        border: none;
        border-right: solid $panel-lighten-2;
    }
    TimelineScreen #timeline-right {
        width: 1fr;
    }
    TimelineScreen #timeline-changes {
        height: 1fr;
        border: none;
    }
    TimelineScreen #timeline-why {
        height: auto;
        max-height: 60%;
        padding: 0 1;
        border-top: solid $panel-lighten-2;
    }
    TimelineScreen OptionList:focus {
        border: none;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = TIMELINE_BINDINGS

    def __init__(self, timelines: Timelines, position: int) -> None:
        super().__init__()
        self.timelines, self.position = timelines, position
        self.ref: ObjectRef | None = None
        self.history: ObjectHistory | None = None
        self.opened_with = 0  # versions when it opened: those since are counted
        self.field: str | None = None  # the field whose story is shown
        self.steps: list[FieldStep] = []
        self._looking = False  # a worker is looking at a followed recording
        self._drawn_narrow = False  # the versions' lines were made for a narrow list
        self._rows: list[int | None] = []  # the versions list's options: version numbers
        self._lines: list[Version | None] = []  # the right side's options: their versions
        self._title = Static(Text("finding the object…", style="dim italic"), id="timeline-title")
        self.versions = _Lines(id="timeline-versions")
        self.changes = _Lines(id="timeline-changes")
        self._why = Static(id="timeline-why")

    def compose(self) -> ComposeResult:
        yield self._title
        with Horizontal():
            yield self.versions
            with Vertical(id="timeline-right"):
                yield self.changes
                yield self._why
        yield Footer()

    def on_mount(self) -> None:
        self.versions.focus()
        self.run_worker(self._find, thread=True, exclusive=True, group="timeline")
        if not self.timelines.index.done:
            self.set_interval(LIVE_EVERY, self._look_again)

    # -- made in workers --------------------------------------------------------------------
    def _find(self) -> None:
        try:
            ref = self.timelines.object_at(self.position)
            if isinstance(ref, str):
                self.app.call_from_thread(self._none, ref)
                return
            rows = len(self.timelines.rows_of(ref))
            self.app.call_from_thread(self._making, ref, rows)
            history = self.timelines.history(ref)
        except Exception as error:  # one object's trouble, said, not the app's
            self.app.call_from_thread(self._none, f"cannot make its history: {error!r}")
            return
        self.app.call_from_thread(self._show, ref, history)

    def _look_again(self) -> None:
        if self.ref is not None and not self._looking:
            self._looking = True
            self.run_worker(self._again, thread=True, exclusive=True, group="timeline")

    def _again(self) -> None:
        """The history as the rows are now, shown if it is not the one on screen: the
        timelines keep a history until its rows change, so asking is cheap, and a look
        whose showing was lost (the screen busy) is made good by the next."""
        ref = self.ref
        try:
            if ref is None:
                return
            history = self.timelines.history(ref)
        except Exception as error:  # the file went on changing: said, the timeline kept
            self.app.call_from_thread(self.notify, f"cannot refresh it: {error!r}", markup=False)
            return
        finally:
            self._looking = False
        if history is not self.history:
            self.app.call_from_thread(self._show, ref, history)

    def _find_because(self, version: Version) -> None:
        writer = version.writer
        if writer is None:
            return
        because = self.timelines.because(writer.exchange.id)
        self.app.call_from_thread(self._because_found, version, because or [])

    # -- shown ------------------------------------------------------------------------------
    def _none(self, why: str) -> None:
        self.app.notify(why, severity="warning", markup=False)
        self.dismiss(None)

    def _making(self, ref: ObjectRef, rows: int) -> None:
        if self.history is None:
            said = f"{ref}: its history from the {counted(rows, 'exchange')} that can carry it…"
            self._title.update(escaped(Text(said, style="dim italic")))

    def _show(self, ref: ObjectRef, history: ObjectHistory) -> None:
        kept = self.current
        first = self.history is None
        self.ref, self.history = ref, history
        if first:
            self.opened_with = len(history.versions)
        self._fill_versions(history, kept)
        self._say_title()
        if self.field is not None:
            self._show_field(self.field)

    def _say_title(self) -> None:
        history = self.history
        if history is None or self.ref is None:
            return
        ref = self.ref
        where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        count = len(history.versions)
        title = Text.assemble(("history", "bold"), f"  ·  {history.kind} {where}")
        title.append(f"  ·  {counted(count, 'version')}")
        incarnations = len(history.incarnations())
        if incarnations > 1:
            title.append(f" in {incarnations} incarnations")
        if count > self.opened_with:
            title.append(f"  ·  {count - self.opened_with} since it opened", "bold green")
        if self.field is not None:
            steps = len(self.steps)
            title.append(f"  ·  {self.field}: {counted(steps, 'step')}", "bold")
        self._title.update(escaped(title))

    def _fill_versions(self, history: ObjectHistory, kept: Version | None) -> None:
        options: list[Option] = []
        self._rows = []
        narrow = self._drawn_narrow = self._narrow()
        incarnations = history.incarnations()
        number = 0
        for versions in incarnations:
            if len(incarnations) > 1:
                uid = escaped(Text(f"uid {versions[0].uid}", style="dim"))
                options.append(Option(uid, disabled=True))
                self._rows.append(None)
            for version in versions:
                options.append(Option(escaped(version_line(version, narrow=narrow))))
                self._rows.append(number)
                number += 1
        self.versions.clear_options()
        self.versions.add_options(options)
        if not history.versions:
            self._why.update(Text("the recording shows no version of it", style="dim"))
            return
        wanted = self._opened_on(history) if kept is None else self._same(history, kept)
        self.versions.highlighted = self._rows.index(wanted)

    def _narrow(self) -> bool:
        return 0 < self.versions.size.width < NARROW

    def on_resize(self) -> None:
        """A terminal made narrower or wider: the versions' lines with or without time
        (once the list has its new width)."""
        self.call_after_refresh(self._refill)

    def _refill(self) -> None:
        history = self.history
        if history is not None and self._narrow() != self._drawn_narrow:
            self._fill_versions(history, self.current)

    def _opened_on(self, history: ObjectHistory) -> int:
        """The version the exchange it was opened on made or showed; else (a GET that
        found nothing, a refused write) the last one seen before it, or the first."""
        rows = self.timelines.index.rows
        exchange = rows.ids.id_of(self.position)
        for number, version in enumerate(history.versions):
            if any(s.exchange == exchange for s in version.sightings):
                return number
            if version.writer is not None and version.writer.exchange.id == exchange:
                return number  # a scale: its answer is a Scale, not this version
        when = rows.time[self.position]
        before = [n for n, v in enumerate(history.versions) if v.time <= when]
        return before[-1] if before else 0

    @staticmethod
    def _same(history: ObjectHistory, kept: Version) -> int:
        for number, version in enumerate(history.versions):
            if (version.uid, version.resource_version) == (kept.uid, kept.resource_version):
                return number
        return len(history.versions) - 1

    @property
    def current(self) -> Version | None:
        """The version the right side is about: the highlighted one, or in a field's
        story, the highlighted step's."""
        if self.field is not None and self.changes.has_focus:
            at = self.changes.highlighted
            if at is not None and at < len(self._lines):
                return self._lines[at]
        at = self.versions.highlighted
        if self.history is None or at is None or at >= len(self._rows):
            return None
        number = self._rows[at]
        return None if number is None else self.history.versions[number]

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        if message.option_list is self.versions and self.field is None:
            self._fill_changes()
        self._describe()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self.action_jump()

    def _fill_changes(self) -> None:
        version = self.current
        self.changes.clear_options()
        self._lines = []
        if version is None:
            return
        if version.first and not version.changes:
            said = "created with what it holds" if version.created else "first seen here"
            self.changes.add_option(Option(escaped(Text(said, style="italic")), disabled=True))
            self._lines.append(None)
        for change in version.changes:
            self.changes.add_option(Option(escaped(Text(change.words))))
            self._lines.append(version)
        if version.changes:
            self.changes.highlighted = 0

    def _describe(self) -> None:
        version = self.current
        if version is None:
            return
        writer = version.writer
        because = None if writer is None else self.timelines.known_because(writer.exchange.id)
        self._why.update(escaped(why_text(version, because)))
        if writer is not None and because is None:
            self.run_worker(
                lambda: self._find_because(version), thread=True, exclusive=True, group="because"
            )

    def _because_found(self, version: Version, because: list[str]) -> None:
        if self.current is version:
            self._why.update(escaped(why_text(version, because)))

    # -- a field's story --------------------------------------------------------------------
    def _show_field(self, field: str) -> None:
        if self.history is None:
            return
        try:
            steps = field_story(self.history, field)
        except UsageError as error:
            self.notify(str(error), severity="warning", markup=False)
            return
        self.field, self.steps = field, steps
        self.changes.clear_options()
        self._lines = []
        for step in steps:
            self.changes.add_option(Option(escaped(version_line(step.version, changes=False))))
            self._lines.append(step.version)
            said = [f"{p} = {v}" for p, v in step.values.items()] or [c.words for c in step.changes]
            for words in said:
                self.changes.add_option(Option(escaped(Text(f"    {words}"))))
                self._lines.append(step.version)
        self.changes.highlighted = 0 if steps else None
        self.changes.focus()
        self._say_title()
        self._describe()

    # -- actions ----------------------------------------------------------------------------
    def action_switch(self) -> None:
        self.action_side("changes" if self.versions.has_focus else "versions")

    def action_side(self, side: str) -> None:
        (self.changes if side == "changes" else self.versions).focus()
        self._describe()

    def _row_of(self, version: Version | None) -> int | None:
        """The row of the version's write, else of the first exchange it was seen in (an
        etcd record is no row)."""
        if version is None:
            return None
        if version.writer is not None:
            return self.timelines.position(version.writer.exchange.id)
        rows = (self.timelines.position(s.exchange) for s in version.sightings if s.exchange)
        return next((row for row in rows if row is not None), None)

    def action_jump(self) -> None:
        position = self._row_of(self.current)
        if position is None:
            self.notify("that version's exchange is not among the list's rows", severity="warning")
            return
        self.dismiss(position)

    def action_chain(self) -> None:
        version = self.current
        if version is None or version.writer is None:
            self.notify("no write of this version was seen: no chain", severity="warning")
            return
        position = self.timelines.position(version.writer.exchange.id)
        if position is None:
            self.notify("that write is not among the list's rows", severity="warning")
            return
        timelines = self.timelines
        screen = ChainScreen(timelines.index, timelines.windows, timelines.lock, position)
        self.app.push_screen(screen, self._chained)

    def _chained(self, position: int | None) -> None:
        if position is not None:
            self.dismiss(position)

    def action_field(self) -> None:
        if self.field is not None:
            self._leave_field()
            return
        version = self.current
        at = self.changes.highlighted
        if version is None or not self.changes.has_focus or at is None or not version.changes:
            self.notify("select a change (tab) to see its field's story", severity="warning")
            return
        self._show_field(version.changes[at].path)

    def _leave_field(self) -> None:
        self.field, self.steps = None, []
        self.versions.focus()
        self._fill_changes()
        self._say_title()
        self._describe()

    def action_back(self) -> None:
        if self.field is not None:
            self._leave_field()
        else:
            self.dismiss(None)
