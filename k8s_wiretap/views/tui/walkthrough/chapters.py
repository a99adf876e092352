"""Walkthroughs: chapters kept as data beside the recordings, found by name.

`recordings/NAME.walkthrough.yaml` holds a title, the recording it walks through (beside
it) and its chapters, each a title, a short text and how to find its exchange: a filter
of the list's language (`filtering/filters.py`), narrowed to what came before another chapter's
exchange (`before`) or what that exchange set off (`chain`), or the watch that told
another chapter's component (`watch_of`), or another chapter's exchange again (`same`).
Never an exchange id: a recording made again still has its story. `chapters_of` borrows
another walkthrough's chapters (the 1.20 recording tells the same story). `steps.py`
finds the exchanges; the file's own comment says the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.paths import RECORDINGS
from k8s_wiretap.views.tui.detail.panes import TABS
from k8s_wiretap.views.tui.filtering.filters import FilterError, parse
from k8s_wiretap.wire import yamltext

__all__ = [
    "DEFAULT",
    "RECORDINGS",
    "SUFFIX",
    "Chapter",
    "Walkthrough",
    "WalkthroughError",
    "for_recording",
    "load",
    "names",
]

SUFFIX = ".walkthrough.yaml"
DEFAULT = "apply-story"
ANCHORS = ("before", "chain", "watch_of", "same")
FACTS = ("cause", "patch", "fields", "etcd")  # a chapter's, unless it says
ASKED = (*FACTS, "clients", "chain")  # clients: who talks to whom, over the whole recording;
# chain: the causal chain from the user's action, hop by hop (the Explain tab has it)


class WalkthroughError(WiretapError):
    """A walkthrough file that does not say what it should; the message says where."""


@dataclass(frozen=True)
class Chapter:
    id: str
    title: str
    text: str
    find: str = ""  # a filter expression
    anchor: str = ""  # one of ANCHORS, or "" (the first match in the recording)
    of: str = ""  # the chapter the anchor names
    tab: str = "explain"
    facts: tuple[str, ...] = FACTS  # what the narration tells of the exchange


@dataclass(frozen=True)
class Walkthrough:
    name: str
    title: str
    recording: Path
    chapters: tuple[Chapter, ...]


def names(folder: Path = RECORDINGS) -> list[str]:
    """The walkthroughs in `folder`, by name."""
    return sorted(p.name.removesuffix(SUFFIX) for p in folder.glob(f"*{SUFFIX}"))


def load(name: str = DEFAULT, folder: Path = RECORDINGS) -> Walkthrough:
    """The walkthrough `name` of `folder`: UsageError (naming those there are) if there is
    none, WiretapError if its recording is missing."""
    path = folder / f"{name}{SUFFIX}"
    if not path.is_file():
        known = ", ".join(names(folder)) or f"none in {folder}"
        raise UsageError(f"no walkthrough {name!r}: the walkthroughs are {known}")
    spec = _read(path)
    chapters_of = spec.get("chapters_of")
    source = _read(folder / f"{chapters_of}{SUFFIX}") if chapters_of else spec
    recording = folder / str(spec.get("recording") or f"{name}.jsonl.gz")
    if not recording.is_file():
        known = ", ".join(names(folder))
        raise WiretapError(
            f"walkthrough {name!r}: its recording {recording} is missing "
            f"(the walkthroughs are {known})"
        )
    chapters = tuple(_chapter(path, n, c) for n, c in enumerate(source.get("chapters") or []))
    _check(path, chapters)
    return Walkthrough(name, str(spec.get("title") or name), recording, chapters)


def for_recording(recording: Path) -> Walkthrough | None:
    """The walkthrough beside `recording` that walks through it, if there is one."""
    recording = recording.resolve()
    folder = recording.parent
    for name in names(folder):
        try:
            walkthrough = load(name, folder)
        except WiretapError:
            continue
        if walkthrough.recording.resolve() == recording:
            return walkthrough
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        spec = yamltext.load(path.read_text())
    except OSError as error:
        raise WalkthroughError(f"cannot read {path}: {error.strerror}") from None
    except yamltext.YAMLError as error:
        raise WalkthroughError(f"{path}: not YAML ({error})") from None
    if not isinstance(spec, dict):
        raise WalkthroughError(f"{path}: not a walkthrough (a mapping with chapters)")
    return spec


def _chapter(path: Path, number: int, spec: Any) -> Chapter:
    where = f"{path.name}: chapter {number + 1}"
    if not isinstance(spec, dict) or not spec.get("title"):
        raise WalkthroughError(f"{where}: a chapter needs a title")
    anchors = [a for a in ANCHORS if spec.get(a)]
    if len(anchors) > 1:
        raise WalkthroughError(f"{where}: one of {', '.join(ANCHORS)}, not {anchors}")
    anchor = anchors[0] if anchors else ""
    find = str(spec.get("find") or "")
    if not find and anchor not in ("same", "watch_of"):
        raise WalkthroughError(f"{where}: how to find its exchange? (find: a filter)")
    if find:
        try:
            parse(find)
        except FilterError as error:
            raise WalkthroughError(f"{where}: find {find!r}: {error}") from None
    tab = str(spec.get("tab") or "explain")
    if tab not in TABS:
        raise WalkthroughError(f"{where}: tab {tab!r}: one of {', '.join(TABS)}")
    facts = tuple(str(f) for f in spec.get("facts") or FACTS)
    if unknown := set(facts) - set(ASKED):
        raise WalkthroughError(f"{where}: facts {sorted(unknown)}: of {', '.join(ASKED)}")
    return Chapter(
        str(spec.get("id") or f"chapter-{number + 1}"),
        str(spec["title"]),
        " ".join(str(spec.get("text") or "").split()),
        find,
        anchor,
        str(spec.get(anchor) or ""),
        tab,
        facts,
    )


def _check(path: Path, chapters: tuple[Chapter, ...]) -> None:
    if not chapters:
        raise WalkthroughError(f"{path}: no chapters")
    ids = [c.id for c in chapters]
    for chapter in chapters:
        if chapter.anchor and chapter.of not in ids:
            raise WalkthroughError(
                f"{path.name}: chapter {chapter.id!r}: {chapter.anchor} {chapter.of!r}: "
                "no chapter has that id"
            )
