"""Text from the wire made safe for a terminal: control characters shown, never obeyed.

A recorded value (an annotation, a user agent, a HAR method, a ConfigMap's data) may hold
characters a terminal acts on: ESC sequences that move the cursor, erase lines or set the
window title, CR and LF that start a line of the sender's making, BEL, the C1 controls
(U+0080 to U+009F, U+009B a CSI of its own) and the bidi overrides and isolates that show
text in another order than it is (U+202A to U+202E, U+2066 to U+2069). `escape_controls` shows
each as an escape (`\\x1b`, `\\r`, `\\n`, `\\t`, `\\u202e`), so that what a human view prints
is the text as it was, made visible. Recordings keep the bytes as they were; JSON escapes
C0 controls by itself, and `escape_json_controls` adds the rest.
"""

from __future__ import annotations

import re

__all__ = [
    "CONTROLS",
    "escape_controls",
    "escape_json_bytes",
    "escape_json_controls",
    "escape_lines",
]

# C0, DEL and C1; the line and paragraph separators; the bidi embeddings, overrides and
# isolates (and the marks, invisible, that reorder what is around them)
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """`text` with every control character escaped; `text` itself when it has none (the
    common case, one `str.isprintable` over it)."""
    if text.isprintable():  # no Cc, Cf or Z* but space: none of CONTROLS
        return text
    return CONTROLS.sub(_escape, text)


def escape_lines(text: str) -> str:
    """`escape_controls` of each line of `text`, its line breaks (LF) kept: for text whose
    lines are its layout (a YAML document, a body shown whole)."""
    if text.isprintable():
        return text
    return "\n".join(escape_controls(line) for line in text.split("\n"))


# what JSON leaves as it is: the same set but C0, in text and in its UTF-8 bytes
_JSON_TEXT = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_JSON_BYTES = re.compile(
    rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]"
)


def escape_json_controls(text: str) -> str:
    """JSON text (whose C0 controls `json.dumps` escaped) with the other controls as
    `\\uXXXX` escapes too: the same JSON value, and nothing a terminal acts on."""
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_TEXT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# the UTF-8 of the bidi marks, overrides and isolates and the separators: "\xe2" leads each
_BIDI_BYTES = frozenset(
    chr(c).encode() for c in (0x200E, 0x200F, *range(0x2028, 0x202F), *range(0x2066, 0x206A))
)


def _unsafe(data: bytes) -> bool:
    """Whether UTF-8 `data` holds DEL, a C1 control or a bidi control: each found from its
    lead byte by `find` (a memchr), not by a regex over every byte (ten times slower)."""
    if data.isascii() or b"\x7f" in data:
        return b"\x7f" in data
    for lead, unsafe in _LEADS:
        at = data.find(lead)
        while at >= 0:
            if unsafe(data[at : at + 3]):
                return True
            at = data.find(lead, at + 1)
    return False


_LEADS = (
    (b"\xc2", lambda char: len(char) > 1 and char[1] < 0xA0),  # U+0080 to U+009F
    (b"\xd8", lambda char: char[1:2] == b"\x9c"),  # U+061C
    (b"\xe2", _BIDI_BYTES.__contains__),
)


def escape_json_bytes(data: bytes) -> bytes:
    """`escape_json_controls` of UTF-8 JSON, as bytes."""
    if not _unsafe(data):
        return data
    return _JSON_BYTES.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), data)
