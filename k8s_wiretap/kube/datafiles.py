"""The files Kubernetes knowledge is kept in (`kube/data/`), read one way.

Every table of behaviour shipped as data sits in `k8s_wiretap/kube/data/` and is read here:
the user agents (`agents.yaml`), the control plane's clients (`controllers.yaml`), the rules
of what each exchange is and why (`explanations.yaml`), defaulting (`defaults-1.37.yaml`),
reset fields (`reset-fields-1.37.json`), each release's discovery (`discovery-*.json`) and
patch metadata tables (`openapi-v2-1.20.json`, `openapi-v3-1.37.json`). The modules that
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

__all__ = ["DATA", "load", "path"]

DATA = Path(__file__).parent / "data"


def path(name: str) -> Path:
    """Where the data file `name` ("agents.yaml") is."""
    return DATA / name


@cache
def load(name: str) -> Any:
    """The values of data file `name` (YAML or JSON, by its suffix), read once and shared."""
    if name.endswith(".yaml"):
        return yamltext.load(path(name).read_text(encoding="utf-8"))
    if name.endswith(".json"):
        return json.loads(path(name).read_text(encoding="utf-8"))
    raise ValueError(f"{name}: a data file is .yaml or .json")
