"""The one release type: every form of a release's text, its order, and junk refused."""

from __future__ import annotations

import pytest

from k8s_wiretap.kube.release import CURRENT, Release, ReleaseError


@pytest.mark.parametrize(
    ("text", "expected", "suffix"),
    [
        ("1.33", Release(1, 33), ""),
        ("1.33.2", Release(1, 33, 2), ""),
        ("v1.33.2", Release(1, 33, 2), ""),
        ("1.33.2-gke.1", Release(1, 33, 2), "-gke.1"),
        ("v1.30.4+k3s1", Release(1, 30, 4), "+k3s1"),
        ("v1.30.2-gke.1587003", Release(1, 30, 2), "-gke.1587003"),
        ("v1.29.3-eks-adc7111", Release(1, 29, 3), "-eks-adc7111"),
        ("v1.33.0-alpha.1", Release(1, 33, 0, "-alpha.1"), "-alpha.1"),
        (" v1.20.2\n", Release(1, 20, 2), ""),
    ],
)
def test_every_form_is_read(text: str, expected: Release, suffix: str) -> None:
    release = Release.parse(text)
    assert release == expected
    assert release.suffix == suffix


@pytest.mark.parametrize(
    "junk", ["", "latest", "1", "v1", "1.x", "1.33.", "1.33.2.1", "one.two", "1.33-gke.1", "v"]
)
def test_junk_is_refused_saying_what_was_given(junk: str) -> None:
    with pytest.raises(ReleaseError, match="not a Kubernetes version"):
        Release.parse(junk)
    assert issubclass(ReleaseError, ValueError)


def test_the_forms_it_is_written_in() -> None:
    release = Release.parse("v1.30.4+k3s1")
    assert str(release) == "1.30.4"
    assert release.minor_version == "1.30"
    assert release.minor_release == Release(1, 30)
    assert release.git_version == "v1.30.4+k3s1"
    assert Release.parse("1.33.2").staging_version == "v0.33.2"
    assert str(Release(1, 33)) == "1.33" == Release(1, 33).minor_version
    with pytest.raises(ReleaseError):
        _ = Release(1, 33).staging_version


def test_order_by_major_minor_patch_a_minor_before_its_patches() -> None:
    texts = ["1.33.2", "1.30", "v1.9.11", "1.30.0", "1.31", "v1.30.14", "2.0"]
    ordered = sorted(Release.parse(text) for text in texts)
    assert [str(r) for r in ordered] == [
        "1.9.11",
        "1.30",
        "1.30.0",
        "1.30.14",
        "1.31",
        "1.33.2",
        "2.0",
    ]
    assert Release.parse("v1.31.4-gke.1") >= Release(1, 31)
    assert Release.parse("1.30.99") < Release(1, 31)
    assert Release(1, 31) != Release(1, 31, 0)
    assert Release.parse("1.30.2-gke.1") == Release.parse("v1.30.2")  # a build is its release
    assert len({Release.parse("v1.30.2+k3s1"), Release(1, 30, 2)}) == 1


def test_what_callers_carry() -> None:
    release = Release(1, 33, 2)
    assert Release.of(release) is release
    assert Release.of("v1.33.2") == release
    assert Release.of(None) is None
    assert Release.of("") is None
    assert Release.of(None, Release(1, 20)) == Release(1, 20)
    with pytest.raises(ReleaseError):
        Release.of("junk", Release(1, 20))


def test_a_version_answer() -> None:
    answer = {"major": "1", "minor": "33", "gitVersion": "v1.33.2", "platform": "linux/amd64"}
    assert Release.from_version_info(answer) == Release(1, 33, 2)
    assert Release.from_version_info({"major": "1", "minor": "30+"}) == Release(1, 30)
    with pytest.raises(ReleaseError, match="without a release"):
        Release.from_version_info({"platform": "linux/amd64"})


def test_a_pre_release_is_said_and_ordered_before_its_release() -> None:
    beta = Release.parse("1.30.0-beta.0")
    assert (str(beta), beta.prerelease, beta.git_version) == (
        "1.30.0-beta.0",
        "-beta.0",
        "v1.30.0-beta.0",
    )
    assert beta.staging_version == "v0.30.0-beta.0"
    assert beta.minor_release == Release(1, 30) < beta
    alpha, rc, final = (Release.parse(t) for t in ("v1.30.0-alpha.3", "1.30.0-rc.1", "1.30.0"))
    assert alpha < beta < rc < final < Release.parse("1.30.1")
    assert beta != final and len({beta, final, Release.parse("1.30.0-beta.0")}) == 2
    vendor = Release.parse("v1.30.0-gke.1")  # a vendor's build is its release, not a pre-release
    assert vendor.prerelease == "" and vendor == final and str(vendor) == "1.30.0"


def test_the_default_release_is_a_final_patch_release() -> None:
    assert CURRENT.patch is not None and not CURRENT.suffix
    assert CURRENT == Release.parse(str(CURRENT)) == Release.parse(CURRENT.git_version)
