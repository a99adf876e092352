"""YAML text to values: the one YAML reader, libyaml's when PyYAML was built with it.

PyYAML's pure-Python loader takes 7-10 times as long as its C one (libyaml) for the same
result (both are `SafeLoader`s: the same YAML 1.1 tags, no objects built). Bodies sent as
YAML (`kubectl apply --server-side` sends `application/apply-patch+yaml`), the data tables
in `kube/data/` and OpenAPI extension values all go through `load`.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["YAMLError", "load"]

YAMLError = yaml.YAMLError
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str | bytes) -> Any:
    """The first document of `text`, as `yaml.safe_load` reads it."""
    return yaml.load(text, Loader=_LOADER)  # a SafeLoader: plain values only
