"""The Kubernetes releases a lab can run, as data: where each comes from and what it differs in.

Two kinds of release:

- **1.20.2** from Debian's `kubernetes` source package (its whole vendor tree; built offline
  with Debian's Go 1.19). etcd comes from Debian's etcd-server (3.4), on PATH.
- **1.30 and later** from the `k8s.io/kubernetes` Go module and its published staging
  modules, built with a current Go; etcd from its own Go module, at the version the release
  is tested with; kubectl of the same release beside them.

Releases in between (1.21 to 1.29) are not offered: nothing here builds or checks them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CURRENT",
    "DEBIAN_RELEASE",
    "DEFAULT",
    "MODULE_MINIMUM",
    "KubeVersionError",
    "Minor",
    "Release",
    "parse_spec",
]

Minor = tuple[int, int]

CURRENT = "1.37"  # the newest minor the lab is tested on (`make binaries` builds it)
DEFAULT = CURRENT  # what `lab up` runs without --kube-version
DEBIAN_VERSION = "1.20.2"
MODULE_MINIMUM: Minor = (1, 30)

# Name the changes each build makes to the source (see debian.py, gomodules.py); a cached
# build carries its kind's tag (`<version>-<tag>`), so one made before a change is rebuilt.
DEBIAN_TAG = "wiretap3"
MODULE_TAG = "wiretap1"

KUBE_BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark")


class KubeVersionError(ValueError):
    """A --kube-version that names no release the lab can run."""


@dataclass(frozen=True)
class Release:
    """One Kubernetes release as the lab builds and runs it."""

    version: str  # "1.37.2"

    @property
    def number(self) -> tuple[int, int, int]:
        major, minor, patch = self.version.split(".")
        return int(major), int(minor), int(patch)

    @property
    def minor(self) -> Minor:
        return self.number[0], self.number[1]

    @property
    def from_debian(self) -> bool:
        return self.minor < MODULE_MINIMUM

    @property
    def tag(self) -> str:
        return DEBIAN_TAG if self.from_debian else MODULE_TAG

    @property
    def cache_name(self) -> str:
        return f"{self.version}-{self.tag}"

    @property
    def built(self) -> tuple[str, ...]:
        """What its build writes into the cache (the rest comes from PATH)."""
        return KUBE_BINARIES if self.from_debian else (*KUBE_BINARIES, "kubectl", "etcd")

    @property
    def module_version(self) -> str:
        return f"v{self.version}"

    @property
    def staging_version(self) -> str:
        """The published staging modules' version (k8s.io/api v0.37.2 for 1.37.2)."""
        _, minor, patch = self.number
        return f"v0.{minor}.{patch}"

    @property
    def token_secrets(self) -> bool:
        """Whether the controller manager still gives each ServiceAccount a token Secret
        (LegacyServiceAccountTokenNoAutoGeneration, on since 1.24)."""
        return self.minor < (1, 24)

    def __str__(self) -> str:
        return self.version


DEBIAN_RELEASE = Release(DEBIAN_VERSION)

_SPEC = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


def parse_spec(spec: str) -> tuple[Minor, int | None] | None:
    """`1.37` → ((1, 37), None), `1.37.2`/`v1.37.2` → ((1, 37), 2), `latest` → None.

    KubeVersionError for anything else, and for releases the lab does not offer.
    """
    if spec.strip() == "latest":
        return None
    match = _SPEC.match(spec.strip())
    if not match:
        raise KubeVersionError(
            f"--kube-version {spec!r}: expected MAJOR.MINOR[.PATCH] (e.g. {DEFAULT} or "
            f"{CURRENT}) or latest"
        )
    minor = (int(match.group(1)), int(match.group(2)))
    patch = int(match.group(3)) if match.group(3) else None
    if minor == DEBIAN_RELEASE.minor:
        if patch not in (None, int(DEBIAN_VERSION.split(".")[2])):
            raise KubeVersionError(
                f"--kube-version {spec}: 1.20 is built from Debian's source package, "
                f"which is {DEBIAN_VERSION}"
            )
        return minor, int(DEBIAN_VERSION.split(".")[2])
    if minor < MODULE_MINIMUM:
        raise KubeVersionError(
            f"--kube-version {spec}: the lab runs 1.20 (Debian's source package) or "
            f"{'.'.join(map(str, MODULE_MINIMUM))} and later (Go modules)"
        )
    return minor, patch
