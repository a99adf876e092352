"""Kubernetes' own strategic merge patch test cases, as fixtures (see fixtures/smp/README.md):
1.20.2's in fixtures/smp, a newer release's in fixtures/smp-MINOR (NEWER: from that release's
apimachinery).

Each case is one application of a known patch: the two-way patch to `original` (expecting
`twoWayResult`, else `modified`, or `expectedError`), and the three-way patch to `current`
(expecting `result`). The YAML-object tables are normalized with a port of the Go test's
`sortMergeListsByName` before applying, as patch_test.go does; the raw tables are not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from k8s_wiretap.kube.release import Release
from k8s_wiretap.patch.gosemantics import go_v
from k8s_wiretap.patch.meta import Node, PatchSchema
from k8s_wiretap.patch.smp_lists import element_kind
from k8s_wiretap.patch.strategic import lookup_slice, lookup_struct, retain_keys_strategy

FIXTURES = Path(__file__).parent / "fixtures" / "smp"
NEWER = max((p.name.removeprefix("smp-") for p in FIXTURES.parent.glob("smp-*")), key=Release.parse)
TABLES = {"1.20": FIXTURES, NEWER: FIXTURES.with_name(f"smp-{NEWER}")}
OBJECT_TABLES = ("customStrategicMergePatchTestCaseData", "createStrategicMergePatchTestCaseData")
RAW_TABLES = (
    "customStrategicMergePatchRawTestCases",
    "strategicMergePatchRawTestCases",
    "replaceRawExtensionPatchTestCases",
)
# TestUnknownField's "json" (NEWER): a schema-less field that kubectl's OpenAPI lookup merges
# into; with Go structs (the API server's lookup, which the engine has) the same case expects
# an error, and the engine's is the struct lookup's "data type is not struct".
OPENAPI_LOOKUP_ONLY = frozenset({"json"})


@dataclass(frozen=True)
class Case:
    id: str
    original: dict[str, Any]
    patch: dict[str, Any]
    expected: dict[str, Any] | None
    error: str = ""
    schema: str = "mergeItem"
    release: str = "1.20"  # whose tables, and whose server's rules (strategic.SmpRules)


@cache
def schema_node(name: str, release: str = "1.20") -> Node:
    """A definition of the test schema (upstream's testdata, which NEWER ships with a
    trailing comma Go's YAML reader takes: so does this one)."""
    file = "swagger-precision-item.json" if name == "precisionItem" else "swagger-merge-item.json"
    text = (TABLES[release] / file).read_text()
    node = PatchSchema.from_openapi(yaml.safe_load(text)).definition(name)
    assert node is not None
    return node


def canonical(value: Any) -> str:
    """The JSON bytes the Go test compares (Go's json.Marshal sorts keys)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _sort_scalars(items: list[Any]) -> list[Any]:
    return sorted(items, key=go_v)


def _dedup_sorted(items: list[Any]) -> list[Any]:
    unique: list[Any] = []
    for item in items:
        if not any(type(item) is type(u) and item == u for u in unique):
            unique.append(item)
    return _sort_scalars(unique)


def sort_merge_lists(value: dict[str, Any], node: Node) -> dict[str, Any]:
    """sortMergeListsByNameMap from patch_test.go's helpers (patch.go)."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "$retainKeys" or key.startswith("$deleteFromPrimitiveList"):
            item = _sort_scalars(item)
        elif key.startswith("$setElementOrder") or key == "$patch":
            pass
        elif isinstance(item, dict):
            item = sort_merge_lists(item, lookup_struct(node, key)[0])  # type: ignore[arg-type]
        elif isinstance(item, list):
            child, strategies, merge_key = lookup_slice(node, key)
            if retain_keys_strategy(strategies)[1] == "merge":
                item = _sort_list(item, child, merge_key)
        out[key] = item
    return out


def _sort_list(items: list[Any], node: Node | None, merge_key: str) -> list[Any]:
    if not items:
        return items
    if element_kind(items) != "map[string]interface {}":
        return _dedup_sorted(items)
    assert node is not None
    items = [sort_merge_lists(item, node) for item in items]
    return sorted(items, key=lambda item: go_v(item.get(merge_key)))


def _load(text: str | None) -> dict[str, Any]:
    value = yaml.safe_load(text) if text else None
    return value if isinstance(value, dict) else {}


def _object_cases(table: str, release: str) -> list[Case]:
    node = schema_node("mergeItem", release)
    cases = []
    for case in yaml.safe_load((TABLES[release] / f"{table}.yaml").read_text())["testCases"]:

        def get(name: str, case: dict[str, Any] = case) -> dict[str, Any]:
            return sort_merge_lists(case.get(name) or {}, node)

        name = f"{table}:{case['description']}"
        expected = get("twoWayResult") if "twoWayResult" in case else get("modified")
        two = Case(f"{name} (two-way)", get("original"), get("twoWay"), expected)
        cases.append(replace(two, release=release))
        if "threeWay" in case and "result" in case:
            three = Case(f"{name} (three-way)", get("current"), get("threeWay"), get("result"))
            cases.append(replace(three, release=release))
    return cases


def _raw_cases(table: str, release: str) -> list[Case]:
    cases = []
    for case in yaml.safe_load((TABLES[release] / f"{table}.yaml").read_text()):
        name = f"{table}:{case['description']}"
        expected_text = case.get("twoWayResult") or case.get("modified")
        error = case.get("expectedError", "")
        expected = None if error else _load(expected_text)
        original, patch = _load(case["original"]), _load(case["twoWay"])
        cases.append(Case(f"{name} (two-way)", original, patch, expected, error, release=release))
        if "threeWay" in case and "result" in case:
            current, three = _load(case.get("current")), _load(case["threeWay"])
            result = _load(case["result"])
            cases.append(Case(f"{name} (three-way)", current, three, result, release=release))
    return cases


def _json_cases(release: str) -> list[Case]:
    cases = []
    numbers = json.loads((TABLES[release] / "TestNumberConversion.json").read_text())
    for name, case in numbers.items():
        old, patch, result = (
            json.loads(case[k]) for k in ("Old", "ExpectedPatch", "ExpectedResult")
        )
        number = Case(f"TestNumberConversion:{name}", old, patch, result, "", "precisionItem")
        cases.append(replace(number, release=release))
    unknown = json.loads((TABLES[release] / "TestUnknownField.json").read_text())
    for name, case in unknown.items():
        if name in OPENAPI_LOOKUP_ONLY:
            continue
        for way, start in (("TwoWay", "Original"), ("ThreeWay", "Current")):
            if f"Expected{way}" in case:
                patch = json.loads(case[f"Expected{way}"])
                result = json.loads(case[f"Expected{way}Result"])
                name_way = f"TestUnknownField:{name} ({way})"
                start_value = json.loads(case[start])
                cases.append(Case(name_way, start_value, patch, result, release=release))
    return cases


def all_cases(release: str = "1.20") -> list[Case]:
    """Every case of `release`'s tables ("1.20" or NEWER)."""
    cases = [c for table in OBJECT_TABLES for c in _object_cases(table, release)]
    cases += [c for table in RAW_TABLES for c in _raw_cases(table, release)]
    return cases + _json_cases(release)


def sort_cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    table = yaml.safe_load((TABLES["1.20"] / "sortMergeListTestCaseData.yaml").read_text())
    return [(c["description"], c["original"], c["sorted"]) for c in table["testCases"]]
