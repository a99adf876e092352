"""An object's history on the recorded history session (k8s_wiretap/workshop/history.py):
one Deployment changed by kubectl apply, kubectl scale, kubectl label as another manager,
kubectl set image and a server-side apply that takes replicas over, and the controllers'
status writes after each. Each field's story names the right writer and cause."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.errors import UsageError
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.objects import (
    FieldStep,
    ObjectHistory,
    field_story,
    find,
    history_of,
    history_streamed,
)
from k8s_wiretap.kube.refs import ObjectRef
from tests.conftest import cli
from tests.recorded import RECORDINGS

SESSION = RECORDINGS / "history-session.jsonl.gz"
WIDE = RECORDINGS / "wide-session.jsonl.gz"
WEB = ObjectRef("apps", "deployments", "default", "web")


@cache
def explainer(path: Path = SESSION) -> Explainer:
    return Explainer(Analysis.of(load(path)))


@cache
def web() -> ObjectHistory:
    return history_of(explainer(), WEB)


def story(field: str) -> list[FieldStep]:
    return field_story(web(), field)


def test_every_version_in_resource_version_order_with_its_writer() -> None:
    """Each also seen in etcd's own record of it (the lab's wiretap watches etcd)."""
    versions = web().versions
    assert all(any(s.component == "etcd" for s in v.sightings) for v in versions)
    assert len({v.uid for v in versions}) == 1
    numbers = [v.resource_version for v in versions]
    assert numbers == sorted(n for n in numbers if n is not None)
    assert versions[0].first and versions[0].created
    assert all(v.writer is not None for v in versions)  # every client went through the proxy
    writers = {(v.writer.who, v.writer.field_manager) for v in versions if v.writer}
    assert writers == {
        ("kubectl apply", "kubectl-client-side-apply"),
        ("kubectl scale", "kubectl"),
        ("kubectl label", "team-b"),
        ("kubectl set image", "kubectl-set"),
        ("kubectl apply", "platform"),
        ("controller-manager/deployment-controller", "kube-controller-manager"),
    }
    assert not [v for v in versions if v.disagrees]  # our writer is a manager of its version


def test_replicas_set_by_apply_scaled_then_taken_over_by_a_server_side_apply() -> None:
    created, scaled, taken = story("spec.replicas")
    assert created.values == {"spec.replicas": 2} and created.version.created
    assert created.version.writer and created.version.writer.verb == "create"
    assert [c.words for c in scaled.changes] == ["replicas 2 → 3"]
    writer = scaled.version.writer
    assert writer and (writer.who, writer.subresource, writer.patch) == (
        "kubectl scale",
        "scale",
        "merge",
    )
    assert [str(lost) for lost in scaled.version.lost] == [
        "kubectl-client-side-apply no longer manages spec.replicas"
    ]
    assert [c.words for c in taken.changes] == ["replicas 3 → 4"]
    writer = taken.version.writer
    assert writer and (writer.verb, writer.patch, writer.field_manager) == (
        "patch",
        "apply",
        "platform",
    )
    assert [m.manager for m in taken.version.managers] == ["platform"]
    assert [str(lost) for lost in taken.version.lost] == ["kubectl no longer manages spec.replicas"]


def test_a_label_by_another_manager() -> None:
    (labelled,) = story("metadata.labels.tier")
    assert [c.words for c in labelled.changes] == ["label tier=front"]
    writer = labelled.version.writer
    assert writer and (writer.who, writer.field_manager) == ("kubectl label", "team-b")
    assert [m.manager for m in labelled.version.managers] == ["team-b"]


def test_the_image_by_set_image() -> None:
    created, changed = story("spec.template.spec.containers[name=nginx].image")
    assert created.values == {"spec.template.spec.containers[nginx].image": "nginx:1.25"}
    assert [c.words for c in changed.changes] == ["container nginx's image nginx:1.25 → nginx:1.27"]
    writer = changed.version.writer
    assert writer and (writer.who, writer.field_manager) == ("kubectl set image", "kubectl-set")


def test_the_status_is_the_controllers_and_its_cause_goes_up_to_kubectl() -> None:
    """Each status write is the deployment controller's; its causal chain ends at the
    kubectl command whose change it follows."""
    steps = story("status.replicas")
    assert len(steps) >= 4
    for step in steps[1:]:
        writer = step.version.writer
        assert writer and writer.component == "controller-manager/deployment-controller"
        assert writer.subresource == "status" and writer.because
        root = explainer().chains.exchange(writer.chain[0])
        assert root.component == "kubectl"
    values = [c.new for s in steps[1:] for c in s.changes if c.path == "status.replicas"]
    assert values[-1] == 4


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("deploy/web", None),
        ("deploy/web", "default"),
        ("deployments/default/web", None),
        ("deployment web", None),
        ("Deployment/web", None),
        ("deployments.apps/web", None),
    ],
)
def test_an_object_is_named_as_kubectl_names_it(name: str, namespace: str | None) -> None:
    assert find(explainer(), name, namespace) == WEB


def test_cluster_scoped_and_custom_resources_by_kind_plural_or_short_name() -> None:
    node = ObjectRef("", "nodes", "", "node-1")
    assert find(explainer(), "no/node-1") == node == find(explainer(), "node node-1")
    greeting = ObjectRef("workshop.example.com", "greetings", "shop", "hello")
    assert find(explainer(WIDE), "greeting/hello", "shop") == greeting
    assert find(explainer(WIDE), "greetings/shop/hello") == greeting
    history = history_of(explainer(WIDE), greeting)
    (patched,) = field_story(history, "spec.message")[1:]
    assert [c.words for c in patched.changes] == ["spec.message hello → bonjour"]


def test_an_object_not_held_is_one_line_with_the_closest_names() -> None:
    with pytest.raises(UsageError) as raised:
        find(explainer(), "deploy/webb")
    assert str(raised.value) == (
        "the recording holds no deploy/webb; closest: deployments.apps/web -n default"
    )
    with pytest.raises(UsageError, match="no resource type 'gadgets'"):
        find(explainer(), "gadgets/web")
    with pytest.raises(UsageError, match="name an object as TYPE/NAME"):
        find(explainer(), "web")


def test_a_field_never_held_is_said_with_the_top_level_fields() -> None:
    with pytest.raises(UsageError) as raised:
        story("spec.replica")
    assert str(raised.value) == (
        "no version of Deployment default/web has a field spec.replica; "
        "its top-level fields: apiVersion, kind, metadata, spec, status"
    )


def test_the_command_tells_the_story_as_text_markdown_and_json() -> None:
    text = cli("history", str(SESSION), "deploy/web", "--field", "spec.replicas")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Deployment default/web: spec.replicas, 3 steps\n")
    assert "kubectl scale: patch (merge) of scale, field manager kubectl" in text.stdout
    assert "managedFields: kubectl no longer manages spec.replicas" in text.stdout
    markdown = cli("history", str(SESSION), "deploy/web", "--format", "markdown")
    assert markdown.returncode == 0 and markdown.stdout.startswith("## Deployment default/web")
    whole = cli("history", str(SESSION), "deployments/default/web", "--format", "json")
    record = json.loads(whole.stdout)
    assert record["object"] == "deployments.apps default/web"
    assert len(record["versions"]) == len(web().versions)
    missing = cli("history", str(SESSION), "deploy/webb")
    assert missing.returncode == 2 and missing.stdout == ""
    said = "the recording holds no deploy/webb; closest: deployments.apps/web -n default"
    assert missing.stderr == f"k8s-wiretap: {said}\n"


def test_a_version_no_recorded_write_made_says_so_with_what_managed_fields_say(
    tmp_path: Path,
) -> None:
    """The same session as if the controller manager had not gone through the proxy: the
    Deployment's status versions are seen only in kubectl's GETs; no writer is invented,
    and managedFields name the controller manager and the second it wrote."""
    records = list(iter_records(SESSION, []))
    hidden = {
        r["id"]
        for r in records
        if r.get("record") == "request"
        and any(
            k.lower() == "user-agent" and "kube-controller-manager" in v for k, v in r["headers"]
        )
    }
    path = tmp_path / "without-controllers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records if r.get("id") not in hidden))
    history = history_of(Explainer(Analysis.of(load(path))), WEB)
    unseen = [v for v in history.versions if v.writer is None]
    assert unseen and all(v.sightings for v in unseen)
    # seen in kubectl's GETs and in etcd's own records (the wiretap's --etcd), no writer's
    assert {s.component for v in unseen for s in v.sightings} == {"kubectl", "etcd"}
    assert all(any(s.source == "record" for s in v.sightings) for v in unseen)
    # between two versions kubectl saw, several writes may have come (a scale and the
    # controller's status): managedFields name every manager that wrote in between
    managers = [m for v in unseen for m in v.managers if m.manager == "kube-controller-manager"]
    assert managers and all(m.subresource == "status" and m.time for m in managers)
    text = cli("history", str(path), "deploy/web", "--field", "status.replicas")
    said = "written by a client the wiretap did not see; seen in etcd's record, kubectl's get"
    assert said in text.stdout


@pytest.mark.parametrize(
    ("path", "name", "namespace"),
    [
        (SESSION, "deploy/web", None),
        (SESSION, "node/node-1", None),
        (WIDE, "deploy/web", "shop"),
        (WIDE, "greeting/hello", "shop"),
        (WIDE, "cm/menu", "shop"),
    ],
)
def test_the_command_lines_stream_tells_the_same_history(
    path: Path, name: str, namespace: str | None
) -> None:
    """`history` reads the recording as a stream, in bounded memory; what it tells is what
    the whole recording in memory (the TUI's) tells."""
    streamed = history_streamed(iter_records(path, []), name, namespace)
    whole = history_of(explainer(path), find(explainer(path), name, namespace))
    assert streamed.to_json() == whole.to_json()
    assert len(streamed.versions) > 1


def test_a_dry_run_write_is_no_version_and_no_cause(tmp_path: Path) -> None:
    """The session with `kubectl set image`'s patch sent as a dry run (`?dryRun=All`, as
    `--dry-run=server` sends it): its answer is what the object would be, not a version
    of it, and it told no watcher, so no write is caused by it."""
    records = list(iter_records(SESSION, []))
    (patch,) = [
        r
        for r in records
        if r.get("record") == "request"
        and r["method"] == "PATCH"
        and any(
            k.lower() == "kubectl-command" and v == "kubectl set image" for k, v in r["headers"]
        )
    ]
    patch["path"] += ("&" if "?" in patch["path"] else "?") + "dryRun=All"
    path = tmp_path / "dry-run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    dry = Explainer(Analysis.of(load(path)))
    causes = [dry.chains.caused_by(e) for e in dry.analysis.exchanges]
    assert not [c for c in causes if c is not None and c.exchange == patch["id"]]
    history = history_of(dry, WEB)
    assert not [s for v in history.versions for s in v.sightings if s.exchange == patch["id"]]
    (changed,) = field_story(history, "spec.template.spec.containers[nginx].image")[1:]
    assert changed.version.writer is None  # the real write is not in this recording
    exchange = dry.chains.exchange(patch["id"])
    summary = dry.summaries.explain(exchange).summary
    assert summary.endswith("(a dry run: nothing is stored, no watcher is told)")
