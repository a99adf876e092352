"""On `lab up --via-proxy` (the API server writing an audit log at RequestResponse): the
issue's refused `kubectl patch` of a Secret, bodies the API server cannot read, and a
stringData patch; no output of the recording, nor of the imported audit log, holds a value,
and the API server's messages keep their shape."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from k8s_wiretap.lab import Lab, UpOptions
from tests.conftest import Kubectl, cli
from tests.fuzz.test_secret_outputs import outputs

pytestmark = pytest.mark.lab  # a lab of the module's own

VALUE = "Zq8LEAKREAL28pw"  # the issue's
RAW_VALUE = "Zq8RAWBODYleak9"  # in bodies the API server cannot read
STRING_VALUE = "Zq8STRINGDATA77"  # a stringData patch that succeeds
SECRETS = "/api/v1/namespaces/leak/secrets"
Recorded = tuple[Path, Path, dict[str, str]]  # the recording, the audit log, kubectl's stderr


def forbidden() -> list[str]:
    return [
        form
        for value in (VALUE, RAW_VALUE, STRING_VALUE)
        for form in (value, base64.b64encode(value.encode()).decode(), value.encode().hex())
    ]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """The recording, the API server's audit log, and what kubectl printed."""
    folder = tmp_path_factory.mktemp("leak")
    lab = Lab(folder / "lab")
    options = UpOptions(build=False, record=folder / "leak.jsonl", audit_level="RequestResponse")
    state = lab.up(options)
    said: dict[str, str] = {}
    try:
        kubectl = Kubectl(state.kubeconfig, folder / "cache")
        kubectl("create", "namespace", "leak")
        kubectl("-n", "leak", "create", "secret", "generic", "sdata", "--from-literal=password=old")
        patch = '{"data":{"password":"Zq8LEAKREAL28pw"}}'
        result = kubectl.run("-n", "leak", "patch", "secret", "sdata", "-p", patch, check=False)
        said["patch"] = result.stderr
        for name, body in (
            ("malformed", '{"data":{"password":"' + RAW_VALUE),
            ("no kind", json.dumps({"apiVersion": "v1", "stringData": {"k": RAW_VALUE}})),
        ):
            result = kubectl.run("create", "--raw", SECRETS, "-f", "-", stdin=body, check=False)
            said[name] = result.stderr
        string_patch = json.dumps({"stringData": {"password": STRING_VALUE}})
        kubectl("-n", "leak", "patch", "secret", "sdata", "-p", string_patch)
    finally:
        lab.down()
    assert state.recording
    yield Path(state.recording), folder / "lab" / "logs" / "audit.log", said


def test_the_api_server_quotes_the_values(recorded: Recorded) -> None:
    """What kubectl itself printed: the leak this masking exists for."""
    _, _, said = recorded
    assert VALUE in said["patch"] and "illegal base64 data" in said["patch"]
    assert RAW_VALUE[:8] in said["malformed"] or RAW_VALUE in said["no kind"]


def test_no_output_of_the_recording_holds_a_value(
    recorded: Recorded,
) -> None:
    recording, _, _ = recorded
    made = outputs(recording)
    for output, text in made.items():
        for form in forbidden():
            assert form not in text, f"{output} holds {form!r}"
    story = made["explain --format story"]
    assert 'patch: Invalid value: "redacted:' in story
    assert "error decoding from json: illegal base64 data" in story


def test_history_says_the_string_data_patch_changed_the_password(
    recorded: Recorded,
) -> None:
    recording, _, _ = recorded
    history = outputs(recording)["history"]
    assert "data.password changed (redacted)" in history
    assert "nothing changed" not in history


def test_the_imported_audit_log_holds_no_value(recorded: Recorded, tmp_path: Path) -> None:
    _, log, _ = recorded
    assert VALUE in log.read_text()  # the API server's log holds it in the clear
    imported = tmp_path / "audit.jsonl"
    assert cli("import", "audit", str(log), "-o", str(imported)).returncode == 0
    for output, text in outputs(imported).items():
        for form in forbidden():
            assert form not in text, f"imported: {output} holds {form!r}"
