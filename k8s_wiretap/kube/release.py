"""A Kubernetes release as a value: the one reader of a release's text, and its order.

`Release.parse` reads every form the project meets:

- a minor, "1.30" (the schema pack's and the discovery files' keys, `--kube-version 1.30`);
- a release, "1.30.2" or "v1.30.2" (`--kube-version`, a Go module's tag, a cache folder);
- a server's `/version` gitVersion, with what a vendor or a pre-release puts after the patch:
  "v1.30.2-gke.1587003", "v1.30.4+k3s1", "v1.29.3-eks-adc7111", "v1.30.0-alpha.1" — kept
  as `suffix`. A vendor's suffix is left out of comparisons (a build of 1.30.2 behaves as
  1.30.2); a pre-release's ("-alpha.1", "-beta.0", "-rc.2": Kubernetes tags no other kind)
  is part of the release: it is said (`str`, `staging_version`) and ordered before the
  final release, alpha < beta < rc.

`CURRENT` is the project's default release: the one constant every other place derives its
release from (the lab's default, the pinned Go modules' newest entry, the data files' names,
the Makefile's builds). `make release V=...` (scripts/release.py) moves it for a final
release and leaves it for a pre-release.

Anything else is a `ReleaseError` naming what was given. `Release.of` takes what callers
carry (a Release, its text, or None for "unknown") and `from_version_info` a whole `/version`
answer (gitVersion, else its major and minor: "1", "30+").

Releases order by major, minor and patch; a minor alone comes before every patch of it, so
`release >= Release(1, 31)` reads "from 1.31 on" for "1.31", "1.31.0" and "v1.31.4-gke.1".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache, total_ordering
from typing import overload

__all__ = ["CURRENT", "Release", "ReleaseError", "ReleaseLike"]

_TEXT = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+)([-+][0-9A-Za-z.+-]*)?)?")
_PRERELEASE = re.compile(r"-(alpha|beta|rc)\.(\d+)")
_PRERELEASE_KINDS = ("alpha", "beta", "rc")
_MINOR_FIELD = re.compile(r"(\d+)\+?")  # /version's "minor": "30", or "30+" on some vendors'


class ReleaseError(ValueError):
    """Text that names no Kubernetes release."""


@total_ordering
@dataclass(frozen=True, slots=True)
class Release:
    """One Kubernetes release (`patch` None: a minor, "1.30")."""

    major: int
    minor: int
    patch: int | None = None
    suffix: str = field(default="", compare=False)  # "-gke.1587003", "+k3s1", "-beta.0"
    # the order's key, worked out once: releases are hashed and compared per decoded body
    _order: tuple[int, int, int, int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        found = _PRERELEASE.fullmatch(self.suffix)
        stage = (_PRERELEASE_KINDS.index(found[1]), int(found[2])) if found else (9, 0)
        patch = -1 if self.patch is None else self.patch
        object.__setattr__(self, "_order", (self.major, self.minor, patch, *stage))

    @classmethod
    def parse(cls, text: str) -> Release:
        """The release `text` names (see the module docstring); ReleaseError if none."""
        return _parse(text.strip())

    @overload
    @classmethod
    def of(cls, value: Release | str | None) -> Release | None: ...
    @overload
    @classmethod
    def of(cls, value: Release | str | None, default: Release) -> Release: ...
    @classmethod
    def of(cls, value: Release | str | None, default: Release | None = None) -> Release | None:
        """`value` as a Release: parsed if text, `default` if None or "" (unknown)."""
        if isinstance(value, Release):
            return value
        return cls.parse(value) if value else default

    @classmethod
    def from_version_info(cls, info: Mapping[str, object]) -> Release:
        """The release of a `/version` answer: its gitVersion, else its major and minor."""
        git_version = info.get("gitVersion")
        if isinstance(git_version, str) and git_version:
            return cls.parse(git_version)
        major, minor = str(info.get("major", "")), str(info.get("minor", ""))
        found = _MINOR_FIELD.fullmatch(minor)
        if not major.isdigit() or found is None:
            raise ReleaseError(f"a /version answer without a release: {dict(info)!r}")
        return cls(int(major), int(found.group(1)))

    @property
    def minor_version(self) -> str:
        """The minor as text: "1.30"."""
        return f"{self.major}.{self.minor}"

    @property
    def minor_release(self) -> Release:
        """The minor alone (patch and suffix dropped): Release(1, 30) of 1.30.2."""
        return Release(self.major, self.minor)

    @property
    def prerelease(self) -> str:
        """The pre-release part of `suffix` ("-beta.0"), "" for a final or a vendor's build."""
        return self.suffix if _PRERELEASE.fullmatch(self.suffix) else ""

    @property
    def git_version(self) -> str:
        """As Kubernetes tags it and `/version` says it: "v1.30.2"."""
        return f"v{self}{self.suffix.removeprefix(self.prerelease)}"

    @property
    def staging_version(self) -> str:
        """The tag of the release's published staging modules (k8s.io/api, apimachinery...):
        v0.30.2 for Kubernetes 1.30.2, v0.30.0-rc.1 for 1.30.0-rc.1."""
        if self.patch is None:
            raise ReleaseError(f"{self}: a minor has no staging module version")
        return f"v0.{self.minor}.{self.patch}{self.prerelease}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Release):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Release):
            return NotImplemented
        return self._key() < other._key()

    def _key(self) -> tuple[int, int, int, int, int]:
        """major, minor, patch (-1: a minor), then the pre-release's kind and number (a
        final release, or a vendor's build of one, after every pre-release of it)."""
        return self._order

    def __str__(self) -> str:
        """1.30.2 (1.30.0-rc.1 for a pre-release), or 1.30 for a minor."""
        if self.patch is None:
            return self.minor_version
        return f"{self.minor_version}.{self.patch}{self.prerelease}"


ReleaseLike = Release | str | None
"""What a caller may carry for a server's release: a Release, its text ("v1.30.2", "1.30"),
or None when it is unknown (`Release.of` reads each)."""


@lru_cache(maxsize=256)
def _parse(text: str) -> Release:
    match = _TEXT.fullmatch(text)
    if match is None:
        raise ReleaseError(
            f"not a Kubernetes version: {text!r} (expected MAJOR.MINOR[.PATCH], as 1.30, "
            "1.30.2 or v1.30.2-gke.1)"
        )
    major, minor, patch, suffix = match.groups()
    return Release(int(major), int(minor), None if patch is None else int(patch), suffix or "")


CURRENT = Release.parse("1.37.2")
"""The default release: what the lab runs without --kube-version, the newest the whole test
suite runs on, whose data (discovery, OpenAPI v3, reset fields) kube/data ships."""
