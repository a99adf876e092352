"""The rules of the controller manager's controllers, the scheduler and the kubelet
(kube/data/explanations.yaml, their template values from explain/details.py) on the
committed recordings: each exchange is found by what it is (component, verb, resource,
name or its prefix, and for some what its body says), never by its id, and its summary is
asserted whole, as `explain` prints it.

recordings/wide-session.jsonl.gz is the wide session of the default release's lab;
recordings/apply-story-1.20.jsonl.gz the apply story against 1.20, for what 1.20 does its
own way (the clusterrole aggregation controller's UPDATE, the tokens controller).
Preemption, which neither recording holds, is recorded here from a lab whose every client
talks through the wiretap: a pod of high priority that fits only if a pod of low priority
leaves the node."""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.explain.summaries import Summaries
from k8s_wiretap.lab.lab import Lab, UpOptions
from k8s_wiretap.workshop.standby import standby
from tests.conftest import Kubectl, wait_until

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
GENERIC = {"write", "read", "other"}


@dataclass(frozen=True)
class Row:
    """One explained exchange: what finds it, and what `explain` says of it."""

    component: str
    verb: str
    resource: str  # resource/subresource
    namespace: str
    name: str
    status: int | None
    body: Any
    rule: str
    summary: str
    who: str  # how the summaries name its client ({who})


def _row(explainer: Explainer, exchange: Exchange) -> Row:
    info = exchange.info
    body = explainer.analysis.request_body(exchange)
    explanation = explainer.summaries.explain(exchange)
    answer = explainer.analysis.response_body(exchange).value
    meta = answer.get("metadata") if isinstance(answer, dict) else None
    named = meta.get("name") if isinstance(meta, dict) and answer.get("kind") != "Status" else ""
    return Row(
        explainer.analysis.who(exchange).component,
        info.verb,
        info.resource + (f"/{info.subresource}" if info.subresource else ""),
        info.namespace,
        info.name or str(named or ""),  # a create's: the name the API server gave it
        exchange.status,
        body.value if body.ok else None,
        explanation.rule,
        explanation.summary,
        Summaries.VALUES["who"](explainer.summaries, exchange, {}),
    )


def _rows(name: str | Path) -> list[Row]:
    out: list[Row] = []
    explained(iter_records(RECORDINGS / name, []), _row, out.append)
    return out


@pytest.fixture(scope="module")
def wide() -> list[Row]:
    return _rows("wide-session.jsonl.gz")


@pytest.fixture(scope="module")
def old() -> list[Row]:
    return _rows("apply-story-1.20.jsonl.gz")


def find(rows: list[Row], component: str, verb: str, resource: str, **want: str) -> list[Row]:
    """The successful exchanges of `component` that `verb` `resource`; `name`, `prefix`
    (of the name) and `namespace` narrow them. At least one must be there."""
    found = [
        r
        for r in rows
        if (r.component, r.verb, r.resource) == (component, verb, resource)
        and r.status is not None
        and r.status < 300
        and r.name == want.get("name", r.name)
        and r.name.startswith(want.get("prefix", ""))
        and r.namespace == want.get("namespace", r.namespace)
    ]
    assert found, (component, verb, resource, want)
    return found


def summaries(rows: list[Row]) -> set[str]:
    return {r.summary for r in rows}


CM = "controller-manager"


def test_no_controller_scheduler_or_kubelet_request_is_left_to_a_generic_rule(
    wide: list[Row], old: list[Row]
) -> None:
    """Every request of the controllers, the scheduler and the kubelet in both recordings
    has a rule of its own."""
    left = {
        (r.component, r.verb, r.resource)
        for r in wide + old
        if r.rule in GENERIC and r.component.split("/")[0] in (CM, "scheduler", "kubelet")
    }
    assert left == set()


def test_the_namespace_controller_lists_and_deletes_each_resource(wide: list[Row]) -> None:
    """A namespace's deletion: the namespace read live, each resource deleted as a
    collection and listed to see what is left — one rule each, whatever the resource."""
    ns = f"{CM}/namespace-controller"
    assert summaries(find(wide, ns, "get", "namespaces", name="shop")) == {
        "the namespace controller reads Namespace shop (is it being deleted, and what is left?)"
    }
    assert "the namespace controller deletes all configmaps in shop" in summaries(
        find(wide, ns, "deletecollection", "configmaps", namespace="shop")
    )
    assert "the namespace controller looks for greetings left in shop" in summaries(
        find(wide, ns, "list", "greetings", namespace="shop")
    )
    collections = [r for r in wide if r.component == ns and r.verb == "deletecollection"]
    assert len({r.resource for r in collections}) > 20
    assert {r.rule for r in collections if r.status == 200} == {
        "namespace-controller-deletecollection"
    }
    assert summaries(find(wide, ns, "update", "namespaces/status", name="shop")) == {
        "the namespace controller writes Namespace shop's status (what its deletion is waiting for)"
    }


def test_a_new_namespace_gets_its_default_service_account_and_the_root_ca(
    wide: list[Row], old: list[Row]
) -> None:
    for rows in (wide, old):
        assert summaries(
            find(
                rows,
                f"{CM}/service-account-controller",
                "create",
                "serviceaccounts",
                namespace="kube-public",
            )
        ) == {
            "the service account controller creates ServiceAccount kube-public/default"
            " (a namespace's default)"
        }
        assert summaries(
            find(
                rows,
                f"{CM}/root-ca-cert-publisher",
                "create",
                "configmaps",
                namespace="kube-public",
            )
        ) == {
            "the root CA publisher creates ConfigMap kube-public/kube-root-ca.crt"
            " (the cluster's CA)"
        }


def test_the_aggregated_cluster_roles_say_what_they_got(wide: list[Row], old: list[Row]) -> None:
    """The default release server-side applies the rules (PATCH), 1.20 UPDATEs the role: the
    same rule, with the number of rules and resources the role got from its body."""
    applied = find(
        wide, f"{CM}/clusterrole-aggregation-controller", "patch", "clusterroles", name="view"
    )
    assert applied[-1].summary == (
        "the clusterrole aggregation controller fills ClusterRole view with 12 rules over 47"
        " resources"
    )
    updated = find(
        old, f"{CM}/clusterrole-aggregation-controller", "update", "clusterroles", name="view"
    )
    assert updated[-1].summary == (
        "the clusterrole aggregation controller fills ClusterRole view with 9 rules over 43"
        " resources"
    )


def test_the_node_controller_says_which_taints_it_sets(wide: list[Row]) -> None:
    """Cordon sets spec.unschedulable; the node lifecycle controller answers with the
    unschedulable taint, and removes it (and the new node's not-ready taint) again."""
    node = f"{CM}/node-controller"
    said = summaries(find(wide, node, "patch", "nodes", name="node-1"))
    assert said == {
        "the node controller sets Node node-1's taints:"
        " node.kubernetes.io/unschedulable:NoSchedule",
        "the node controller sets Node node-1's taints: none (all removed)",
    }
    assert summaries(find(wide, node, "get", "nodes", name="node-1")) == {
        "the node controller reads Node node-1 before changing its taints (from the watch cache)"
    }


def test_the_ttl_controller_annotates_the_node(wide: list[Row], old: list[Row]) -> None:
    for rows in (wide, old):
        assert summaries(find(rows, f"{CM}/ttl-controller", "patch", "nodes", name="node-1")) == {
            "the TTL controller annotates Node node-1: node.alpha.kubernetes.io/ttl=0"
        }


def test_the_statefulset_controller_creates_pods_in_order_and_records_revisions(
    wide: list[Row],
) -> None:
    sts = f"{CM}/statefulset-controller"
    pods = find(wide, sts, "create", "pods", namespace="shop", prefix="db-")
    assert [r.summary for r in pods][:2] == [
        "the statefulset controller creates Pod shop/db-0 (ordered, stable name)",
        "the statefulset controller creates Pod shop/db-1 (ordered, stable name)",
    ]
    (revision,) = find(wide, sts, "create", "controllerrevisions", prefix="db-")
    assert revision.summary == (
        f"the statefulset controller records ControllerRevision shop/{revision.name},"
        " a revision of the StatefulSet's template"
    )
    assert summaries(find(wide, sts, "update", "statefulsets/status", name="db")) == {
        "the statefulset controller writes StatefulSet shop/db's status"
    }


def test_the_daemonset_controller_pins_its_pod_to_the_node(wide: list[Row]) -> None:
    ds = f"{CM}/daemon-set-controller"
    (pod,) = find(wide, ds, "create", "pods", prefix="agent-")
    assert pod.summary == f"the daemonset controller creates Pod shop/{pod.name} for node node-1"
    (revision,) = find(wide, ds, "create", "controllerrevisions", prefix="agent-")
    assert revision.summary == (
        f"the daemonset controller creates ControllerRevision shop/{revision.name},"
        " a revision of the DaemonSet's template"
    )
    assert summaries(find(wide, ds, "update", "daemonsets/status", name="agent")) == {
        "the daemonset controller writes DaemonSet shop/agent's status"
    }


def test_the_job_controller_creates_its_pod_and_removes_the_tracking_finalizer(
    wide: list[Row],
) -> None:
    job = f"{CM}/job-controller"
    (pod,) = find(wide, job, "create", "pods", prefix="once-")
    assert pod.summary == f"the job controller creates Pod shop/{pod.name}"
    assert summaries(find(wide, job, "patch", "pods", name=pod.name)) == {
        f"the job controller patches Pod shop/{pod.name}:"
        " removes finalizer batch.kubernetes.io/job-tracking"
    }
    assert summaries(find(wide, job, "update", "jobs/status", name="once")) == {
        "the job controller writes Job shop/once's status"
    }


def test_the_disruption_and_autoscaler_controllers(wide: list[Row]) -> None:
    """The PodDisruptionBudget's first status, before any pod of it is ready, allows
    nothing; the HPA reads its target's scale and writes its status."""
    pdb = find(
        wide, f"{CM}/disruption-controller", "update", "poddisruptionbudgets/status", name="web"
    )
    assert pdb[0].summary == (
        "the disruption controller writes PodDisruptionBudget shop/web's status:"
        " 0 disruptions allowed (0 healthy, 1 wanted)"
    )
    hpa = f"{CM}/horizontal-pod-autoscaler"
    assert summaries(find(wide, hpa, "get", "deployments/scale", name="web")) == {
        "the HPA controller reads Deployment shop/web's scale (replicas and selector)"
    }
    assert summaries(find(wide, hpa, "update", "horizontalpodautoscalers/status", name="web")) == {
        "the HPA controller writes HorizontalPodAutoscaler shop/web's status"
        " (replicas, metrics, conditions)"
    }


def test_the_volume_and_garbage_controllers(wide: list[Row], old: list[Row]) -> None:
    pvc = f"{CM}/pvc-protection-controller"
    assert summaries(find(wide, pvc, "list", "pods", namespace="shop")) == {
        "the PVC protection controller lists the pods of shop,"
        " to see whether one still uses the claim"
    }
    assert summaries(find(wide, pvc, "update", "persistentvolumeclaims", name="data")) == {
        "the PVC protection controller updates PersistentVolumeClaim shop/data: no finalizer left"
    }
    gc = f"{CM}/generic-garbage-collector"  # the foreground deletion of Deployment old
    assert summaries(find(wide, gc, "get", "deployments", name="old")) == {
        "the garbage collector reads Deployment shop/old live before deciding on it"
    }
    assert summaries(find(wide, gc, "patch", "deployments", name="old")) == {
        "the garbage collector patches Deployment shop/old: removes its finalizers"
    }
    recheck = find(old, f"{CM}/replicaset-controller", "get", "replicasets", prefix="web-")
    assert recheck[0].summary == (
        f"{recheck[0].who} reads ReplicaSet default/{recheck[0].name} live before"
        " adopting what its selector matches"
    )


def test_what_1_37_adds(wide: list[Row]) -> None:
    """The service CIDR controller (1.33), the ClusterTrustBundle publisher (1.32) and the
    legacy token cleaner (1.28)."""
    cidr = f"{CM}/service-cidrs-controller"
    assert summaries(find(wide, cidr, "patch", "servicecidrs", name="kubernetes")) == {
        "the service CIDR controller patches ServiceCIDR kubernetes:"
        " adds finalizer networking.k8s.io/service-cidr-finalizer"
    }
    assert summaries(find(wide, cidr, "patch", "servicecidrs/status", name="kubernetes")) == {
        "the service CIDR controller sets ServiceCIDR kubernetes's Ready condition"
    }
    (bundle,) = find(
        wide,
        f"{CM}/kube-apiserver-serving-clustertrustbundle-publisher",
        "create",
        "clustertrustbundles",
        prefix="kubernetes.io:kube-apiserver-serving:",
    )
    assert bundle.summary == (
        f"the ClusterTrustBundle publisher creates ClusterTrustBundle {bundle.name}"
        " (the API server's serving CA)"
    )
    assert summaries(
        find(
            wide,
            f"{CM}/legacy-service-account-token-cleaner",
            "get",
            "configmaps",
            name="kube-apiserver-legacy-service-account-token-tracking",
        )
    ) == {"the legacy token cleaner reads since when the API server tracks legacy tokens"}


def test_delegated_authentication_reads_its_client_ca(wide: list[Row], old: list[Row]) -> None:
    for rows in (wide, old):
        for component in (CM, "scheduler"):
            found = find(
                rows, component, "get", "configmaps", name="extension-apiserver-authentication"
            )
            assert summaries(found) == {
                f"{found[0].who} reads the client CA of delegated authentication"
                " (ConfigMap kube-system/extension-apiserver-authentication)"
            }


def test_the_scheduler_says_why_a_pod_is_unschedulable(wide: list[Row]) -> None:
    """The PodScheduled=False patch of a pod that cannot go anywhere (the only node is
    cordoned): its reason and the first half of its message, from the patch."""
    patches = find(wide, "scheduler", "patch", "pods/status", namespace="shop")
    unschedulable = [
        r
        for r in patches
        if any(c.get("reason") == "Unschedulable" for c in r.body["status"]["conditions"])
    ]
    assert unschedulable
    for row in unschedulable:
        assert row.summary == (
            f"the scheduler sets Pod shop/{row.name}'s status: PodScheduled=False"
            " (Unschedulable): 0/1 nodes are available: 1 node(s) were unschedulable."
        )


def test_the_kubelet_csinode_and_pod_status(wide: list[Row], old: list[Row]) -> None:
    for rows in (wide, old):
        assert summaries(find(rows, "kubelet", "create", "csinodes", name="node-1")) == {
            "the kubelet creates CSINode node-1 (its node's CSI drivers)"
        }
    running = find(wide, "kubelet", "patch", "pods/status", prefix="db-0")
    assert "the kubelet reports Pod db-0's status" in summaries(running)


def test_the_1_20_tokens_controller_makes_each_service_account_a_token_secret(
    old: list[Row], wide: list[Row]
) -> None:
    """1.20 gives every ServiceAccount a token Secret; the default release creates none."""
    tokens = f"{CM}/tokens-controller"
    (secret,) = find(old, tokens, "create", "secrets", prefix="node-controller-token-")
    assert secret.summary == f"the tokens controller creates Secret kube-system/{secret.name}"
    assert summaries(find(old, tokens, "update", "serviceaccounts", name="node-controller")) == {
        "the tokens controller updates ServiceAccount kube-system/node-controller"
    }
    assert not [r for r in wide if r.component == tokens and r.verb == "create"]


PRIORITY_POD = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {name}}}
value: {value}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  priorityClassName: {name}
  terminationGracePeriodSeconds: 0
  containers:
  - {{name: main, image: registry.k8s.io/pause:3.10, resources: {{requests: {{cpu: 700m}}}}}}
"""

# One of each thing some controller acts on that the recordings lack: a ReplicationController,
# a ResourceQuota, a PersistentVolume and the claim it binds to, a generic ephemeral volume
# and a StatefulSet's volumeClaimTemplate (of a class no volume has: they stay pending), a
# Service without selector and its hand-made Endpoints, a ValidatingAdmissionPolicy, and a
# Deployment that keeps no old ReplicaSet.
WORKS = """
apiVersion: v1
kind: Namespace
metadata: {name: works}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: works}
spec:
  replicas: 1
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: main, image: registry.k8s.io/pause:3.10}]}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: quota, namespace: works}
spec: {hard: {pods: "10"}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: disk}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /tmp/disk}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim, namespace: works}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: scratch, namespace: works}
spec:
  containers: [{name: main, image: registry.k8s.io/pause:3.10}]
  volumes:
  - name: tmp
    ephemeral:
      volumeClaimTemplate:
        spec:
          accessModes: [ReadWriteOnce]
          storageClassName: slow
          resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: store, namespace: works}
spec:
  serviceName: store
  replicas: 1
  selector: {matchLabels: {app: store}}
  template:
    metadata: {labels: {app: store}}
    spec: {containers: [{name: main, image: registry.k8s.io/pause:3.10}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: slow
      resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: outside, namespace: works}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: outside, namespace: works}
subsets: [{addresses: [{ip: 192.0.2.10}], ports: [{port: 80}]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas-limit}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations: [{expression: "object.spec.replicas <= 5"}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: hist, namespace: works}
spec:
  revisionHistoryLimit: 0
  replicas: 1
  selector: {matchLabels: {app: hist}}
  template:
    metadata: {labels: {app: hist}}
    spec: {containers: [{name: main, image: registry.k8s.io/pause:3.10}]}
"""


def _signing_request() -> str:
    """A CertificateSigningRequest of a fresh key, for a client certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "visitor")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    pem = base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()
    return (
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\n"
        "metadata: {name: visitor}\n"
        f"spec: {{request: {pem}, signerName: kubernetes.io/kube-apiserver-client,"
        " usages: [client auth]}\n"
    )


def _get(kubectl: Kubectl, *what: str) -> str:
    return kubectl.run("get", *what, check=False).stdout


CRONJOB = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick, namespace: default}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: registry.k8s.io/pause:3.10}]
"""

LATER = """
apiVersion: batch/v1
kind: Job
metadata: {name: brief, namespace: works}
spec:
  activeDeadlineSeconds: 2
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: registry.k8s.io/pause:3.10}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: works}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: main, image: registry.k8s.io/pause:3.10}]}
"""


def _and_then(kubectl: Kubectl) -> None:
    """A Job past its deadline (its pod deleted, the Job failed, then deleted at once by
    its TTL); a DaemonSet whose template changes (its pod replaced); the StatefulSet
    scaled to zero; Deployment hist deleted with its ReplicaSet orphaned."""
    kubectl.run("apply", "-f", "-", stdin=LATER)
    pods = "pods", "-n", "works", "-l", "app=agent", "-o", "jsonpath={.items[*].status.phase}"
    wait_until(lambda: _get(kubectl, *pods) == "Running", 60, "the DaemonSet's pod")
    kubectl.run("set", "image", "daemonset/agent", "-n", "works", "main=pause:3.9")
    kubectl.run("rollout", "status", "daemonset/agent", "-n", "works", "--timeout=60s")
    kubectl.run("scale", "statefulset/store", "-n", "works", "--replicas=0")
    kubectl.run("delete", "deployment", "hist", "-n", "works", "--cascade=orphan")
    jobs = "jobs", "-n", "works", "-o", "name"
    wait_until(lambda: _get(kubectl, *jobs) == "", 60, "the Job gone")


@pytest.fixture(scope="module")
def at_work(tmp_path_factory: pytest.TempPathFactory) -> list[Row]:
    """A lab (one node of 1 CPU) whose every client talks through the wiretap, recorded:
    a CronJob due every minute (waited for at the end); Pod low (priority 1, 700m) runs,
    then Pod high (priority 1000, 700m) comes and fits only once low is gone; then WORKS,
    a CertificateSigningRequest approved, the Deployment's image set (its old ReplicaSet
    goes), what `_and_then` does, and at last the kubelet stopped (its node unreachable)
    beside a node that stays Ready (`workshop.standby`: else the node controller's full
    disruption mode makes its NoExecute taint a race)."""
    folder = tmp_path_factory.mktemp("at-work")
    lab = Lab(folder / "lab")
    state = lab.up(UpOptions(build=False, record=folder / "session.jsonl"))
    try:
        kubectl = Kubectl(state.kubeconfig, folder / "cache")
        wait_until(lambda: "node-1" in _get(kubectl, "nodes"), 60, "the node")
        kubectl.run("apply", "-f", "-", stdin=CRONJOB)  # due at the next minute
        kubectl.run("apply", "-f", "-", stdin=PRIORITY_POD.format(name="low", value=1))
        phase = "-o", "jsonpath={.status.phase}"
        wait_until(lambda: _get(kubectl, "pod", "low", *phase) == "Running", 60, "pod low")
        kubectl.run("apply", "-f", "-", stdin=PRIORITY_POD.format(name="high", value=1000))
        wait_until(lambda: _get(kubectl, "pod", "high", *phase) == "Running", 90, "pod high")
        kubectl.run("apply", "-f", "-", stdin=WORKS)
        kubectl.run("apply", "-f", "-", stdin=_signing_request())
        kubectl.run("certificate", "approve", "visitor")
        signed = "csr", "visitor", "-o", "jsonpath={.status.certificate}"
        wait_until(lambda: _get(kubectl, *signed) != "", 60, "the certificate")
        ready = "deployment", "hist", "-n", "works", "-o", "jsonpath={.status.readyReplicas}"
        wait_until(lambda: _get(kubectl, *ready) == "1", 60, "Deployment hist")
        kubectl.run("set", "image", "deployment/hist", "-n", "works", "main=pause:3.9")
        kubectl.run("rollout", "status", "deployment/hist", "-n", "works", "--timeout=60s")
        wait_until(lambda: _get(kubectl, "pv", "disk", *phase) == "Bound", 60, "the volume")
        _and_then(kubectl)
        with standby(kubectl.env):  # so that node-1 alone goes silent
            kubelet = next(p for p in state.processes if p.name == "kubelet")
            assert kubelet.stop()  # the node stops reporting: NotReady after its grace period
            jobs = "jobs", "-n", "default", "-o", "name"
            wait_until(lambda: "job.batch/tick-" in _get(kubectl, *jobs), 70, "the CronJob's Job")
            taints = "node", "node-1", "-o", "jsonpath={.spec.taints[*].effect}"
            wait_until(lambda: "NoExecute" in _get(kubectl, *taints), 180, "node-1 unreachable")
            time.sleep(3)  # the last status writes reach the recording
    finally:
        lab.down()
    return _rows(folder / "session.jsonl")


@pytest.mark.lab
def test_the_scheduler_preempts_a_pod_of_lower_priority(at_work: list[Row]) -> None:
    """The pending pod is nominated to the node, the victim gets its DisruptionTarget
    condition and is deleted, then the pending pod is bound."""
    nominated = find(at_work, "scheduler", "patch", "pods/status", name="high")
    assert (
        "the scheduler sets Pod default/high's status: nominates node node-1 (preemption);"
        " PodScheduled=False (Unschedulable): 0/1 nodes are available: 1 Insufficient cpu."
    ) in summaries(nominated)
    assert (
        "the scheduler sets Pod default/low's status: DisruptionTarget=True"
        " (PreemptionByScheduler): default-scheduler: preempting to accommodate a higher"
        " priority pod"
    ) in summaries(find(at_work, "scheduler", "patch", "pods/status", name="low"))
    assert summaries(find(at_work, "scheduler", "delete", "pods", name="low")) == {
        "the scheduler preempts Pod default/low (deletes it for a higher-priority pod)"
    }
    assert summaries(find(at_work, "scheduler", "create", "pods/binding", name="high")) == {
        "the scheduler binds Pod high to node node-1"
    }


@pytest.mark.lab
def test_controllers_the_recordings_do_not_show_at_work(at_work: list[Row]) -> None:
    """The replication, resource quota, persistent volume, PVC protection, ephemeral
    volume, endpoint slice mirroring, CSR signing and ValidatingAdmissionPolicy status
    controllers, a StatefulSet's claim and a Deployment's old ReplicaSet going."""
    rc = f"{CM}/replication-controller"
    (pod,) = find(at_work, rc, "create", "pods", prefix="legacy-")
    assert pod.summary == f"the replication controller creates Pod {pod.name}"
    assert summaries(find(at_work, rc, "update", "replicationcontrollers/status")) == {
        "the replication controller writes ReplicationController works/legacy's status"
    }
    quota = find(at_work, f"{CM}/resourcequota-controller", "update", "resourcequotas/status")
    assert summaries(quota) == {
        "the resourcequota controller writes ResourceQuota works/quota's status"
        " (what the namespace uses)"
    }
    binder = f"{CM}/persistent-volume-binder"
    assert summaries(find(at_work, binder, "update", "persistentvolumes", name="disk")) == {
        "the persistent volume binder updates PersistentVolume disk"
    }
    assert summaries(find(at_work, binder, "update", "persistentvolumes/status")) == {
        "the persistent volume binder writes PersistentVolume disk's status (its phase)"
    }
    assert summaries(find(at_work, binder, "update", "persistentvolumeclaims", name="claim")) == {
        "the persistent volume binder updates PersistentVolumeClaim works/claim"
        " (binding it to a volume)"
    }
    protection = f"{CM}/pvc-protection-controller"  # a bound claim no pod uses
    assert summaries(find(at_work, protection, "list", "pods", namespace="works")) == {
        "the PVC protection controller lists the pods of works,"
        " to see whether one still uses the claim"
    }
    unused = find(at_work, protection, "update", "persistentvolumeclaims/status", name="claim")
    assert summaries(unused) == {
        "the PVC protection controller writes PersistentVolumeClaim works/claim's status:"
        " Unused=True (NoPodsUsingPVC): No pods are currently referencing this PVC"
    }
    ephemeral = f"{CM}/ephemeral-volume-controller"
    assert summaries(find(at_work, ephemeral, "create", "persistentvolumeclaims")) == {
        "the ephemeral volume controller creates PersistentVolumeClaim works/scratch-tmp for a pod"
    }
    sts = f"{CM}/statefulset-controller"
    assert summaries(find(at_work, sts, "create", "persistentvolumeclaims")) == {
        "the statefulset controller creates PersistentVolumeClaim works/data-store-0 for its pod"
    }
    (mirrored,) = find(
        at_work, f"{CM}/endpointslicemirroring-controller", "create", "endpointslices"
    )
    assert mirrored.name.startswith("outside-")
    assert mirrored.summary == f"{mirrored.who} creates EndpointSlice works/{mirrored.name}"
    signer = f"{CM}/certificate-controller"
    signed = find(at_work, signer, "update", "certificatesigningrequests/status")
    assert summaries(signed) == {
        "the CSR signing controller writes CertificateSigningRequest visitor's status:"
        " the signed certificate"
    }
    vap = f"{CM}/validatingadmissionpolicy-status-controller"
    assert summaries(find(at_work, vap, "patch", "validatingadmissionpolicies/status")) == {
        "the ValidatingAdmissionPolicy status controller writes ValidatingAdmissionPolicy"
        " replicas-limit's status (its type checks)"
    }
    (old,) = find(at_work, f"{CM}/deployment-controller", "delete", "replicasets")
    assert old.summary == f"the deployment controller deletes old ReplicaSet works/{old.name}"


@pytest.mark.lab
def test_jobs_daemonsets_statefulsets_and_orphans_at_work(at_work: list[Row]) -> None:
    """A Job past its deadline, deleted by its TTL; a DaemonSet's pod replaced by a new
    template; a StatefulSet scaled to zero; a ReplicaSet orphaned by its Deployment's
    delete."""
    job = f"{CM}/job-controller"
    (pod,) = find(at_work, job, "delete", "pods", prefix="brief-")
    assert pod.summary == f"the job controller deletes Pod works/{pod.name}"
    ttl = f"{CM}/ttl-after-finished-controller"
    assert summaries(find(at_work, ttl, "get", "jobs", name="brief")) == {
        "the ttl-after-finished controller reads Job works/brief live before deleting it"
    }
    assert summaries(find(at_work, ttl, "delete", "jobs", name="brief")) == {
        "the ttl-after-finished controller deletes finished Job works/brief"
    }
    ds = f"{CM}/daemon-set-controller"
    (replaced,) = find(at_work, ds, "delete", "pods", prefix="agent-")
    assert replaced.summary == f"the daemonset controller deletes Pod works/{replaced.name}"
    sts = f"{CM}/statefulset-controller"
    assert summaries(find(at_work, sts, "delete", "pods", name="store-0")) == {
        "the statefulset controller deletes Pod works/store-0"
    }
    gc = f"{CM}/generic-garbage-collector"
    (orphaned,) = find(at_work, gc, "patch", "replicasets", prefix="hist-")
    assert orphaned.summary == (
        f"the garbage collector patches ReplicaSet works/{orphaned.name}:"
        " removes its ownerReference to a deleted owner (orphans it)"
    )


@pytest.mark.lab
def test_a_cronjob_creates_its_job_on_schedule(at_work: list[Row]) -> None:
    """The CronJob is due every minute: a slow lab may live past a second minute, and the
    controller creates a Job at each."""
    cron = f"{CM}/cronjob-controller"
    jobs = find(at_work, cron, "create", "jobs", prefix="tick-")
    assert summaries(jobs) == {
        f"the cronjob controller creates Job default/{job.name} on schedule" for job in jobs
    }
    assert summaries(find(at_work, cron, "update", "cronjobs/status", name="tick")) == {
        "the cronjob controller updates CronJob default/tick's status"
        " (its active jobs and last schedule)"
    }


@pytest.mark.lab
def test_the_node_controller_marks_a_silent_node_unreachable(at_work: list[Row]) -> None:
    """The kubelet stopped: after the grace period the node's conditions are Unknown, its
    pods not ready, and it is tainted unreachable, NoSchedule and NoExecute."""
    node = f"{CM}/node-controller"
    assert summaries(find(at_work, node, "update", "nodes/status", name="node-1")) == {
        "the node controller marks Node node-1's conditions Unknown (its kubelet stopped reporting)"
    }
    head = "the node controller sets Node node-1's taints: "
    taints = [  # the NoSchedule and NoExecute passes may patch once or twice, in either order
        set(s.removeprefix(head).split(", "))
        for s in summaries(find(at_work, node, "patch", "nodes", name="node-1"))
        if s.startswith(head)
    ]
    assert {"node.kubernetes.io/unreachable:NoExecute"} in [
        t - {"node.kubernetes.io/unreachable:NoSchedule"} for t in taints
    ]
    for pod in find(at_work, node, "update", "pods/status", prefix="legacy-"):
        assert pod.summary == (
            f"the node controller marks Pod works/{pod.name} not ready (its node stopped reporting)"
        )


def test_the_endpoint_controllers_and_events(wide: list[Row]) -> None:
    """Endpoints and EndpointSlices follow the Service's ready pods; a controller's Event
    names what it is about."""
    endpoints = find(wide, f"{CM}/endpoint-controller", "update", "endpoints", name="web")
    assert summaries(endpoints) == {f"{endpoints[0].who} updates Endpoints shop/web"}
    (created,) = find(
        wide, f"{CM}/endpointslice-controller", "create", "endpointslices", prefix="web-"
    )
    assert created.summary == f"{created.who} creates EndpointSlice shop/{created.name}"
    events = find(wide, f"{CM}/daemon-set-controller", "create", "events", namespace="shop")
    assert f"{events[0].who} records an Event about DaemonSet shop/agent" in summaries(events)
