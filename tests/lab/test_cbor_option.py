"""`lab up --cbor`: the CBOR gates, and a release without them refused before anything starts.

The running lab with the gates on is tested in tests/decode/test_cbor_lab.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from k8s_wiretap.lab.components import CBOR_ENV, cbor_args
from k8s_wiretap.lab.releases import CURRENT
from k8s_wiretap.lab.versions import resolve_release
from tests.conftest import cli


@pytest.mark.lab  # the binaries' --help
def test_the_gates_go_to_the_components_that_take_them() -> None:
    release = resolve_release(CURRENT, lookup=False)
    server = cbor_args("apiserver", release)
    assert server == (
        "--feature-gates=CBORServingAndStorage=true,ClientsAllowCBOR=true,ClientsPreferCBOR=true",
    )
    for client in ("controller-manager", "scheduler"):
        args = cbor_args(client, release)
        assert "--feature-gates=ClientsAllowCBOR=true,ClientsPreferCBOR=true" in args
        assert "--kube-api-content-type=application/cbor" in args
    assert cbor_args("kubelet", release) == ()  # kubemark has no --feature-gates
    assert cbor_args("etcd", release) == ()
    assert set(CBOR_ENV) == {"KUBE_FEATURE_ClientsAllowCBOR", "KUBE_FEATURE_ClientsPreferCBOR"}


def test_a_release_before_the_gates_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no CBOR"):
        cbor_args("apiserver", resolve_release("1.20", lookup=False))
    result = cli(
        "lab",
        "up",
        "--cbor",
        "--kube-version",
        "1.20",
        "--no-build",
        "--dir",
        str(tmp_path / "lab"),
    )
    assert result.returncode != 0
    assert "--cbor needs --kube-version 1.32 or later" in result.stderr
    assert not (tmp_path / "lab" / "lab.json").exists()  # nothing was started
