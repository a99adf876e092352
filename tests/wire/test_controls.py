"""Control characters shown as escapes: every one of them, and nothing else touched."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import example, given
from hypothesis import strategies as st

from k8s_wiretap.wire.controls import (
    CONTROLS,
    escape_controls,
    escape_json_bytes,
    escape_json_controls,
)

# every character a terminal acts on or that reorders what is shown around it
EVERY = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]
EVERY += [chr(c) for c in (0x61C, 0x200E, 0x200F, *range(0x2028, 0x202F), *range(0x2066, 0x206A))]


def test_the_seen_sequences_are_shown_escaped() -> None:
    said = escape_controls("x\x1b[1A\x1b[2K\rFAKE LINE")
    assert said == "x\\x1b[1A\\x1b[2K\\rFAKE LINE"
    assert escape_controls("v\x1b]0;TITLE\x07") == "v\\x1b]0;TITLE\\x07"
    assert escape_controls("GET\r\nFAKE\t\x9b\x7f") == "GET\\r\\nFAKE\\t\\x9b\\x7f"
    assert escape_controls("abc\u202efdp.exe\u2066") == "abc\\u202efdp.exe\\u2066"


def test_clean_text_is_left_as_it_is() -> None:
    for text in ("", "kubectl apply: replicas 2 → 3", "naïve ünïcödé 日本 \u00a0 👍\u200d"):
        assert escape_controls(text) == text


def _one(char: str) -> str:
    """What one character is shown as: C escapes for tab, LF, CR; the rest by number."""
    if char not in EVERY:
        return char
    named = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(char)
    return named or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


TEXT = st.lists(st.sampled_from(EVERY) | st.characters(), max_size=40).map("".join)


@given(TEXT)
@example("".join(EVERY))
def test_each_control_character_is_escaped_and_the_rest_kept(text: str) -> None:
    said = escape_controls(text)
    assert said == "".join(_one(c) for c in text)
    assert not CONTROLS.search(said)
    assert not any(unicodedata.category(c) == "Cc" for c in said)


@given(TEXT)
@example("".join(EVERY))
@example("· → … \u00a0 \u061b \u2030 \u2065 \u206a")  # the neighbours, kept as they are
@example("end\u202e")
def test_json_keeps_its_value_and_shows_no_control(text: str) -> None:
    dumped = json.dumps({"v": text}, ensure_ascii=False)
    said = escape_json_controls(dumped)
    assert json.loads(said) == {"v": text}
    assert not CONTROLS.search(said)
    raw = escape_json_bytes(dumped.encode("utf-8", "surrogatepass"))
    assert raw.decode("utf-8", "surrogatepass") == said
