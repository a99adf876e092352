"""The Kubernetes releases a lab can run, as data: where each comes from and what it differs in.

Two kinds of release:

- **1.20.2** from Debian's `kubernetes` source package (its whole vendor tree; built offline
  with Debian's Go 1.19). etcd comes from Debian's etcd-server (3.4), on PATH.
- **1.30 and later** from the `k8s.io/kubernetes` Go module and its published staging
  modules, built with a current Go; etcd from its own Go module, at the version the release
  is tested with; kubectl of the same release beside them.

Releases in between (1.21 to 1.29) are not offered: nothing here builds or checks them.

A release is a `k8s_wiretap.kube.release.Release` (the one reader of a release's text); this
module says what the lab does with one: where it is built from (`from_debian`), what its
build is cached as (`cache_name`) and holds (`built`), and which `--kube-version` spellings
name one (`parse_spec`).
"""

from __future__ import annotations

from k8s_wiretap.kube import release as _release
from k8s_wiretap.kube.release import Release, ReleaseError

__all__ = [
    "CURRENT",
    "DEBIAN_RELEASE",
    "DEFAULT",
    "MODULE_MINIMUM",
    "KubeVersionError",
    "build_tag",
    "built",
    "cache_name",
    "from_debian",
    "parse_spec",
    "token_secrets",
]

CURRENT = _release.CURRENT.minor_version  # the minor the lab is tested on (`make binaries`)
DEFAULT = CURRENT  # what `lab up` runs without --kube-version
DEBIAN_RELEASE = Release(1, 20, 2)
MODULE_MINIMUM = Release(1, 30)
# LegacyServiceAccountTokenNoAutoGeneration, on since 1.24: no more token Secrets
NO_TOKEN_SECRETS = Release(1, 24)

# Name the changes each build makes to the source (see debian.py, gomodules.py); a cached
# build carries its kind's tag (`<version>-<tag>`), so one made before a change is rebuilt.
DEBIAN_TAG = "wiretap3"
MODULE_TAG = "wiretap1"

KUBE_BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark")


class KubeVersionError(ValueError):
    """A --kube-version that names no release the lab can run."""


def from_debian(release: Release) -> bool:
    """Whether the lab builds `release` from Debian's source package (1.20), not modules."""
    return release < MODULE_MINIMUM


def build_tag(release: Release) -> str:
    """The tag of the source changes its kind of build makes."""
    return DEBIAN_TAG if from_debian(release) else MODULE_TAG


def cache_name(release: Release) -> str:
    """Its build's folder in the cache: `1.30.2-wiretap1`."""
    return f"{release}-{build_tag(release)}"


def built(release: Release) -> tuple[str, ...]:
    """What its build writes into the cache (the rest comes from PATH)."""
    return KUBE_BINARIES if from_debian(release) else (*KUBE_BINARIES, "kubectl", "etcd")


def token_secrets(release: Release) -> bool:
    """Whether the controller manager still gives each ServiceAccount a token Secret."""
    return release < NO_TOKEN_SECRETS


def parse_spec(spec: str) -> Release | None:
    """`1.30` → Release(1, 30) (a minor), `1.30.2`/`v1.30.2` → Release(1, 30, 2),
    `1.30.0-rc.1` → that pre-release, `1.20` → Debian's 1.20.2, `latest` → None.

    KubeVersionError for anything else, and for releases the lab does not offer.
    """
    if spec.strip() == "latest":
        return None
    try:
        release = Release.parse(spec)
    except ReleaseError:
        release = None
    if (
        release is None
        or release.suffix != release.prerelease
        or (release.prerelease and release.patch is None)
    ):
        raise KubeVersionError(
            f"--kube-version {spec!r}: expected MAJOR.MINOR[.PATCH[-PRERELEASE]] (e.g. "
            f"{DEFAULT} or {_release.CURRENT}) or latest"
        )
    if release.minor_release == DEBIAN_RELEASE.minor_release:
        if release.patch not in (None, DEBIAN_RELEASE.patch):
            raise KubeVersionError(
                f"--kube-version {spec}: 1.20 is built from Debian's source package, "
                f"which is {DEBIAN_RELEASE}"
            )
        return DEBIAN_RELEASE
    if release < MODULE_MINIMUM:
        raise KubeVersionError(
            f"--kube-version {spec}: the lab runs 1.20 (Debian's source package) or "
            f"{MODULE_MINIMUM} and later (Go modules)"
        )
    return release
