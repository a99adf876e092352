"""Every data file of kube/data/ is read through datafiles, once, YAML through yamltext."""

from __future__ import annotations

import json

import pytest

from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.wire import yamltext


@pytest.mark.parametrize("name", sorted(p.name for p in datafiles.DATA.iterdir()))
def test_each_file_reads_as_its_own_reader_reads_it(name: str) -> None:
    text = datafiles.path(name).read_text()
    expected = yamltext.load(text) if name.endswith(".yaml") else json.loads(text)
    assert datafiles.load(name) == expected
    assert datafiles.load(name) is datafiles.load(name)  # read once, shared


def test_the_patch_tables_and_rules_live_with_the_rest() -> None:
    names = {p.name for p in datafiles.DATA.iterdir()}
    current = f"openapi-v3-{CURRENT.minor_version}.json"
    assert {"explanations.yaml", "openapi-v2-1.20.json", current} <= names


def test_only_yaml_and_json() -> None:
    with pytest.raises(ValueError, match=r"\.yaml or \.json"):
        datafiles.load("agents.txt")
