"""The one YAML reader and writer: libyaml's, reading and writing what PyYAML's own does."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from k8s_wiretap.wire import yamltext

DOCUMENTS = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}},
    {"ports": [{"port": 80, "protocol": "TCP"}], "on": True, "yes": "yes", "n": None},
    {"text": "café ünïcode", "multi": "line one\nline two\n", "quoted": "1.0", "empty": ""},
    [1, 2.5, "three", {"four": [5]}],
]


@pytest.mark.parametrize("value", DOCUMENTS)
def test_written_and_read_back_as_pyyaml_does(value: Any) -> None:
    text = yamltext.dump(value)
    assert text == yaml.safe_dump(value, sort_keys=False, allow_unicode=True)
    assert yamltext.load(text) == yaml.safe_load(text) == value


def test_yaml_1_1_as_the_api_server_reads_it() -> None:
    assert yamltext.load("a: yes\nb: off\nc: 0755\nd: 1e3\n") == yaml.safe_load(
        "a: yes\nb: off\nc: 0755\nd: 1e3\n"
    )


def test_a_bad_document_is_a_yaml_error() -> None:
    with pytest.raises(yamltext.YAMLError):
        yamltext.load("a: [1, 2\n")
