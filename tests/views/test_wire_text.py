"""Text from the wire reaches a terminal with its control characters shown, never obeyed.

Recordings made by the project's own importers: an audit log whose user agent, annotation
and ConfigMap data hold ESC sequences (cursor up, erase line, a window title), CR and bidi
overrides, and a HAR whose method holds CR LF. Every human output (explain's lines, story
and Markdown, history and its field story, the console, error messages) shows them as
escapes; the JSON outputs escape them as JSON does, C1 and bidi included.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.commands.audit_webhook import _Messages
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.objects import field_story, history_streamed
from k8s_wiretap.importers.audit import import_audit
from k8s_wiretap.importers.har import har_reader
from k8s_wiretap.importers.sink import Sink
from k8s_wiretap.views.console import ConsoleOutput
from k8s_wiretap.views.history import write_field_story, write_history
from k8s_wiretap.views.json import write_json
from k8s_wiretap.views.lines import exchange_line
from k8s_wiretap.views.story import write_story
from tests.conftest import cli

ANNOTATION = "x\x1b[1A\x1b[2K\rFAKE LINE"
DATA = "v\x1b]0;TITLE\x07"
AGENT = "\x1b]0;PWNED\x07\x1b[1A\x1b[2K\rFAKE/1.0 (\u202eevil)"
METHOD = "GET\r\nFAKE 00:00:00.000 kubectl get /api 200"
# what a terminal obeys: every C0 but the line's own end, DEL, C1, bidi overrides, isolates
OBEYED = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _event(audit_id: str, verb: str, uri: str, agent: str, code: int, rv: int) -> dict[str, Any]:
    return {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "RequestResponse",
        "auditID": audit_id,
        "stage": "ResponseComplete",
        "requestURI": uri,
        "verb": verb,
        "user": {"username": "alice", "groups": ["system:authenticated"]},
        "sourceIPs": ["127.0.0.1"],
        "userAgent": agent,
        "objectRef": {"resource": "configmaps", "namespace": "default", "name": "cm"},
        "responseStatus": {"metadata": {}, "code": code},
        "requestReceivedTimestamp": f"2026-12-03T19:46:0{rv}.100000Z",
        "stageTimestamp": f"2026-12-03T19:46:0{rv}.200000Z",
    }


def _configmap(rv: int, annotation: str | None, data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "cm", "namespace": "default", "uid": "u1"}
    meta["resourceVersion"] = str(rv)
    if annotation is not None:
        meta["annotations"] = {"a": annotation}
    return {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta, "data": {"k": data}}


def audit_recording(folder: Path, agent: str, annotation: str, data: str) -> Path:
    """A ConfigMap created by a client whose user agent is `agent`, then updated by kubectl
    with `annotation` and `data`: imported from its audit log, as `import audit` does."""
    create = _event("a1", "create", "/api/v1/namespaces/default/configmaps", agent, 201, 4)
    create["requestObject"] = create["responseObject"] = _configmap(5, None, "v")
    kubectl = "kubectl/v1.33.2 (linux/amd64) kubernetes/abc"
    update = _event("a2", "update", "/api/v1/namespaces/default/configmaps/cm", kubectl, 200, 5)
    update["requestObject"] = update["responseObject"] = _configmap(6, annotation, data)
    log, out = folder / "audit.log", folder / "audit.jsonl"
    log.write_text(json.dumps(create) + "\n" + json.dumps(update) + "\n")
    with Sink(out, source="audit log", overwrite=True) as sink:
        import_audit([log], sink)
    return out


def har_recording(folder: Path, method: str) -> Path:
    """One GET whose method is `method`, imported from a HAR as `import har` does."""
    entry = {
        "startedDateTime": "2026-01-01T00:00:00.000Z",
        "time": 5,
        "request": {"method": method, "url": "https://127.0.0.1:6443/api/v1/pods", "headers": []},
        "response": {
            "status": 200,
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {"mimeType": "application/json", "text": "{}"},
        },
        "timings": {"send": 0, "wait": 1, "receive": 1},
    }
    har, out = folder / "in.har", folder / "har.jsonl"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    with Sink(out, source="HAR file", overwrite=True) as sink:
        har_reader(har)(sink)
    return out


def human_outputs(recording: Path) -> dict[str, str]:
    """What each human view prints of `recording` (as explain, history and the console do)."""
    explainer = Explainer(Analysis.of(load(recording)))
    said: dict[str, str] = {}
    said["lines"] = "".join(exchange_line(e) + "\n" for e in explainer.analysis.exchanges)
    for name, markdown in (("story", False), ("markdown", True)):
        out = io.StringIO()
        write_story(explainer, out, noise=True, markdown=markdown)
        said[name] = out.getvalue()
    console = io.StringIO()
    output = ConsoleOutput(console)
    for record in iter_records(recording, []):
        output.write(record)
    said["console"] = console.getvalue()
    if any(e.info.resource == "configmaps" for e in explainer.analysis.exchanges):
        history = history_streamed(iter_records(recording, []), "configmap/cm", "default")
        for fmt in ("story", "markdown"):
            out = io.StringIO()
            write_history(history, out, fmt)
            said[f"history {fmt}"] = out.getvalue()
            out = io.StringIO()
            write_field_story(history, "data", field_story(history, "data"), out, fmt)
            said[f"history --field {fmt}"] = out.getvalue()
    return said


def assert_nothing_obeyed(outputs: dict[str, str]) -> None:
    for name, text in outputs.items():
        found = OBEYED.search(text)
        assert found is None, f"{name} prints {found.group()!r}: {text!r}"


def test_every_human_output_of_the_seen_cases_shows_escapes(tmp_path: Path) -> None:
    said = human_outputs(audit_recording(tmp_path, AGENT, ANNOTATION, DATA))
    assert_nothing_obeyed(said)
    assert "annotation a=x\\x1b[1A\\x1b[2K\\rFAKE LINE" in said["history story"]
    assert "data.k v → v\\x1b]0;TITLE\\x07" in said["history --field story"]
    for name in ("lines", "story", "markdown", "console"):
        assert "\\x1b]0;PWNED\\x07\\x1b[1A\\x1b[2K" in said[name], name
    har = human_outputs(har_recording(tmp_path, METHOD))
    assert_nothing_obeyed(har)
    assert har["lines"].count("\n") == 1  # one exchange, one line
    assert " GET\\r\\nFAKE 00:00:00.000 kubectl get /api 200 /api/v1/pods 200" in har["lines"]


def test_history_shows_the_annotation_and_the_title_sequence_escaped(tmp_path: Path) -> None:
    recording = str(audit_recording(tmp_path, AGENT, ANNOTATION, DATA))
    history = cli("history", recording, "configmap/default/cm")
    assert history.returncode == 0, history.stderr
    assert "    annotation a=x\\x1b[1A\\x1b[2K\\rFAKE LINE\n" in history.stdout
    field = cli("history", recording, "configmap/default/cm", "--field", "data")
    assert field.returncode == 0, field.stderr
    assert "    data.k v → v\\x1b]0;TITLE\\x07\n" in field.stdout
    assert_nothing_obeyed({"history": history.stdout, "--field": field.stdout})


def test_explain_shows_an_imported_user_agent_and_a_har_method_escaped(tmp_path: Path) -> None:
    recording = str(audit_recording(tmp_path, AGENT, ANNOTATION, DATA))
    outputs = {}
    for fmt in ("story", "lines", "markdown"):
        result = cli("explain", recording, "--format", fmt)
        assert result.returncode == 0, result.stderr
        outputs[fmt] = result.stdout
        assert "\\x1b]0;PWNED\\x07\\x1b[1A\\x1b[2K" in result.stdout
    har = cli("explain", str(har_recording(tmp_path, METHOD)), "--format", "lines")
    outputs["har"] = har.stdout
    assert har.stdout.count("\n") == 1 and "GET\\r\\nFAKE" in har.stdout
    assert_nothing_obeyed(outputs)


def test_json_outputs_escape_c1_and_bidi_and_keep_the_value(tmp_path: Path) -> None:
    recording = audit_recording(tmp_path, AGENT + "\x9b2J\x7f", ANNOTATION, DATA + "\u2066")
    out = io.BytesIO()
    write_json(iter_records(recording, []), out)
    text = out.getvalue().decode()
    history = cli("history", str(recording), "configmap/default/cm", "--format", "json")
    assert_nothing_obeyed({"explain": text, "history": history.stdout})
    agents = [json.loads(line)["user_agent"] for line in text.splitlines()]
    assert agents[0] == AGENT + "\x9b2J\x7f"
    assert "\\u009b2J\\u007f" in text and "\\u202eevil" in text
    assert "\\u2066" in history.stdout


def test_an_error_quoting_a_file_name_shows_it_escaped(tmp_path: Path) -> None:
    missing = tmp_path / "no\x1b[2Jfile\r.jsonl"
    result = cli("explain", str(missing))
    assert result.returncode == 1
    assert result.stderr == f"k8s-wiretap: cannot read {tmp_path}/no\\x1b[2Jfile\\r.jsonl: " + (
        "No such file or directory\n"
    )


CONTROL = st.sampled_from(
    [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F))]
    + [chr(c) for c in range(0x2066, 0x206A)]
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CONTROL | st.sampled_from("a[;0 "), min_size=1, max_size=12).map("".join))
@example("\x1b[1A\x1b[2K\rFAKE\n\x9b\u202e")
def test_no_control_character_reaches_a_human_output(tmp_path_factory: Any, text: str) -> None:
    folder = tmp_path_factory.mktemp("controls")
    said = human_outputs(audit_recording(folder, f"agent{text}/1.0", f"x{text}", f"v{text}"))
    assert_nothing_obeyed(said)
    assert said["lines"].count("\n") == 2  # two exchanges, two lines
    said = human_outputs(har_recording(folder, f"GET{text}"))
    assert_nothing_obeyed(said)
    assert said["lines"].count("\n") == 1


def test_decode_shows_a_body_s_controls_escaped_in_yaml_and_json(tmp_path: Path) -> None:
    body = tmp_path / "cm.json"
    value = "v\x1b]0;T\x07\u202e\x9b"
    body.write_text(json.dumps({"kind": "ConfigMap", "apiVersion": "v1", "data": {"k": value}}))
    yaml = cli("decode", str(body), "-o", "yaml")
    assert yaml.returncode == 0, yaml.stderr
    assert '  k: "v\\e]0;T\\a\\u202e\\x9B"\n' in yaml.stdout  # YAML's escapes, and the override
    as_json = cli("decode", str(body), "-o", "json")
    assert json.loads(as_json.stdout)["data"]["k"] == value
    assert_nothing_obeyed({"yaml": yaml.stdout, "json": as_json.stdout})


def test_an_unknown_argument_is_quoted_escaped(tmp_path: Path) -> None:
    result = cli("explain", str(tmp_path / "r.jsonl"), "extra\x1b[2J")
    assert result.returncode == 2
    assert "unexpected argument 'extra\\x1b[2J' (see k8s-wiretap explain --help)" in result.stderr
    assert_nothing_obeyed({"stderr": result.stderr})


def test_what_the_audit_webhook_says_on_stderr_is_escaped(capsys: Any) -> None:
    _Messages(tui=False).say("batch from 127.0.0.1 skipped: id \x1b]0;T\x07\r\n")
    said = capsys.readouterr().err
    assert said == "k8s-wiretap: batch from 127.0.0.1 skipped: id \\x1b]0;T\\x07\\r\\n\n"
