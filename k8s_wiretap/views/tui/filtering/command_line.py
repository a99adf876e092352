"""The command line: `:` commands and `s` search, typed at the bottom, k9s/mitmproxy style.

`CommandLine` is the input (opened for a command or a search; enter posts `Entered`, esc
gives up); `parse` reads a command and `COMMANDS` says what each does (help, README).
What a command does is `commands.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Label

from k8s_wiretap.views.tui.filtering.inputs import ClosingInput

__all__ = ["COMMANDS", "COMMAND_HELP", "Command", "CommandError", "CommandLine", "parse"]

COMMANDS = {
    "filter": ("EXPR", "filter the list (as /; no EXPR: none)"),
    "search": ("TEXT", "find TEXT in the rows' summary, path, component, name (as s)"),
    "save": ("FILE", "save the recording to FILE (:save! replaces an existing FILE)"),
    "save-filtered": ("FILE", "save the exchanges the list shows (:save-filtered! replaces)"),
    "copy": ("request|response", "copy that body, decoded as shown, to the clipboard"),
    "theme": ("light|dark", "the colours (no word: the other one; as t)"),
    "chain": ("", "the selected exchange's causal chain (as c)"),
    "event": ("N", "open the selected watch's event N (as a click in Events)"),
    "help": ("", "every key and command (as ?)"),
    "quit": ("", "quit (as q)"),
}
ALIASES = {"q": "quit", "h": "help", "w": "save", "f": "filter"}
FORCED = frozenset({"save", "save-filtered"})  # what `!` means something to
COMMAND_HELP = "\n".join(
    f":{name}{'[!]' if name in FORCED else ''} {usage}".ljust(34) + does
    for name, (usage, does) in COMMANDS.items()
)


class CommandError(Exception):
    """A command line that is not a command, said in one line."""


@dataclass(frozen=True)
class Command:
    name: str
    argument: str = ""
    force: bool = False  # `:save! FILE`


def parse(text: str) -> Command:
    """`save! out.jsonl` → Command("save", "out.jsonl", force=True); a leading `:` is
    allowed. CommandError if it is not one of `COMMANDS`."""
    word, _, argument = text.strip().lstrip(":").partition(" ")
    force = word.endswith("!")
    name = ALIASES.get(word.rstrip("!"), word.rstrip("!"))
    if not name:
        raise CommandError("no command (:help lists them)")
    if name not in COMMANDS:
        raise CommandError(f"unknown command :{word} (:help lists them)")
    if force and name not in FORCED:
        raise CommandError(f":{name} takes no !")
    usage = COMMANDS[name][0]
    argument = argument.strip()
    if usage == "FILE" and not argument:
        raise CommandError(f"usage: :{name} FILE")
    if not usage and argument:
        raise CommandError(f":{name} takes no argument")
    choices = usage.split("|") if "|" in usage else None
    if choices and argument and argument not in choices:
        raise CommandError(f"usage: :{name} {usage}")
    return Command(name, argument, force)


class CommandInput(ClosingInput):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "close", id="command.close", show=False),
    ]


class CommandLine(Horizontal):
    """One line at the bottom: `:` and what is typed, or `search:`."""

    DEFAULT_CSS = """
    CommandLine {
        display: none;
        height: 1;
        background: $panel;
    }
    CommandLine.-open {
        display: block;
    }
    CommandLine Label {
        width: auto;
        padding: 0 0 0 1;
        text-style: bold;
    }
    CommandLine CommandInput {
        border: none;
        height: 1;
        padding: 0 1 0 0;
        width: 1fr;
        background: $panel;
    }
    """
    PROMPTS: ClassVar[dict[str, tuple[str, str]]] = {
        "command": (":", "filter EXPR · search TEXT · save FILE · copy response · theme light"),
        "search": ("search:", "text in a summary, path, component or name"),
    }

    @dataclass
    class Entered(Message):
        """What was typed, and for what (`command` or `search`)."""

        mode: str
        text: str

    class Closed(Message):
        """The line closed (run or not): the list takes the keys again."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = "command"

    def compose(self) -> ComposeResult:
        yield Label(":", id="command-prompt")
        yield CommandInput(id="command-input", compact=True)

    @property
    def input(self) -> CommandInput:
        return self.query_one(CommandInput)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self, mode: str = "command", text: str = "") -> None:
        self.mode = mode
        prompt, placeholder = self.PROMPTS[mode]
        self.query_one(Label).update(prompt)
        self.add_class("-open")
        self.input.placeholder = placeholder
        self.input.value = text
        self.input.cursor_position = len(text)
        self.input.focus()

    def close(self) -> None:
        self.remove_class("-open")
        self.post_message(self.Closed())

    def on_closing_input_cancelled(self, event: ClosingInput.Cancelled) -> None:
        event.stop()
        self.close()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.close()
        self.post_message(self.Entered(self.mode, event.value.strip()))
