"""YAML text to values and back: the one YAML reader and writer, libyaml's when PyYAML was
built with it.

PyYAML's pure-Python loader takes 7-10 times as long as its C one (libyaml) for the same
result (both are `SafeLoader`s: the same YAML 1.1 tags, no objects built). Bodies sent as
YAML (`kubectl apply --server-side` sends `application/apply-patch+yaml`), the data tables
in `kube/data/` and OpenAPI extension values all go through `load`; what is shown or
written as YAML (the TUI's bodies, `decode`'s output, kubeconfigs) through `dump` (libyaml
folds a long string at other spaces than PyYAML's own emitter; the values are the same).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["YAMLError", "dump", "load"]

YAMLError = yaml.YAMLError
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load(text: str | bytes) -> Any:
    """The first document of `text`, as `yaml.safe_load` reads it."""
    return yaml.load(text, Loader=_LOADER)  # a SafeLoader: plain values only


def dump(value: Any, *, width: int | None = None) -> str:
    """`value` as `yaml.safe_dump(value, sort_keys=False, allow_unicode=True)` writes it."""
    text: str = yaml.dump(value, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=width)
    return text
