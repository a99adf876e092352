"""Every kubectl command of the committed wide session (recordings/wide-session.jsonl.gz),
explained as what it is, and a write as what it changed in words (`explain/changes.py`):
the summaries `explain --format json` gives, exchanges found by the Kubectl-Command header,
verb, resource and status (never by id: the session is recorded again as it grows)."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.x509.oid import NameOID

from bench.explain_coverage import RECORDING, Said, explain
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.changes import change, changed, deletion
from k8s_wiretap.explain.summaries import Summaries
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import start_wiretap

Found = tuple[str, Said]


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return Analysis.of(load(RECORDING))


@pytest.fixture(scope="module")
def said(analysis: Analysis) -> list[Found]:
    """(kubectl's command, what explain says) for every exchange kubectl sent."""
    commands = {e.id: e.request_header("kubectl-command") for e in analysis.exchanges}
    return [(commands[s.id], s) for s in explain(RECORDING) if s.component == "kubectl"]


def _all(said: list[Found], command: str, verb: str, resource: str, status: int) -> list[Said]:
    return [
        s for c, s in said if (c, s.verb, s.resource, s.status) == (command, verb, resource, status)
    ]


def _one(said: list[Found], command: str, verb: str, resource: str, status: int = 200) -> Said:
    found = _all(said, command, verb, resource, status)
    assert len(found) == 1, (command, verb, resource, status, found)
    return found[0]


def _exchange(analysis: Analysis, said: Said) -> Exchange:
    return next(e for e in analysis.exchanges if e.id == said.id)


def _summary(said: list[Found], command: str, verb: str, resource: str, status: int = 200) -> str:
    return _one(said, command, verb, resource, status).summary


WEB = "Deployment shop/web"


def test_set_image_says_the_old_and_the_new_image(said: list[Found]) -> None:
    patch = _one(said, "kubectl set image", "patch", "deployments")
    assert patch.rule == "kubectl-set-image"
    assert patch.summary == (
        f"kubectl set image: {WEB}: container web's image nginx:1.25 → nginx:1.27"
    )


def test_rollout_restart_says_the_restartedAt_annotation(
    said: list[Found], analysis: Analysis
) -> None:
    patch = _one(said, "kubectl rollout restart", "patch", "deployments")
    body: Any = json.loads(_exchange(analysis, patch).request_body.data)  # type: ignore[union-attr]
    stamp = body["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
    assert patch.summary == (
        f"kubectl rollout restart: {WEB}: the pod template's annotation"
        f" kubectl.kubernetes.io/restartedAt={stamp}, so a new ReplicaSet"
    )


def test_rollout_undo_says_the_revision_it_goes_back_to(said: list[Found]) -> None:
    """set image made revision 2, restart revision 3; undo goes back to 2's template: the
    ReplicaSet found by its deployment.kubernetes.io/revision among those kubectl listed."""
    assert _summary(said, "kubectl rollout undo", "patch", "deployments") == (
        f"kubectl rollout undo: {WEB}: back to revision 2's template"
        " (the pod template's annotation kubectl.kubernetes.io/restartedAt removed)"
    )
    assert _summary(said, "kubectl rollout undo", "list", "replicasets") == (
        "kubectl rollout undo lists the ReplicaSets in shop (app=web)"
        " to find the revision to go back to"
    )
    reads = _all(said, "kubectl rollout undo", "get", "deployments", 200)
    assert [s.summary for s in reads] == [f"kubectl rollout undo reads {WEB} first"] * 2


def test_rollout_status_watches_until_done(said: list[Found]) -> None:
    watches = _all(said, "kubectl rollout status", "watch", "deployments", 200)
    assert len(watches) == 3
    for watch in watches:
        assert watch.rule == "kubectl-rollout-status-watch"
        assert watch.summary.startswith(
            f"kubectl rollout status watches {WEB} until its rollout is done ("
        )


def test_scale_says_replicas_from_and_to(said: list[Found]) -> None:
    assert _summary(said, "kubectl scale", "patch", "deployments/scale") == (
        f"kubectl scale sets {WEB}'s replicas 2 → 3, through its scale subresource"
    )


def test_label_annotate_and_patches_say_the_field_set(said: list[Found]) -> None:
    assert _summary(said, "kubectl label", "patch", "deployments") == (
        f"kubectl label: {WEB}: label tier=front"
    )
    assert _summary(said, "kubectl annotate", "patch", "deployments") == (
        f"kubectl annotate: {WEB}: annotation owner=team-a"
    )
    assert _summary(said, "kubectl patch", "patch", "deployments") == (
        f"kubectl patch: {WEB}: adds label patched=json (a JSON patch)"
    )
    assert _summary(said, "kubectl patch", "patch", "services") == (
        "kubectl patch: Service shop/web: annotation owner=team-a (a JSON merge patch)"
    )
    assert _summary(said, "kubectl label", "get", "deployments") == (
        f"kubectl label reads {WEB} first"
    )


def test_a_merge_patch_of_a_custom_resource(said: list[Found]) -> None:
    assert _summary(said, "kubectl patch", "patch", "greetings") == (
        "kubectl patch: Greeting shop/hello: spec.message hello → bonjour (a JSON merge patch)"
    )


def test_apply_of_a_custom_resource_looks_for_its_kind(
    said: list[Found], analysis: Analysis
) -> None:
    """kubectl apply of the Greeting checks that its kind takes fieldValidation: in its group's
    OpenAPI when the API server's OpenAPI index lists the group, else (the index catches up
    with a new CRD some milliseconds after it is Established, so a recording made again may
    show either) by listing the CustomResourceDefinitions. Each is said as what it is."""
    create = _one(said, "kubectl apply", "create", "greetings", 201)
    sessions = {e.id: e.request_header("kubectl-session") for e in analysis.exchanges}
    ran = [s for _c, s in said if sessions[s.id] == sessions[create.id]]
    schema = [s for s in ran if s.resource == "/openapi/v3/apis/workshop.example.com/v1"]
    crds = [s for s in ran if (s.verb, s.resource) == ("list", "customresourcedefinitions")]
    assert len(schema) + len(crds) == 1, ran
    if schema:
        assert schema[0].summary == (
            "kubectl apply: downloads OpenAPI v3 /openapi/v3/apis/workshop.example.com/v1"
            " (the patch metadata of its kinds)"
        )
    else:
        assert crds[0].summary == (
            "kubectl apply lists the CustomResourceDefinitions, to tell whether the kind it"
            " sends is a custom resource"
        )


def test_wait_reads_then_watches_until_the_condition(said: list[Found]) -> None:
    assert _summary(said, "kubectl wait", "get", "deployments") == (
        f"kubectl wait reads {WEB} first"
    )
    watch = _one(said, "kubectl wait", "watch", "deployments")
    assert watch.rule == "kubectl-wait-watch"
    assert watch.summary.startswith(f"kubectl wait watches {WEB} until your condition holds (")


def test_debug_says_the_ephemeral_container_it_adds(said: list[Found], analysis: Analysis) -> None:
    patch = _one(said, "kubectl debug", "patch", "pods/ephemeralcontainers")
    body: Any = json.loads(_exchange(analysis, patch).request_body.data)  # type: ignore[union-attr]
    name = body["spec"]["ephemeralContainers"][0]["name"]  # debugger-<random>
    assert patch.summary == (
        f"kubectl debug: Pod shop/db-0: ephemeral container {name} added (image busybox:1.36)"
    )
    assert (
        _summary(said, "kubectl debug", "get", "pods") == "kubectl debug reads Pod shop/db-0 first"
    )


def test_logs_picks_a_pod_and_fails_as_the_api_server_says(said: list[Found]) -> None:
    assert _summary(said, "kubectl logs", "list", "pods") == (
        "kubectl logs lists the pods in shop (app=web) to pick one to read the log of"
    )
    failed = _one(said, "kubectl logs", "get", "pods/log", 500)
    assert failed.rule == "server-error"
    assert failed.summary.startswith("kubectl logs: get Pod shop/web-")
    assert "'s log: server error (500), " in failed.summary


def test_a_foreground_delete_says_its_propagation_policy(said: list[Found]) -> None:
    assert _summary(said, "kubectl delete", "delete", "deployments") == (
        "kubectl delete deletes Deployment shop/old"
        " (propagationPolicy Foreground: it stays until what it owns is deleted)"
    )
    assert _summary(said, "kubectl delete", "get", "deployments") == (
        "kubectl delete reads Deployment shop/old: still there, so it waits for it to go"
    )
    assert _summary(said, "kubectl delete", "watch", "deployments").startswith(
        "kubectl delete waits for Deployment shop/old to be gone: a watch until its DELETED event ("
    )


def test_refused_commands_say_so(said: list[Found]) -> None:
    """A 422 create, a 403 list and a 404 get of kubectl's are failures in the summary."""
    invalid = _one(said, "kubectl create deployment", "create", "deployments", 422)
    assert invalid.rule == "invalid" and "invalid (422)" in invalid.summary
    forbidden = _one(said, "kubectl get", "list", "secrets", 403)
    assert forbidden.rule == "forbidden-user" and "forbidden (403)" in forbidden.summary
    missing = _one(said, "kubectl get", "get", "configmaps", 404)
    assert missing.summary == "kubectl get: get ConfigMap shop/gone: not found (404)"


def test_replace_says_which_fields_differ(said: list[Found]) -> None:
    """The file replaced soup: tomato with leek, and held no last-applied annotation, so
    the update removed the one the earlier apply had set."""
    assert _summary(said, "kubectl replace", "update", "configmaps") == (
        "kubectl replace: ConfigMap shop/menu: data.soup tomato → leek;"
        " annotation kubectl.kubernetes.io/last-applied-configuration removed"
    )
    assert _summary(said, "kubectl replace", "get", "configmaps") == (
        "kubectl replace reads ConfigMap shop/menu for its resourceVersion"
    )
    stale = _one(said, "kubectl replace", "update", "configmaps", 409)
    assert stale.rule == "conflict"


def test_auth_can_i_says_the_question_and_the_answer(said: list[Found]) -> None:
    assert _summary(said, "kubectl auth can-i", "create", "selfsubjectaccessreviews", 201) == (
        "kubectl auth can-i asks whether you may create deployments.apps"
        " in namespace shop: yes (allowed)"
    )


def test_creates_and_token(said: list[Found]) -> None:
    assert _summary(said, "kubectl create namespace", "create", "namespaces", 201) == (
        "kubectl create namespace creates Namespace shop"
    )
    assert _summary(said, "kubectl create serviceaccount", "create", "serviceaccounts", 201) == (
        "kubectl create serviceaccount creates ServiceAccount shop/robot"
    )
    assert _summary(said, "kubectl create token", "create", "serviceaccounts/token", 201) == (
        "kubectl create token: TokenRequest for service account shop/robot"
    )


def test_cordon_and_uncordon_say_spec_unschedulable(said: list[Found]) -> None:
    assert _summary(said, "kubectl cordon", "patch", "nodes") == (
        "kubectl cordon marks Node node-1 unschedulable: spec.unschedulable false → true"
    )
    assert _summary(said, "kubectl uncordon", "patch", "nodes") == (
        "kubectl uncordon makes Node node-1 schedulable again: spec.unschedulable true → false"
    )


def test_drain_lists_evicts_and_waits(said: list[Found]) -> None:
    """drain lists the node's pods, leaves the DaemonSet's, evicts the others (the budget
    refuses the last web pod: 429) and reads each until it is gone (a 404 is the end of
    the wait, not a failure)."""
    lists = _all(said, "kubectl drain", "list", "pods", 200)
    assert {s.summary for s in lists} == {
        "kubectl drain lists the pods on the node (spec.nodeName=node-1)"
    }
    daemonsets = _all(said, "kubectl drain", "get", "daemonsets", 200)
    assert {s.summary for s in daemonsets} == {
        "kubectl drain reads DaemonSet shop/agent, which runs a pod on the node:"
        " that pod is not evicted"
    }
    evicted = _all(said, "kubectl drain", "create", "pods/eviction", 201)
    refused = _all(said, "kubectl drain", "create", "pods/eviction", 429)
    assert evicted and refused
    assert all(s.summary.startswith("kubectl drain: eviction of Pod shop/") for s in evicted)
    assert all(" refused (429) by PodDisruptionBudget web (" in s.summary for s in refused)
    gone = _all(said, "kubectl drain", "get", "pods", 404)
    assert gone and all(s.rule == "kubectl-drain-pod-gone" for s in gone)
    assert all(s.summary.endswith(" is gone (404), its eviction is done") for s in gone)
    polls = _all(said, "kubectl drain", "get", "pods", 200)
    assert polls and all(s.summary.endswith(": is its eviction done?") for s in polls)


def test_delete_namespace_and_its_wait(said: list[Found]) -> None:
    assert _summary(said, "kubectl delete", "delete", "namespaces") == (
        "kubectl delete deletes Namespace shop:"
        " Terminating until the namespace controller has emptied it"
    )
    assert _summary(said, "kubectl delete", "get", "namespaces") == (
        "kubectl delete reads Namespace shop: still there, so it waits for it to go"
    )
    assert _summary(said, "kubectl delete", "watch", "namespaces").startswith(
        "kubectl delete waits for Namespace shop to be gone: a watch until its DELETED event ("
    )


def test_no_kubectl_write_is_left_generic(said: list[Found]) -> None:
    """Every write kubectl sent in the session has a rule of its command or subresource."""
    writes = [s for _, s in said if s.write]
    assert writes
    assert not [s for s in writes if s.rule in ("write", "kubectl-write")]


# -- what is said without the object before: only the new values ---------------------------
def _exchange_of(analysis: Analysis, command: str, verb: str, resource: str) -> Exchange:
    return next(
        e
        for e in analysis.exchanges
        if (e.request_header("kubectl-command"), e.info.verb, e.info.resource)
        == (command, verb, resource)
    )


def _body(analysis: Analysis, exchange: Exchange) -> Any:
    return analysis.request_body(exchange).value


def test_without_the_object_before_only_the_new_value_is_said(analysis: Analysis) -> None:
    """The real set image, JSON patch and uncordon PATCHes, as if the recording had not
    seen the object before: no old value is made up."""
    set_image = _exchange_of(analysis, "kubectl set image", "patch", "deployments")
    after = analysis.response_body(set_image).value
    assert change(set_image, _body(analysis, set_image), "strategic", None, after) == (
        "container web's image set to nginx:1.27"
    )
    patched = _exchange_of(analysis, "kubectl patch", "patch", "deployments")
    assert change(patched, _body(analysis, patched), "json", None, None) == (
        "adds label patched=json"
    )
    uncordon = _exchange_of(analysis, "kubectl uncordon", "patch", "nodes")
    assert change(uncordon, _body(analysis, uncordon), "strategic", None, None) == (
        "spec.unschedulable removed"
    )
    replace = _exchange_of(analysis, "kubectl replace", "update", "configmaps")
    assert change(replace, _body(analysis, replace), "", None, None) == (
        "the whole object sent (the object before it is not in the recording)"
    )


def test_the_change_is_that_of_the_history(analysis: Analysis) -> None:
    """`changed` takes the object before from the analysis: the GET kubectl made."""
    set_image = _exchange_of(analysis, "kubectl set image", "patch", "deployments")
    assert changed(analysis, set_image) == "container web's image nginx:1.25 → nginx:1.27"


def test_every_write_of_the_session_is_said(analysis: Analysis) -> None:
    """Any client's write, not only kubectl's: the words never fail, and a status write
    says its conditions by type, whatever their order ('condition Available's status
    False → True'), never by their place in the list."""
    writes = [e for e in analysis.exchanges if e.info.verb in ("patch", "update", "delete")]
    said = [changed(analysis, e) for e in writes]
    assert len(said) > 400 and all(said)
    statuses = [
        w
        for e, w in zip(writes, said, strict=True)
        if e.info.subresource == "status" and e.info.resource == "deployments"
    ]
    assert any("condition Available's status False → True" in w for w in statuses)
    assert not [w for w in said if "conditions[" in w or "'s type " in w]


BACKGROUND = "propagationPolicy Background: it goes now, what it owns after"
FOREGROUND = "propagationPolicy Foreground: it stays until what it owns is deleted"
ORPHAN = "propagationPolicy Orphan: what it owns stays, orphaned"


@pytest.mark.parametrize(
    ("options", "query", "said"),
    [
        ({"propagationPolicy": "Background"}, None, BACKGROUND),
        ({"propagationPolicy": "Foreground"}, None, FOREGROUND),
        ({"propagationPolicy": "Orphan"}, None, ORPHAN),
        ({"orphanDependents": True}, None, ORPHAN),
        (None, "Foreground", FOREGROUND),
        (None, None, "no propagationPolicy: the resource's default"),
    ],
)
def test_a_deletes_propagation_policy(options: Any, query: str | None, said: str) -> None:
    """kubectl delete --cascade=background|foreground|orphan sends a DeleteOptions body
    with that propagationPolicy (staging/src/k8s.io/kubectl/pkg/cmd/delete/delete.go); a
    client may put it in the query instead, or the older orphanDependents."""
    assert deletion(options, query) == said


# -- commands the wide session does not type, recorded through the proxy from the lab -------
NS = f"kc-{uuid.uuid4().hex[:6]}"
EDITOR = "sed -i s/soup:\\ leek/soup:\\ onion/"  # kubectl edit runs it with the file's path
TESTED = {"op": "test", "path": "/data/soup", "value": "onion"}
CHECKED = json.dumps([TESTED, {"op": "remove", "path": "/data/soup"}])
FAILED_TEST = json.dumps([{**TESTED, "value": "leek"}])  # the soup is onion by then: 422


CSR = f"{NS}-client"
SIZED = f"""
apiVersion: v1
kind: Pod
metadata: {{name: sized, namespace: {NS}}}
spec:
  containers:
    - name: main
      image: registry.k8s.io/pause:3.10
      resources: {{requests: {{cpu: 100m}}, limits: {{cpu: 200m}}}}
"""
RESIZE = json.dumps(
    {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "150m"}}}]}}
)


def _signing_request() -> str:
    """A CertificateSigningRequest for a client certificate, of a key made here."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "wiretap-test")])
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, SHA256())
    pem = request.public_bytes(serialization.Encoding.PEM)
    return json.dumps(
        {
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": {"name": CSR},
            "spec": {
                "request": base64.b64encode(pem).decode(),
                "signerName": "kubernetes.io/kube-apiserver-client",
                "usages": ["client auth"],
            },
        }
    )


def _running(kubectl: Kubectl, name: str) -> bool:
    phase = kubectl("get", "pod", name, "-n", NS, "-o", "jsonpath={.status.phase}")
    return phase == "Running"


def _revisions(kubectl: Kubectl) -> int:
    return len(kubectl("get", "rs", "-n", NS, "-l", "app=web", "-o", "name").split())


@pytest.fixture(scope="module")
def lab_said(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Found]]:
    """edit, a label and an annotation removed and overwritten, a JSON patch with a test,
    rollout undo --to-revision, delete --cascade=orphan and a denied auth can-i."""
    folder = tmp_path_factory.mktemp("kubectl-commands")
    wiretap = start_wiretap(lab.kubeconfig, folder)
    kubectl = Kubectl(lab.kubeconfig, folder / "cache", server=wiretap.url)
    try:
        kubectl("create", "namespace", NS)
        kubectl("create", "configmap", "menu", "-n", NS, "--from-literal=soup=leek")
        kubectl.env["KUBE_EDITOR"] = EDITOR
        kubectl("edit", "configmap", "menu", "-n", NS)
        kubectl("label", "configmap", "menu", "-n", NS, "tier=front")
        kubectl("label", "configmap", "menu", "-n", NS, "tier-")
        kubectl("annotate", "configmap", "menu", "-n", NS, "owner=team-a")
        kubectl("annotate", "configmap", "menu", "-n", NS, "--overwrite", "owner=team-b")
        refused = kubectl.run(
            "patch", "configmap", "menu", "-n", NS, "--type", "json", "-p", FAILED_TEST,
            check=False,
        )  # fmt: skip
        assert refused.returncode != 0
        kubectl("patch", "configmap", "menu", "-n", NS, "--type", "json", "-p", CHECKED)
        kubectl("create", "deployment", "web", "-n", NS, "--image=nginx:1.25")
        wait_until(lambda: _revisions(kubectl) == 1, 60, "the first ReplicaSet")
        kubectl("set", "image", "deployment/web", "-n", NS, "nginx=nginx:1.27")
        wait_until(lambda: _revisions(kubectl) == 2, 60, "the second ReplicaSet")
        kubectl("rollout", "undo", "deployment/web", "-n", NS, "--to-revision=1")
        kubectl("delete", "deployment", "web", "-n", NS, "--cascade=orphan")
        kubectl("delete", "configmap", "menu", "-n", NS)  # no finalizer: gone at once
        kubectl("apply", "-f", "-", stdin=_signing_request())
        kubectl("certificate", "approve", CSR)
        kubectl("apply", "-f", "-", stdin=SIZED)
        kubectl("patch", "pod", "sized", "-n", NS, "--subresource", "resize", "-p", RESIZE)
        wait_until(lambda: _running(kubectl, "sized"), 60, "pod sized to run")
        streamed = kubectl.run("exec", "sized", "-n", NS, "--", "true", check=False)
        assert "error dialing backend" in streamed.stderr  # the hollow node has no address
        denied = kubectl.run(
            "auth", "can-i", "delete", "nodes", f"--as=system:serviceaccount:{NS}:nobody",
            check=False,
        )  # fmt: skip
        assert denied.stdout.strip() == "no"
        recording = wiretap.wait_for(
            "the auth can-i",
            lambda r: any(
                e.info.resource == "selfsubjectaccessreviews" and e.end is not None
                for e in r.exchanges
            ),
        )
    finally:
        wiretap.server.stop()
    analysis = Analysis.of(recording)
    summaries = Summaries(analysis)
    yield [
        (e.request_header("kubectl-command"), _said(summaries, e))
        for e in analysis.exchanges
        if analysis.who(e).component == "kubectl"
    ]


def _said(summaries: Summaries, exchange: Exchange) -> Said:
    info = exchange.info
    explanation = summaries.explain(exchange)
    resource = info.resource + (f"/{info.subresource}" if info.subresource else "")
    return Said(
        exchange.id, "kubectl", info.verb, resource, exchange.status, explanation.rule,
        False, False, explanation.summary,
    )  # fmt: skip


def test_edit_says_what_you_changed_in_the_editor(lab_said: list[Found]) -> None:
    assert _summary(lab_said, "kubectl edit", "patch", "configmaps") == (
        f"kubectl edit: ConfigMap {NS}/menu: data.soup leek → onion"
    )


def test_a_label_removed_and_an_annotation_overwritten(lab_said: list[Found]) -> None:
    labels = _all(lab_said, "kubectl label", "patch", "configmaps", 200)
    assert [s.summary for s in labels] == [
        f"kubectl label: ConfigMap {NS}/menu: label tier=front",
        f"kubectl label: ConfigMap {NS}/menu: label tier removed",
    ]
    annotations = _all(lab_said, "kubectl annotate", "patch", "configmaps", 200)
    assert [s.summary for s in annotations] == [
        f"kubectl annotate: ConfigMap {NS}/menu: annotation owner=team-a",
        f"kubectl annotate: ConfigMap {NS}/menu: annotation owner team-a → team-b",
    ]


def test_a_json_patch_op_by_op(lab_said: list[Found]) -> None:
    assert _summary(lab_said, "kubectl patch", "patch", "configmaps") == (
        f"kubectl patch: ConfigMap {NS}/menu: tests that data.soup is onion;"
        " removes data.soup (was onion) (a JSON patch)"
    )
    failed = _one(lab_said, "kubectl patch", "patch", "configmaps", 422)
    assert failed.rule == "invalid", failed


def test_undo_to_a_revision_says_which(lab_said: list[Found]) -> None:
    assert _summary(lab_said, "kubectl rollout undo", "patch", "deployments") == (
        f"kubectl rollout undo: Deployment {NS}/web: back to revision 1's template"
        " (container nginx's image nginx:1.27 → nginx:1.25)"
    )


def test_an_orphaning_delete(lab_said: list[Found]) -> None:
    assert _summary(lab_said, "kubectl delete", "delete", "deployments") == (
        f"kubectl delete deletes Deployment {NS}/web"
        " (propagationPolicy Orphan: what it owns stays, orphaned)"
    )


def test_a_denied_auth_can_i(lab_said: list[Found]) -> None:
    assert _summary(lab_said, "kubectl auth can-i", "create", "selfsubjectaccessreviews", 201) == (
        f"kubectl auth can-i asks whether system:serviceaccount:{NS}:nobody may delete nodes"
        " in namespace default: no (denied)"
    )


def test_a_delete_whose_object_is_gone_at_once(lab_said: list[Found]) -> None:
    """delete --wait reads the object after deleting it: a 404 is what it waits for."""
    assert _summary(lab_said, "kubectl delete", "delete", "configmaps") == (
        f"kubectl delete deletes ConfigMap {NS}/menu"
        " (propagationPolicy Background: it goes now, what it owns after)"
    )
    assert _summary(lab_said, "kubectl delete", "get", "configmaps", 404) == (
        f"kubectl delete: ConfigMap {NS}/menu is gone (404), the wait is over"
    )


def test_a_certificate_approval_says_the_condition(lab_said: list[Found]) -> None:
    assert _summary(
        lab_said, "kubectl certificate approve", "update", "certificatesigningrequests/approval"
    ) == (
        f"kubectl certificate approve: CertificateSigningRequest {CSR}:"
        " condition Approved True (KubectlApprove)"
    )


def test_a_resize_says_the_resources(lab_said: list[Found]) -> None:
    assert _summary(lab_said, "kubectl patch", "patch", "pods/resize") == (
        f"kubectl patch: resizes Pod {NS}/sized in place:"
        " container main's resources.requests.cpu 100m → 150m"
    )


def test_exec_is_a_stream_through_the_kubelet_that_fails_here(lab_said: list[Found]) -> None:
    """kubectl exec tries a WebSocket (GET) and then SPDY (POST) to the pod's exec
    subresource; the API server cannot reach the lab's hollow node, and both say so."""
    tries = [s for c, s in lab_said if c == "kubectl exec" and s.resource == "pods/exec"]
    assert [(s.verb, s.status, s.rule) for s in tries] == [
        ("get", 500, "server-error"),
        ("create", 500, "server-error"),
    ]
    assert all("'s exec: server error (500), error dialing backend" in s.summary for s in tries)
