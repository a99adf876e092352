"""The files Kubernetes knowledge is kept in (`kube/data/`), read one way.

Every table of behaviour shipped as data sits in `k8s_wiretap/kube/data/` and is read here:
the user agents (`agents.yaml`), the control plane's clients (`controllers.yaml`), the rules
of what each exchange is and why (`defaults-MINOR.yaml`: defaulting), reset fields
(`reset-fields-MINOR.json`), each release's discovery (`discovery-MINOR.json`) and patch
metadata tables (`openapi-v2-1.20.json`, `openapi-v3-MINOR.json`). A file of a release is
found by what is there (`releases`, `newest`): `make release` (scripts/release.py) writes the
default release's, and no module names a release's file. The modules that
give a file its meaning (agents.py, controllers.py, explanations.py, defaults.py,
resetfields.py, resources.py, and patch.meta for the OpenAPI tables) call `load`; tests and
generators that compare or rewrite a file use `path`.

YAML goes through `wire.yamltext.load`, the project's one YAML reader; JSON through `json`.
A file is read once: callers share what `load` returns and must not change it. (The protobuf
schema pack, `kube/schema/kubernetes.json`, has its own package and reader.)
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from k8s_wiretap.wire import yamltext

__all__ = ["DATA", "load", "newest", "path", "releases"]

DATA = Path(__file__).parent / "data"


def path(name: str) -> Path:
    """Where the data file `name` ("agents.yaml") is."""
    return DATA / name


def releases(stem: str, suffix: str) -> tuple[str, ...]:
    """The minors ("1.30") of the files `<stem>-<minor><suffix>` present, newest first."""
    found = []
    for file in DATA.glob(f"{stem}-*{suffix}"):
        minor = file.name[len(stem) + 1 : -len(suffix)]
        parts = minor.split(".")
        if len(parts) == 2 and all(part.isdigit() for part in parts):
            found.append(minor)
    return tuple(sorted(found, key=lambda minor: tuple(map(int, minor.split("."))), reverse=True))


def newest(stem: str, suffix: str) -> str:
    """The name of the newest release's file `<stem>-<minor><suffix>` present."""
    present = releases(stem, suffix)
    if not present:
        raise FileNotFoundError(f"no {stem}-MINOR{suffix} in {DATA}")
    return f"{stem}-{present[0]}{suffix}"


@cache
def load(name: str) -> Any:
    """The values of data file `name` (YAML or JSON, by its suffix), read once and shared."""
    if name.endswith(".yaml"):
        return yamltext.load(path(name).read_text(encoding="utf-8"))
    if name.endswith(".json"):
        return json.loads(path(name).read_text(encoding="utf-8"))
    raise ValueError(f"{name}: a data file is .yaml or .json")
