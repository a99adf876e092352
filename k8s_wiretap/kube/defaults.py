"""What the API server's defaulting sets in a decoded object: `data/defaults-MINOR.yaml`.

`type_rules(release, message)` gives the rules of one Go type (a message name of
kube/schema, "k8s.io.api.core.v1.PodSpec"), in the order the server's functions apply them;
`covered(api_version, kind)` says whether the rules cover the kind's whole defaulting. The
data file's header says what a rule means; it is the newest file's release's defaulting
(the default release's), read for other releases too, except rules marked `since` a later
one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.release import Release, ReleaseLike

__all__ = ["DEFAULTS_FILE", "Rule", "covered", "type_rules"]

DEFAULTS_FILE = datafiles.path(datafiles.newest("defaults", ".yaml"))
OLDEST = Release(1, 20)  # what a release of None means: the oldest the lab runs
ALWAYS = Release(1, 0)  # a rule without `since`


@dataclass(frozen=True)
class Rule:
    """Set `path` (JSON names below the type) when it is missing: to `value`, or to what
    the function `computed` names; only when the member at `when_path` equals `when_value`
    (if `when_path`), and on releases from `since` on (the data says its minor: 34)."""

    path: tuple[str, ...]
    value: Any = None
    computed: str = ""
    when_path: tuple[str, ...] = ()
    when_value: Any = None
    since: Release = ALWAYS


@cache
def _document() -> dict[str, Any]:
    loaded = datafiles.load(DEFAULTS_FILE.name)
    return loaded if isinstance(loaded, dict) else {}


def _rule(row: dict[str, Any]) -> Rule:
    when = row.get("when") or {}
    return Rule(
        path=tuple(row["path"]),
        value=row.get("value"),
        computed=str(row.get("computed", "")),
        when_path=tuple(when.get("path", ())),
        when_value=when.get("equals"),
        since=Release(1, int(row.get("since", 0))),
    )


@cache
def _rules(message: str) -> tuple[Rule, ...]:
    entry = _document().get("types", {}).get(message) or {}
    return tuple(_rule(row) for row in entry.get("rules", ()))


def type_rules(release: ReleaseLike, message: str) -> tuple[Rule, ...]:
    """The defaulting rules of Go type `message` on `release`'s API server ("v1.30.2"; None:
    1.20's)."""
    server = Release.of(release, OLDEST)
    return tuple(rule for rule in _rules(message) if rule.since <= server)


@cache
def covered(api_version: str, kind: str) -> bool:
    """Whether the rules cover all of the kind's defaulting (its SetObjectDefaults_*)."""
    return [api_version, kind] in _document().get("covered", [])
