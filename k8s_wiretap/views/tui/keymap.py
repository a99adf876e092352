"""Your own keys: a YAML file of binding ids and the keys you want for them.

Every binding of the TUI has an id (`app.quit`, `list.down`, `walkthrough.next`, ... —
`?` lists them with their keys). `$XDG_CONFIG_HOME/k8s-wiretap/keys.yaml` (by default
`~/.config/k8s-wiretap/keys.yaml`), or the file `K8S_WIRETAP_KEYS` names, maps ids to
keys, several separated by commas, as Textual's keymaps do:

    app.quit: ctrl+q
    list.down: j,down,ctrl+n

A missing default file is no keymap; a file that is not such a mapping, or names an id no
binding has, is refused in one line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from textual.binding import Binding, BindingType

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.paths import config_dir
from k8s_wiretap.wire import yamltext

__all__ = ["KEYS_ENV", "KeymapError", "keys_file", "load_keymap"]

KEYS_ENV = "K8S_WIRETAP_KEYS"


class KeymapError(WiretapError):
    """A keys file that cannot be used, said in one line."""


def keys_file() -> tuple[Path, bool]:
    """The keys file, and whether it was asked for (`K8S_WIRETAP_KEYS`) or the default."""
    named = os.environ.get(KEYS_ENV)
    return (Path(named), True) if named else (config_dir() / "keys.yaml", False)


def load_keymap(bindings: Iterable[BindingType]) -> dict[str, str]:
    """The user's keys for `bindings` (their ids), from `keys_file()`; {} if there is none."""
    path, asked = keys_file()
    if not path.exists():
        if asked:
            raise KeymapError(f"{KEYS_ENV}={path}: no such file")
        return {}
    try:
        document = yamltext.load(path.read_text())
    except (OSError, UnicodeDecodeError, yamltext.YAMLError) as error:
        raise KeymapError(f"{path}: cannot read it: {error}".splitlines()[0]) from error
    if document is None:
        return {}
    if not isinstance(document, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in document.items()
    ):
        raise KeymapError(f"{path}: not a mapping of binding ids to keys (app.quit: ctrl+q)")
    known = {b.id for b in bindings if isinstance(b, Binding) and b.id}
    unknown = sorted(set(document) - known)
    if unknown:
        raise KeymapError(
            f"{path}: no binding has the id {unknown[0]!r} (`?` in the TUI lists the ids)"
        )
    return {k: v.replace(" ", "") for k, v in document.items()}
