"""scripts/release.py's decisions: which steps, what a release moves, the edits it makes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from k8s_wiretap.kube.release import CURRENT, Release
from k8s_wiretap.lab import apimodules
from tests.conftest import load_script

release = load_script("release")
ROOT = Path(__file__).resolve().parent.parent
DEFAULT = Release.parse("1.33.2")  # a default of these examples, not the project's


def test_a_pre_release_is_added_beside_the_default() -> None:
    plan = release.plan("1.34.0-beta.0", DEFAULT)
    assert plan.prerelease and not plan.moves_default and not plan.is_default
    assert plan.output() == ROOT / "build" / "release-1.34.0-beta.0"
    pins = {"1.32": "1.32.13"}
    assert release.pinned_after(plan, pins) == {"1.32": "1.32.13", "1.34": "1.34.0-beta.0"}


def test_a_final_release_moves_the_default_and_pins_the_one_before() -> None:
    plan = release.plan("1.34.0", DEFAULT)
    assert plan.moves_default and plan.is_default and not plan.prerelease
    assert plan.output() == ROOT / "k8s_wiretap" / "kube" / "data"
    pins = {"1.32": "1.32.13", "1.34": "1.34.0-rc.1"}  # its own pre-release goes
    assert release.pinned_after(plan, pins) == {"1.32": "1.32.13", "1.33": "1.33.2"}
    assert release.plan("1.33.3", DEFAULT).moves_default  # a newer patch too


def test_the_default_itself_moves_nothing() -> None:
    plan = release.plan(str(DEFAULT), DEFAULT)
    assert plan.is_default and not plan.moves_default and not plan.prerelease
    pins = {"1.32": "1.32.13"}
    assert release.pinned_after(plan, pins) == pins
    older = release.plan("1.32.14", DEFAULT)  # an older final release: pinned, not default
    assert not older.is_default and release.pinned_after(older, pins) == {"1.32": "1.32.14"}


@pytest.mark.parametrize("wrong", ["1.34", "1.34.0-gke.1", "latest", "1.20.2", "1.34.0+k3s1"])
def test_what_is_no_release_to_move_to(wrong: str) -> None:
    with pytest.raises(ValueError):
        release.plan(wrong, DEFAULT)


def test_the_pin_table_is_read_and_written_as_apimodules_holds_it() -> None:
    source = (ROOT / "k8s_wiretap" / "lab" / "apimodules.py").read_text()
    assert release.read_pins(source) == apimodules.PINNED
    assert release.edit_pins(source, apimodules.PINNED) == source  # no change: same text
    edited = release.edit_pins(source, {"1.20": "1.20.2", "1.34": "1.34.0-beta.0"})
    assert release.read_pins(edited) == {"1.20": "1.20.2", "1.34": "1.34.0-beta.0"}
    assert edited.count("PINNED: dict[str, str] = {") == 1


def test_the_constant_is_moved_in_its_one_line(tmp_path: Path) -> None:
    source = (ROOT / "k8s_wiretap" / "kube" / "release.py").read_text()
    assert release.edit_current(source, CURRENT) == source
    moved = release.edit_current(source, Release.parse("1.99.0"))
    assert moved.count('CURRENT = Release.parse("1.99.0")') == 1
    assert len(moved.splitlines()) == len(source.splitlines())
    path = tmp_path / "moved_release.py"
    path.write_text(moved)
    spec = importlib.util.spec_from_file_location("moved_release", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["moved_release"] = module  # the dataclass looks its module up
    spec.loader.exec_module(module)
    assert str(module.CURRENT) == "1.99.0"
    with pytest.raises(release.ReleaseStepError):
        release.edit_current("nothing here", CURRENT)


def test_the_steps_in_their_order() -> None:
    assert release.steps(None) == list(release.STEPS)
    assert list(release.STEPS)[:3] == ["pin", "toolchain", "schema"]
    assert list(release.STEPS)[-3:] == ["record", "explain", "conformance"]
    assert set(release.RUNNERS) == set(release.STEPS)
    assert release.steps(["conformance", "schema"]) == ["toolchain", "schema", "conformance"]
    with pytest.raises(ValueError, match="unknown step"):
        release.steps(["deploy"])


def test_unattributed_exchanges_are_those_whose_who_names_nobody() -> None:
    lines = [
        {"verb": "get", "who": {"component": "kubectl"}},
        {"verb": "watch", "who": {"component": "unknown"}},
        {"verb": "list", "who": {"component": ""}},
        {"verb": "create"},
        {"verb": "patch", "who": {"component": "controller-manager/deployment"}},
    ]
    assert [line["verb"] for line in release.unattributed(lines)] == ["watch", "list", "create"]


def test_the_script_says_every_step_it_takes() -> None:
    doc = release.__doc__
    assert doc is not None
    for number, name in enumerate(release.STEPS, 1):
        assert f"{number}. {name}" in doc, name


@pytest.mark.lab  # the releases' k8s.io/api modules (Go's module cache)
@pytest.mark.parametrize(
    "version",
    [str(CURRENT), *(v for v in apimodules.PINNED.values() if Release.parse(v).prerelease)],
)
def test_the_head_conformance_of_the_default_and_each_pre_release_is_complete(
    version: str,
) -> None:
    """Every HEAD fixture of the release's k8s.io/api decodes exactly as its JSON twin (the
    check `make release` ends with): for the pinned pre-release (1.38.0-beta.0) as for the
    default."""
    pinned = Release.parse(version)
    total, problems = release.conformance(pinned)
    head = apimodules.api_testdata(pinned) / "HEAD"
    assert total == len(list(head.glob("*.pb"))) > 150
    assert problems == []


def test_the_sparse_fixtures_program_is_moved_to_a_release(tmp_path: Path) -> None:
    """gofuzz/newest: its go.mod requires the release's staging modules, and main.go imports
    and registers every k8s.io/api group version the release has, no other."""
    api = tmp_path / "api"
    for package in ("apps/v1", "core/v1", "widgets/v1alpha9"):
        (api / package).mkdir(parents=True)
        (api / package / "register.go").write_text("package x\n")
    (api / "testdata" / "HEAD").mkdir(parents=True)  # no register.go: not an API package
    packages = release.api_packages(api)
    assert packages == ["apps/v1", "core/v1", "widgets/v1alpha9"]
    source = (release.GOFUZZ / "main.go").read_text()
    moved = release.gofuzz_main(source, packages)
    assert '\twidgetsv1alpha9 "k8s.io/api/widgets/v1alpha9"\n' in moved
    assert '"k8s.io/api/batch/v1"' in source and '"k8s.io/api/batch/v1"' not in moved
    groups = moved[moved.index("var groups") : moved.index("}", moved.index("var groups"))]
    assert "widgetsv1alpha9.AddToScheme" in groups and "batchv1.AddToScheme" not in groups
    assert "apiextv1.AddToScheme" in groups and "apiregv1.AddToScheme" in groups  # kept
    go_mod = release.gofuzz_go_mod(
        (release.GOFUZZ / "go.mod").read_text(), Release.parse("1.99.0-rc.1")
    )
    for module in ("k8s.io/api", "k8s.io/apimachinery", "k8s.io/kube-aggregator"):
        assert f"\t{module} v0.99.0-rc.1\n" in go_mod
    assert "sigs.k8s.io/randfill v1.0.0" in go_mod


def test_the_recordings_server_is_read_from_its_version_answers() -> None:
    lines = [
        {"path": "/version?timeout=32s", "response_body": {"gitVersion": "v1.99.0-rc.1"}},
        {"path": "/version", "response_body": "not decoded"},
        {"path": "/api/v1/pods", "response_body": {"gitVersion": "v0.0.0"}},
    ]
    assert release.served_versions(lines) == {"v1.99.0-rc.1"}
