"""Extract Kubernetes' strategic merge patch test tables into fixtures for tests/patch.

Usage:

    python scripts/extract_smp_cases.py STRATEGICPATCH_DIR [OUTPUT_DIR]

STRATEGICPATCH_DIR is staging/src/k8s.io/apimachinery/pkg/util/strategicpatch of a Kubernetes
source tree (the fixtures in the repository come from Kubernetes 1.20.2). OUTPUT_DIR defaults to
tests/patch/fixtures/smp. What it writes, one file per Go variable of patch_test.go:

- `<name>.yaml` for the YAML tables kept verbatim in `[]byte(\u0060...\u0060)` literals
  (sortMergeListTestCaseData, customStrategicMergePatchTestCaseData,
  createStrategicMergePatchTestCaseData): `testCases:` lists of description, original,
  twoWay, modified, current, threeWay, result, twoWayResult as YAML objects;
- `<name>.yaml` for the `[]StrategicMergePatchRawTestCase` slices (customStrategicMergePatch
  RawTestCases, strategicMergePatchRawTestCases, replaceRawExtensionPatchTestCases): a list of
  cases whose fields (original, twoWay, ...) hold the YAML text of the Go literal unchanged,
  plus expectedError where the case has one;
- `TestNumberConversion.json` and `TestUnknownField.json`: the JSON strings of those tests'
  case maps;
- the test schemas testdata/swagger-merge-item.json and swagger-precision-item.json.

The Go source is read with regular expressions that know its layout (backquoted literals,
`Field: []byte(...)`, `Description: "..."`); a table that is not found is an error, so a
changed layout does not silently produce fewer cases.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "tests/patch/fixtures/smp"
YAML_TABLES = (
    "sortMergeListTestCaseData",
    "customStrategicMergePatchTestCaseData",
    "createStrategicMergePatchTestCaseData",
)
RAW_TABLES = (
    "customStrategicMergePatchRawTestCases",
    "strategicMergePatchRawTestCases",
    "replaceRawExtensionPatchTestCases",
)
SCHEMAS = ("swagger-merge-item.json", "swagger-precision-item.json")
FIELD = re.compile(r"^\t+(\w+): (?:\[\]byte\(`(.*?)`\)|\"((?:[^\"\\]|\\.)*)\"),?$", re.M | re.S)
JSON_CASE = re.compile(r"^\t\t\"([^\"]+)\": \{\n(.*?)^\t\t\},", re.M | re.S)
JSON_FIELD = re.compile(r"^\t+(\w+):\s+`(.*?)`,", re.M | re.S)


def yaml_table(source: str, name: str) -> str:
    match = re.search(rf"^var {name} = \[\]byte\(`\n(.*?)`\)", source, re.M | re.S)
    if not match:
        raise SystemExit(f"patch_test.go: no YAML table {name}")
    return match.group(1)


def go_block(source: str, start: re.Pattern[str], name: str) -> str:
    """The text of a top-level Go block from `start` to its closing `}` at column 0."""
    match = start.search(source)
    if not match:
        raise SystemExit(f"patch_test.go: no {name}")
    end = source.index("\n}\n", match.end())
    return source[match.end() : end]


def lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def raw_table(source: str, name: str) -> list[dict[str, Any]]:
    start = re.compile(rf"^var {name} = \[\]StrategicMergePatchRawTestCase\{{", re.M)
    cases: list[dict[str, Any]] = []
    for field, text, quoted in FIELD.findall(go_block(source, start, name)):
        value = text.lstrip("\n") if not quoted else json.loads(f'"{quoted}"')
        if field == "Description":
            cases.append({"description": value})
        elif cases:
            cases[-1][lower_first(field)] = value
    if not cases:
        raise SystemExit(f"patch_test.go: {name} has no cases")
    return cases


def json_cases(source: str, test: str) -> dict[str, dict[str, str]]:
    start = re.compile(rf"^func {test}\(t \*testing\.T\) \{{", re.M)
    body = go_block(source, start, test)
    cases = {name: dict(JSON_FIELD.findall(fields)) for name, fields in JSON_CASE.findall(body)}
    if not cases:
        raise SystemExit(f"patch_test.go: {test} has no cases")
    return cases


class LiteralDumper(yaml.SafeDumper):
    """Writes multi-line strings as `|` blocks, so the YAML inside stays readable."""


def _literal(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


LiteralDumper.add_representer(str, _literal)


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__, file=sys.stderr)
        return 2
    package = Path(argv[0])
    output = Path(argv[1]) if len(argv) == 2 else DEFAULT_OUTPUT
    output.mkdir(parents=True, exist_ok=True)
    source = (package / "patch_test.go").read_text()
    for name in YAML_TABLES:
        (output / f"{name}.yaml").write_text(yaml_table(source, name))
    for name in RAW_TABLES:
        text = yaml.dump(raw_table(source, name), Dumper=LiteralDumper, sort_keys=False)
        (output / f"{name}.yaml").write_text(text)
    for test in ("TestNumberConversion", "TestUnknownField"):
        text = json.dumps(json_cases(source, test), indent=2) + "\n"
        (output / f"{test}.json").write_text(text)
    for schema in SCHEMAS:
        shutil.copyfile(package / "testdata" / schema, output / schema)
    print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
