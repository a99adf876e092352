"""`import audit` on the real lab's own audit log: it explains with nothing unattributed, a
watch's stages are one exchange, Secrets are redacted, bad lines are said and skipped, an
existing output is kept, and every shape a log arrives in (EventList batches, wrappers,
gzip) reads as the plain lines do."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.lab import audit_policy
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, cli, wait_until

pytestmark = pytest.mark.lab

SECRET_VALUE = "hunter2-audit-import"
METADATA_LINES = 20_000  # the session lab's start-up and first tests: every component


def audit_log(lab: LabState) -> Path:
    return Path(lab.kubeconfig).parent / "logs" / "audit.log"


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_lines(path)]


def log_lines(path: Path) -> list[str]:
    """The whole lines of a log (`whole_lines`), split at newlines only (str.splitlines
    also splits at U+0085 and U+2028, which a JSON string may hold as they are)."""
    return [line for line in whole_lines(path).decode().split("\n") if line.strip()]


def whole_lines(path: Path, offset: int = 0) -> bytes:
    """The lines of a log the API server may be writing, from `offset` on, whole: from
    the start of the first line that begins at or after `offset` (an offset inside a line
    skips the rest of it) to the last newline (a line being written is left out)."""
    with path.open("rb") as stream:
        if offset:
            stream.seek(offset - 1)
            if stream.read(1) != b"\n":
                stream.readline()  # the rest of the line `offset` is inside
        data = stream.read()
    return data[: data.rfind(b"\n") + 1]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def imported(tmp_path: Path, *logs: Path, name: str = "rec.jsonl") -> tuple[Path, str]:
    out = tmp_path / name
    result = cli("import", "audit", *map(str, logs), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return out, result.stderr


@pytest.fixture(scope="module")
def rr_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LabState, Kubectl]]:
    """A lab whose audit log is at RequestResponse, with a Secret written and read and a
    watch that the server ended (both of its stages in the log)."""
    lab = Lab(tmp_path_factory.mktemp("audit") / "lab")
    state = lab.up(UpOptions(build=False, audit_level="RequestResponse"))
    try:
        kubectl = Kubectl(state.kubeconfig, tmp_path_factory.mktemp("kubecache"))
        kubectl(
            "create", "secret", "generic", "imported", f"--from-literal=password={SECRET_VALUE}"
        )
        kubectl("get", "secret", "imported", "-o", "json")
        kubectl("get", "--raw", "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1")
        denied = kubectl.run("get", "configmaps", "--as=jane", "--as-group=team", check=False)
        assert "forbidden" in denied.stderr
        log = audit_log(state)
        wait_until(lambda: "timeoutSeconds=1" in _completed(log), 30, "the watch's end logged")
        yield state, kubectl
    finally:
        lab.down()


def _completed(log: Path) -> str:
    return "\n".join(line for line in log_lines(log) if '"stage":"ResponseComplete"' in line)


def test_the_lab_writes_the_level_it_is_told(rr_lab: tuple[LabState, Kubectl]) -> None:
    levels = {e["level"] for e in events(audit_log(rr_lab[0]))}
    assert levels == {"RequestResponse"}
    assert "  - level: Request\n" in audit_policy("Request")


def test_the_session_labs_log_explains_with_nothing_unattributed(
    lab: LabState, tmp_path: Path
) -> None:
    """The session lab's log (Metadata) from its start: every component's traffic, each
    exchange attributed from its user and user agent."""
    lines = [line + "\n" for line in log_lines(audit_log(lab))[:METADATA_LINES]]
    log = tmp_path / "audit.log"
    log.write_text("".join(lines))
    ids = {json.loads(line)["auditID"] for line in lines}
    out, said = imported(tmp_path, log)
    assert "0 unreadable lines skipped" in said
    requests = [r for r in records(out) if r["record"] == "request"]
    assert len(requests) == len(ids)
    assert all(r["identity"]["credential"] == "audit log" for r in requests)
    writes = [r for r in requests if r["method"] in ("POST", "PUT", "PATCH")]
    assert writes and all("request body" in r["audit"]["absent"] for r in writes)
    ends = [r for r in records(out) if r["record"] == "end"]
    assert ends and not [e for e in ends if "body" in e]  # Metadata: no response body
    assert all({"response body", "watch events"} & set(e["audit"]["absent"]) for e in ends)
    result = cli("explain", "--format", "json", str(out))
    assert result.returncode == 0, result.stderr
    explained = [json.loads(line) for line in result.stdout.split("\n") if line]
    assert len(explained) == len(ids)
    unknown = [e for e in explained if e["component"] == "unknown"]
    assert unknown == []
    components = {e["component"] for e in explained}
    assert {"apiserver", "scheduler", "kubelet"} <= components
    assert any(c.startswith("controller-manager/") for c in components)
    assert all(e["who"]["identity"].endswith("[audit log]") for e in explained)
    summaries = [e["summary"] for e in explained]
    assert not [s for s in summaries if "(0 events)" in s]  # the log holds none: not 0
    assert any("(no recorded events)" in s for s in summaries)
    story = cli("explain", str(out))
    assert story.returncode == 0, story.stderr


def test_a_watch_is_one_exchange(rr_lab: tuple[LabState, Kubectl], tmp_path: Path) -> None:
    log = audit_log(rr_lab[0])
    stages = [
        e for e in events(log) if e["verb"] == "watch" and "timeoutSeconds=1" in e["requestURI"]
    ]
    assert [e["stage"] for e in stages] == ["ResponseStarted", "ResponseComplete"]
    audit_id = stages[0]["auditID"]
    out, _ = imported(tmp_path, log)
    mine = [r for r in records(out) if r.get("id") == audit_id]
    assert [r["record"] for r in mine] == ["request", "response", "end"]
    request, response, end = mine
    assert request["method"] == "GET" and request["path"] == stages[0]["requestURI"]
    assert response["status"] == 200
    assert response["time"] < end["time"]  # started, then complete: one exchange
    assert end["audit"]["stages"] == ["ResponseStarted", "ResponseComplete"]
    assert "watch events" in end["audit"]["absent"]
    assert request["audit"]["user"]["username"] == "kubernetes-admin"
    assert request["audit"]["decision"] == "allow"
    assert request["headers"][0][0] == "User-Agent"


def test_a_secret_is_redacted_as_the_proxy_redacts(
    rr_lab: tuple[LabState, Kubectl], tmp_path: Path
) -> None:
    log = audit_log(rr_lab[0])
    encoded = base64.b64encode(SECRET_VALUE.encode()).decode()
    assert encoded in log.read_text()  # the log holds it: the import must not
    out, _ = imported(tmp_path, log)
    text = out.read_text()
    assert encoded not in text and SECRET_VALUE not in text
    create = next(
        r
        for r in records(out)
        if r["record"] == "request"
        and r["method"] == "POST"
        and r["audit"]["objectRef"]["resource"] == "secrets"
        and json.loads(r["body"]["text"])["metadata"]["name"] == "imported"
    )
    assert create["body"]["redacted"] is True
    sent = json.loads(create["body"]["text"])
    value = base64.b64decode(sent["data"]["password"]).decode()
    assert value.startswith("redacted:")
    ends = [r for r in records(out) if r["record"] == "end" and r["id"] == create["id"]]
    assert ends[0]["body"]["redacted"] is True
    stored = json.loads(ends[0]["body"]["text"])
    assert base64.b64decode(stored["data"]["password"]).decode() == value


def test_bad_lines_are_said_with_their_numbers_and_skipped(
    rr_lab: tuple[LabState, Kubectl], tmp_path: Path
) -> None:
    good = [line for line in log_lines(audit_log(rr_lab[0])) if '"secrets"' not in line][:50]
    event = json.loads(good[0])
    bad = [
        "not json at all",
        "[1, 2]",
        json.dumps({"kind": "Pod", "apiVersion": "v1"}),
        json.dumps({**event, "stage": "Halfway", "auditID": "x1"}),
        json.dumps({**event, "requestReceivedTimestamp": "yesterday", "auditID": "x2"}),
        good[1][: len(good[1]) // 2],  # a line cut short
    ]
    lines = [good[0], *bad, *good[1:]]
    log = tmp_path / "audit.log"
    log.write_text("\n".join(lines) + "\n")
    result = cli("import", "audit", str(log), "-o", str(tmp_path / "rec.jsonl"))
    assert result.returncode == 0, result.stderr
    said = result.stderr.splitlines()
    assert said[0] == f"{log}: audit.k8s.io Events (JSON lines), {len(good)} events"
    skipped = [line.split(": ")[0] for line in said[1:-1]]  # a line a reason, its first place
    assert skipped == [
        "  2 skipped, first at line 2",  # and 7, cut short: no JSON either
        "  1 skipped, first at line 3",
        "  1 skipped, first at line 4",
        "  1 skipped, first at line 5",
        "  1 skipped, first at line 6",
    ]
    assert "stage 'Halfway' is none of" in said[4]
    assert "is not an RFC 3339 time" in said[5]
    assert said[-1].endswith("6 unreadable lines skipped")
    clean = tmp_path / "clean.log"
    clean.write_text("\n".join(good) + "\n")
    plain, _ = imported(tmp_path, clean, name="plain.jsonl")
    assert _exchanges(tmp_path / "rec.jsonl") == _exchanges(plain)
    notes = [r["message"] for r in records(tmp_path / "rec.jsonl") if r["record"] == "note"]
    assert notes[-1] == "import skipped 6 unreadable parts of its source"


def test_an_existing_output_is_kept_without_overwrite(
    rr_lab: tuple[LabState, Kubectl], tmp_path: Path
) -> None:
    log = audit_log(rr_lab[0])
    out = tmp_path / "mine.jsonl"
    out.write_text("the user's own file\n")
    result = cli("import", "audit", str(log), "-o", str(out))
    assert result.returncode == 2
    assert result.stderr.strip() == f"k8s-wiretap: import audit: -o {out} exists (--overwrite)"
    assert out.read_text() == "the user's own file\n"
    again = cli("import", "audit", str(log), "-o", str(out), "--overwrite")
    assert again.returncode == 0, again.stderr
    assert records(out)[0]["imported"] == "audit log"
    missing = cli("import", "audit", str(tmp_path / "nope.log"), "-o", str(tmp_path / "x"))
    assert missing.returncode == 2
    assert missing.stderr.strip().endswith("nope.log does not exist")
    assert not (tmp_path / "x").exists()


def _exchanges(path: Path) -> list[dict[str, Any]]:
    """The exchange records, without what differs between two imports of one log: the
    placeholders of redacted values (users' extra), keyed per recording."""
    kept = [r for r in records(path) if r["record"] in ("request", "response", "event", "end")]
    return [_unkeyed(r) for r in kept]


def _unkeyed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unkeyed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unkeyed(v) for v in value]
    if isinstance(value, str) and value.startswith("redacted:"):
        return "redacted:"
    return value


def _sample(log: Path) -> list[str]:
    """Real lines of the log without Secrets (their placeholders differ between imports,
    the key being made for each recording): the watch's two stages and those around it."""
    lines = [line for line in log_lines(log) if '"secrets"' not in line]
    watch = [i for i, line in enumerate(lines) if "timeoutSeconds=1" in line]
    return lines[:20] + [lines[i] for i in watch]


def test_every_shape_reads_as_the_plain_lines(
    rr_lab: tuple[LabState, Kubectl], tmp_path: Path
) -> None:
    lines = _sample(audit_log(rr_lab[0]))
    plain = tmp_path / "plain.log"
    plain.write_text("\n".join(lines) + "\n")
    expected = _exchanges(imported(tmp_path, plain, name="plain.jsonl")[0])
    assert len([r for r in expected if r["record"] == "request"]) >= 10
    loaded = [json.loads(line) for line in lines]
    batches = []
    for start in range(0, len(loaded), 7):  # the webhook's items carry no kind
        items = [{k: v for k, v in e.items() if k not in ("kind", "apiVersion")} for e in loaded]
        batches.append(
            {
                "kind": "EventList",
                "apiVersion": "audit.k8s.io/v1",
                "items": items[start : start + 7],
            }
        )
    shapes = {
        "eventlist": [json.dumps(b) for b in batches],
        "log-string": [json.dumps({"log": line, "stream": "stdout"}) for line in lines],
        "message-object": [json.dumps({"message": e, "severity": "INFO"}) for e in loaded],
        "properties-log": [json.dumps({"properties": {"log": line}}) for line in lines],
    }
    for name, shaped in shapes.items():
        log = tmp_path / f"{name}.log"
        log.write_text("\n".join(shaped) + "\n")
        out, said = imported(tmp_path, log, name=f"{name}.jsonl")
        assert "0 unreadable lines skipped" in said, name
        assert _exchanges(out) == expected, name
    zipped = tmp_path / "audit.log.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert _exchanges(imported(tmp_path, zipped, name="gz.jsonl")[0]) == expected


def test_what_a_level_lacks_is_marked_absent(
    rr_lab: tuple[LabState, Kubectl], tmp_path: Path
) -> None:
    """The RequestResponse log's events as Request and Metadata would have logged them
    (the same events without the objects those levels leave out)."""
    loaded = events(audit_log(rr_lab[0]))
    left_out = {"Request": ("responseObject",), "Metadata": ("requestObject", "responseObject")}
    for level, keys in left_out.items():
        log = tmp_path / f"{level}.log"
        lowered = [
            {**{k: v for k, v in e.items() if k not in keys}, "level": level} for e in loaded
        ]
        log.write_text("".join(json.dumps(e) + "\n" for e in lowered))
        out, _ = imported(tmp_path, log, name=f"{level}.jsonl")
        written = records(out)
        ends = [r for r in written if r["record"] == "end"]
        assert ends and not [e for e in ends if "body" in e]
        assert all({"response body", "watch events"} & set(e["audit"]["absent"]) for e in ends)
        writes = [r for r in written if r["record"] == "request" and r["method"] == "POST"]
        assert writes
        if level == "Request":
            assert all("body" in r and "request body" not in r["audit"]["absent"] for r in writes)
        else:
            assert all("body" not in r and "request body" in r["audit"]["absent"] for r in writes)
        explained = _explained(out)  # every level explains, with nothing unattributed
        assert len(explained) == len({e["auditID"] for e in lowered})
        assert not [e for e in explained if e["component"] == "unknown"]


def test_the_user_impersonation_and_decision_are_kept(
    rr_lab: tuple[LabState, Kubectl], tmp_path: Path
) -> None:
    out, _ = imported(tmp_path, audit_log(rr_lab[0]))
    written = records(out)
    request = next(
        r
        for r in written
        if r["record"] == "request"
        and "impersonatedUser" in r["audit"]
        and r["audit"].get("objectRef", {}).get("resource") == "configmaps"
    )
    audit = request["audit"]
    assert audit["impersonatedUser"] == {
        "username": "jane",
        "groups": ["team", "system:authenticated"],
    }
    assert audit["user"]["username"] == "kubernetes-admin"
    assert "system:masters" in audit["user"]["groups"]
    assert request["identity"] == {"credential": "audit log", "user": "kubernetes-admin"}
    assert audit["decision"] == "forbid"
    assert audit["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert audit["sourceIPs"] == ["127.0.0.1"] and request["client"] == {"address": "127.0.0.1"}
    assert audit["userAgent"].startswith("kubectl/")
    response = next(r for r in written if r["record"] == "response" and r["id"] == request["id"])
    assert response["status"] == 403
    end = next(r for r in written if r["record"] == "end" and r["id"] == request["id"])
    assert end["audit"]["responseStatus"]["reason"] == "Forbidden"


def _explained(path: Path) -> list[dict[str, Any]]:
    result = cli("explain", "--format", "json", str(path))
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.split("\n") if line]


def test_causes_are_inferred_from_the_writes_resource_versions(
    rr_lab: tuple[LabState, Kubectl], tmp_path: Path
) -> None:
    """An audit log holds no watch events; at RequestResponse its writes' answers name their
    objects, so each controller write is linked to the write its watch must have delivered:
    kubectl's Deployment → the deployment controller's ReplicaSet → the replicaset
    controller's pods → the scheduler's bindings, each cause marked as inferred. (The
    scheduler also watches ReplicaSets: a binding may be linked to the ReplicaSet's status
    write just before it, as it is when a recorded event of it came last.)"""
    state, kubectl = rr_lab
    kubectl("apply", "-f", str(Path("k8s_wiretap/workshop/web.yaml").resolve()))
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    log = audit_log(state)
    wait_until(lambda: "/binding" in _completed(log), 30, "the bindings logged")
    out, _ = imported(tmp_path, log)
    explained = _explained(out)
    assert not [e for e in explained if e["component"] == "unknown"]
    by_id = {e["id"]: e for e in explained}

    def cause(entry: dict[str, Any]) -> dict[str, Any]:
        found = entry["caused_by"]
        assert found is not None, entry["summary"]
        assert found["event"]["inferred_from"] == "resourceVersion"
        assert found["event"]["watch"] is None  # no watch recorded it
        assert "no watch event" in found["evidence"]
        return by_id[found["exchange"]]

    def written(component: str, verb: str, resource: str) -> list[dict[str, Any]]:
        return [
            e
            for e in explained
            if e["component"] == component
            and e["verb"] == verb
            and e["resource"] == resource
            and e["status"] in (200, 201)
            and e["namespace"] == "default"
        ]

    (replicaset,) = written("controller-manager/deployment-controller", "create", "replicasets")
    applied = cause(replicaset)
    assert applied["component"] == "kubectl"
    assert applied["verb"] == "create" and applied["resource"] == "deployments"
    assert applied["response_body"]["metadata"]["name"] == "web"
    pods = written("controller-manager/replicaset-controller", "create", "pods")
    assert len(pods) == 2
    assert {cause(p)["id"] for p in pods} == {replicaset["id"]}
    bindings = [
        e
        for e in written("scheduler", "create", "pods")
        if e["subresource"] == "binding" and e["name"].startswith("web-")
    ]
    assert len(bindings) == 2
    for binding in bindings:  # its pod's ADDED, or the ReplicaSet's status the scheduler
        assert cause(binding)["component"] == "controller-manager/replicaset-controller"
        assert binding["chain"][:2] == [applied["id"], replicaset["id"]]
    assert "(inferred: the audit log holds no watch events)" in replicaset["why"]
    # at start-up: the namespaces the API server made long before, handed to the service
    # account controller by the informer it had just begun
    defaults = written("controller-manager/service-account-controller", "create", "serviceaccounts")
    (default,) = defaults
    made = cause(default)
    assert made["component"] == "apiserver" and made["resource"] == "namespaces"
    assert default["caused_by"]["event"]["type"] == "LISTED"
    assert "handed to it by the LIST or watch it began" in default["why"]
    # the history of an object works on the import: every version is a write's answer
    history = cli("history", str(out), "deploy/web", "--format", "json")
    assert history.returncode == 0, history.stderr
    versions = json.loads(history.stdout)["versions"]
    assert versions[0]["created"] and versions[0]["writer"]["component"] == "kubectl"
    assert all(v["writer"] for v in versions)
    statuses = [v for v in versions if v["writer"]["subresource"] == "status"]
    assert statuses and {v["writer"]["component"] for v in statuses} == {
        "controller-manager/deployment-controller"
    }


def test_the_lab_at_request_level_explains_with_nothing_unattributed(tmp_path: Path) -> None:
    """A lab of its own whose log is at Request, from `lab up` to `lab down`: its whole
    log imports, every write carries the body it sent and no answer's body, and every
    exchange is attributed."""
    lab = Lab(tmp_path / "lab")
    state = lab.up(UpOptions(build=False, audit_level="Request"))
    try:
        kubectl = Kubectl(state.kubeconfig, tmp_path / "cache")
        kubectl("create", "configmap", "leveled", "--from-literal=k=v")
        kubectl("label", "configmap", "leveled", "tier=front")
        log = audit_log(state)
        wait_until(lambda: "tier" in whole_lines(log).decode(), 30, "the label's PATCH logged")
    finally:
        lab.down()
    assert {e["level"] for e in events(log)} == {"Request"}
    out, said = imported(tmp_path, log)
    assert "0 unreadable lines skipped" in said
    written = records(out)
    posts = [r for r in written if r["record"] == "request" and r["method"] in ("POST", "PATCH")]
    assert posts and all("body" in r and "request body" not in r["audit"]["absent"] for r in posts)
    ends = [r for r in written if r["record"] == "end"]
    assert ends and not [e for e in ends if "body" in e]
    explained = _explained(out)
    assert len(explained) == len({e["auditID"] for e in events(log)})
    assert not [e for e in explained if e["component"] == "unknown"]
    assert {"kubectl", "apiserver", "scheduler"} <= {e["component"] for e in explained}
