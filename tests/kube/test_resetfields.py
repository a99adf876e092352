"""The fields a write resets, as the default release's registry strategies say
(GetResetFields)."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.kube.resetfields import RESET_DATA, reset_fields
from tests.conftest import load_script


@pytest.mark.lab  # Go and the release's modules
def test_the_table_is_what_the_strategies_say() -> None:
    generate = load_script("generate_reset_fields")
    rows, _ = generate.table(CURRENT.minor_version)
    shipped = json.loads(files("k8s_wiretap.kube").joinpath("data", RESET_DATA).read_text())
    assert shipped["resets"] == rows
    assert len(rows) > 90


def test_resets_by_kind_subresource_and_release() -> None:
    assert reset_fields(CURRENT.git_version, "apps/v1", "Deployment", "") == (("status",),)
    assert set(reset_fields(CURRENT.git_version, "apps/v1", "Deployment", "status")) == {
        ("spec",),
        ("metadata", "labels"),
    }
    assert ("spec",) in reset_fields("1.30", "v1", "Pod", "status")
    assert reset_fields(CURRENT.git_version, "v1", "ConfigMap", "") == ()  # no status subresource
    assert reset_fields("v1.21.0", "apps/v1", "Deployment", "") == ()  # before reset fields
    assert reset_fields(None, "apps/v1", "Deployment", "") == ()
    approval = reset_fields(
        CURRENT.git_version, "certificates.k8s.io/v1", "CertificateSigningRequest", "approval"
    )
    assert ("status", "certificate") in approval
