"""docs/proxy.md's tables of the recording format, made from `capture/records.py`.

    python scripts/generate_record_docs.py          # rewrite the section in docs/proxy.md
    python scripts/generate_record_docs.py --check  # exit 1 if it is not what it would write

Each record kind and each part records hold (BODY, `client`, `identity`) is a heading, its
docstring, and a table of its fields: name, JSON type, whether every record of the kind
has it, and the meaning its annotation carries. The section sits between the two marker
lines; everything else in the file is left as it is. `tests/capture/test_records.py`
holds the file equal to what this writes.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, Required, get_args, get_origin

from k8s_wiretap.capture import records

DOC = Path(__file__).resolve().parent.parent / "docs" / "proxy.md"
BEGIN = (
    "<!-- the record tables: made from capture/records.py by scripts/generate_record_docs.py -->"
)
END = "<!-- end of the record tables -->"
NAMES = {records.Body: "BODY", records.Client: "`client`", records.Identity: "`identity`"}
SCALARS = {str: "text", float: "number", int: "integer", bool: "true/false"}


def _heading(kind: type) -> str:
    """The kind's name: the `record` it is (`request`), or the part's (BODY, `client`)."""
    if kind in NAMES:
        return NAMES[kind]
    (literal,) = get_args(_unwrapped(typing.get_type_hints(kind)["record"]))
    return f"`{literal}`"


def _unwrapped(hint: Any) -> Any:
    while get_origin(hint) in (Required, NotRequired):
        (hint,) = get_args(hint)
    return hint


def _json_type(hint: Any) -> str:
    """How a field's type is said in JSON words."""
    if hint in NAMES:
        return NAMES[hint]
    if hint in SCALARS:
        return SCALARS[hint]
    origin, args = get_origin(hint), get_args(hint)
    if origin is types.UnionType:
        return " or ".join("null" if a is type(None) else _json_type(a) for a in args)
    if origin is Literal:
        return ", ".join(f"`{a}`" for a in args)
    if origin is list and get_origin(args[0]) is list:
        return "`[name, value]` pairs"
    if origin is dict:
        return "object"
    raise ValueError(f"no JSON word for {hint!r}")


def _rows(kind: type) -> list[str]:
    hints = typing.get_type_hints(kind, include_extras=True)
    rows = []
    for name, declared in hints.items():
        hint = _unwrapped(declared)
        if name == "record":
            continue
        if get_origin(hint) is not Annotated:
            raise ValueError(f"{kind.__name__}.{name} says no meaning (Annotated[type, ...])")
        # Required[...], not __required_keys__: the annotations are strings at run time
        always = "yes" if get_origin(declared) is Required else ""
        meaning = " ".join(hint.__metadata__)
        rows.append(f"| `{name}` | {_json_type(hint.__origin__)} | {always} | {meaning} |")
    return rows


def _section(kind: type) -> list[str]:
    said = " ".join((kind.__doc__ or "").split())
    return [
        f"#### {_heading(kind)}",
        "",
        said,
        "",
        "| field | type | always | meaning |",
        "|---|---|---|---|",
        *_rows(kind),
        "",
    ]


def tables() -> str:
    """The generated section, its marker lines included."""
    lines = [BEGIN, ""]
    for kind in (*records.KINDS, *records.PARTS):
        lines += _section(kind)
    return "\n".join([*lines, END]) + "\n"


def rewritten(text: str) -> str:
    """`text` (docs/proxy.md) with its section made anew."""
    start, end = text.index(BEGIN), text.index(END) + len(END) + 1
    return text[:start] + tables() + text[end:]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    args = parser.parse_args(argv)
    text = DOC.read_text()
    new = rewritten(text)
    if args.check:
        if new != text:
            print(f"{DOC}: the record tables are not current: run {sys.argv[0]}")
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
