"""The texts of a Status answered on a sensitive resource, with every rendering of a value
masked (the rules are data: kube/statustext.py).

Which part of a message is a value cannot be known in general, so this fails closed: every
quoted string but those in `keep` (the request's own name, namespace, resource and group),
an API version and the user of an RBAC refusal, every Go map or struct rendering, an
unreadable body's preview, every long run of hex or base64 digits becomes a placeholder,
and so does every occurrence of a value the request itself carried (`known`: as sent, in
base64 and in hex). What is left is the message's shape, which is what explains the
refusal:

    "" is invalid: patch: Invalid value: "redacted:3f1c…": error decoding from json:
    illegal base64 data at input byte 12

`placeholder` is the recording's (capture/redact.py): equal texts compare equal.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Collection

from k8s_wiretap.kube.statustext import RENDERINGS, SAFE_QUOTED, WHOLE_TAILS, Rendering

__all__ = ["MIN_KNOWN", "mask"]

# A value the request carried is looked for in the message when it is at least this long
# (shorter ones would mask words: a password "data" is no reason to hide the word).
MIN_KNOWN = 6
_TAILS = [(re.compile(r.pattern), r) for r in WHOLE_TAILS]
_RENDERING = re.compile(
    "|".join(f"(?P<r{i}>{r.pattern})" for i, r in enumerate(RENDERINGS)), re.DOTALL
)
_SENTINEL = re.compile("\x00([0-9]+)\x00")


def mask(
    text: str,
    placeholder: Callable[[str], str],
    *,
    keep: Collection[str] = (),
    known: Collection[bytes] = (),
) -> str:
    """`text` with every value rendering in it replaced by its placeholder."""
    masked = _Masked(placeholder, keep)
    text = text.replace("\x00", "\ufffd")  # NUL marks what is masked already (`_Masked`)
    text = _known(text, known, masked)
    text = _tails(text, masked)
    text = _RENDERING.sub(masked.rendering, text)
    return masked.restore(text)


class _Masked:
    """The placeholders put in so far, each held out of the text as a NUL-marked index so
    that the later rules never see (and mask again) a placeholder's own hex digits."""

    def __init__(self, placeholder: Callable[[str], str], keep: Collection[str]) -> None:
        self._placeholder = placeholder
        self._keep = {k for k in keep if k}
        self._held: list[str] = []

    def hold(self, value: str) -> str:
        self._held.append(self._placeholder(value))
        return f"\x00{len(self._held) - 1}\x00"

    def rendering(self, match: re.Match[str]) -> str:
        rendering = RENDERINGS[int(str(match.lastgroup)[1:])]
        text = match.group()
        if rendering.kept:
            return text
        if not rendering.quote:
            return self.hold(text)
        inner = text[len(rendering.quote) : -len(rendering.quote)]
        if (
            not inner
            or inner in self._keep
            or SAFE_QUOTED.fullmatch(inner)
            or _SENTINEL.fullmatch(inner)
        ):
            return text
        return rendering.quote + self.hold(inner) + rendering.quote

    def restore(self, text: str) -> str:
        return _SENTINEL.sub(lambda m: self._held[int(m.group(1))], text)


def _known(text: str, known: Collection[bytes], masked: _Masked) -> str:
    """Every form of every known value (longest first: one may hold another) masked."""
    forms: dict[str, bytes] = {}
    for value in known:
        if len(value) >= MIN_KNOWN:
            for form in renderings(value):
                forms.setdefault(form, value)
    for form in sorted(forms, key=len, reverse=True):
        if form in text:
            text = text.replace(form, masked.hold(forms[form].decode("utf-8", "replace")))
    return text


def renderings(value: bytes) -> set[str]:
    """How a value may be written into a message: as text, Go-quoted, base64, hex."""
    forms = {
        base64.b64encode(value).decode(),
        base64.urlsafe_b64encode(value).decode(),
        value.hex(),
        value.hex().upper(),
    }
    try:
        text = value.decode()
    except UnicodeDecodeError:
        return forms
    quoted = json.dumps(text, ensure_ascii=False)[1:-1]
    return forms | {text, quoted, quoted.replace("\\", "\\\\")}


def _tails(text: str, masked: _Masked) -> str:
    for pattern, rendering in _TAILS:
        found = pattern.search(text)
        if found:
            return text[: found.end()] + _tail(text[found.end() :], rendering, masked)
    return text


def _tail(tail: str, rendering: Rendering, masked: _Masked) -> str:
    close = rendering.quote
    if tail.endswith(close):
        return masked.hold(tail[: -len(close)]) + close
    return masked.hold(tail)
