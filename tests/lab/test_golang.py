"""Which Go a module is built with: the machine's, or an approved toolchain its go.mod needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from k8s_wiretap.lab.golang import (
    APPROVED_TOOLCHAINS,
    LOCAL,
    ToolchainError,
    download_toolchain,
    go_requirement,
    go_version,
    module_go,
    module_go_env,
    parse_go_version,
    toolchain_for,
)

GO_MOD = "module k8s.io/kubernetes\n\ngo 1.27.0\n\ngodebug default=go1.27\n"


def test_the_requirement_is_the_go_line() -> None:
    assert go_requirement(GO_MOD) == (1, 27, 0)
    assert go_requirement("module x\n\ngo 1.26\n") == (1, 26)
    assert go_requirement("module x\n") == (1, 0)  # no go line: any Go


def test_the_machines_go_when_it_is_new_enough() -> None:
    assert toolchain_for((1, 26, 0), (1, 26, 8)) == LOCAL == "local"
    assert toolchain_for((1, 26, 8), (1, 26, 8)) == LOCAL


def test_an_approved_toolchain_when_the_machines_is_too_old() -> None:
    assert APPROVED_TOOLCHAINS == ("go1.27.3",)
    assert toolchain_for((1, 27, 0), (1, 26, 8)) == "go1.27.3"
    assert toolchain_for((1, 27), (1, 26, 8)) == "go1.27.3"
    with pytest.raises(ToolchainError, match=r"need Go 1\.28\.0 or newer.*go1\.27\.3"):
        toolchain_for((1, 28, 0), (1, 26, 8))
    for name in APPROVED_TOOLCHAINS:
        assert parse_go_version(name) > (1, 26)


def test_the_environment_runs_the_chosen_toolchain() -> None:
    go = Path("/usr/local/go/bin/go")
    base = {"PATH": "/usr/bin", "GOTOOLCHAIN": "go1.99.0", "GOFLAGS": "-mod=mod"}
    assert module_go_env(go, base)["GOTOOLCHAIN"] == "local"
    chosen = module_go_env(go, base, "go1.27.3")
    assert chosen["GOTOOLCHAIN"] == "go1.27.3" and "GOFLAGS" not in chosen
    assert chosen["PATH"].startswith("/usr/local/go/bin")


def test_a_download_go_refused_for_its_go_line_is_retried_with_a_toolchain(
    tmp_path: Path,
) -> None:
    go_mod = tmp_path / "v1.38.0-beta.0.mod"
    go_mod.write_text(GO_MOD)
    refused = {
        "Path": "k8s.io/kubernetes",
        "Error": "requires go >= 1.27.0 (running go 1.26.8; GOTOOLCHAIN=local)",
        "GoMod": str(go_mod),
    }
    go = Path(module_go())  # the machine's Go: the download was refused by it
    version = go_version(str(go))
    assert version is not None and version < (1, 27), "the machine's Go is new enough"
    assert download_toolchain(refused, go) == "go1.27.3"
    assert download_toolchain({**refused, "Error": ""}, go) is None  # not refused
    assert download_toolchain({"Error": "no such version"}, go) is None  # no go.mod read
    go_mod.write_text("module x\n\ngo 1.20\n")
    assert download_toolchain(refused, go) is None  # the machine's is new enough
