"""The rules of what each exchange is and why (`data/explanations.yaml`), as values.

Each rule names what it matches on (`match`: facts of an exchange as explain.summaries
works them out), a summary and a why (templates that module fills), whether the exchange
is noise, and the talk or Kubernetes source it comes from. They are tried in file order;
the first that matches explains the exchange. This module only reads them (through
`datafiles`); matching and filling are explain.summaries'.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from k8s_wiretap.kube import datafiles

__all__ = ["RULES_FILE", "Rule", "rules"]

RULES_FILE = "explanations.yaml"


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: `match` (fact → wanted value), the `summary` and `why` templates (their
    whitespace squeezed, as every filled one is), `noise`, and its `source`."""

    id: str
    match: dict[str, Any]
    summary: str
    why: str
    noise: bool
    source: str


@cache
def rules() -> tuple[Rule, ...]:
    """Every rule, in file order."""
    return tuple(
        Rule(
            str(e["id"]),
            dict(e.get("match") or {}),
            " ".join(str(e["summary"]).split()),
            " ".join(str(e.get("why") or "").split()),
            bool(e.get("noise")),
            str(e.get("source") or ""),
        )
        for e in datafiles.load(RULES_FILE)
    )
