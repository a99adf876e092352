"""The fixtures copied from Kubernetes are still exactly what its 1.20 sources hold.

Conformance (`tests/decode/fixtures/testdata-HEAD`) and the strategic merge patch tables
(`tests/patch/fixtures/smp`, made by `scripts/extract_smp_cases.py`) are committed so tests run
offline; these checks tie each copy back to the real sources. Debian's 1.20.2 source package
and the k8s.io/api v0.20.2 Go module the other releases' fixtures come from
(tests/decode/test_protobuf_releases.py) hold the same testdata.
"""

from __future__ import annotations

from pathlib import Path

from k8s_wiretap.lab.apimodules import api_testdata, release
from tests.conftest import load_script

ROOT = Path(__file__).resolve().parent.parent
HEAD = ROOT / "tests" / "decode" / "fixtures" / "testdata-HEAD"
SMP = ROOT / "tests" / "patch" / "fixtures" / "smp"


def test_conformance_fixtures_are_kubernetes_testdata(k8s_source: Path) -> None:
    upstream = k8s_source / "staging" / "src" / "k8s.io" / "api" / "testdata" / "HEAD"
    copies = sorted(p for p in HEAD.iterdir() if p.suffix in {".pb", ".json"})
    assert len(copies) > 250
    for copy in copies:
        assert copy.read_bytes() == (upstream / copy.name).read_bytes(), copy.name
    upstream_pb = {p.name for p in upstream.glob("*.pb")}
    assert upstream_pb == {p.name for p in copies if p.suffix == ".pb"}


def test_debian_and_the_go_module_of_1_20_hold_the_same_testdata(k8s_source: Path) -> None:
    debian = k8s_source / "staging" / "src" / "k8s.io" / "api" / "testdata"
    module = api_testdata(release("1.20"))
    files = sorted(p.relative_to(module) for p in module.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(debian) for p in debian.rglob("*") if p.is_file())
    assert len(files) > 700
    for name in files:
        assert (module / name).read_bytes() == (debian / name).read_bytes(), name


def test_smp_tables_are_what_the_extractor_makes(k8s_source: Path, tmp_path: Path) -> None:
    extract = load_script("extract_smp_cases")
    folder = k8s_source / "staging/src/k8s.io/apimachinery/pkg/util/strategicpatch"
    assert extract.main([str(folder), str(tmp_path)]) == 0
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(p.name for p in SMP.iterdir() if p.name != "README.md")
    for name in made:
        assert (tmp_path / name).read_bytes() == (SMP / name).read_bytes(), name
