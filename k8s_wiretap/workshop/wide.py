"""The wide session: an ordinary day's kubectl against a lab, wider than the apply story.

In namespace `shop` it creates one object of each kind the controllers act on (`wide.yaml`:
a Deployment and its Service, PodDisruptionBudget and HorizontalPodAutoscaler, a
StatefulSet, a DaemonSet, a Job, a PersistentVolumeClaim, a ConfigMap) and waits for the
Deployment to be Available (`kubectl wait`); creates a custom resource of the workshop's
CRD, a Greeting, for which a third-party operator (the greeter, scripts/greeter_operator.py,
which must be running) writes a ConfigMap, and changes the Greeting with a merge patch, so
that the operator updates it; then changes the Deployment as people do (`set image`,
`rollout restart`, `rollout undo`, `scale`), debugs a StatefulSet pod (`kubectl debug`: an
ephemeral container, which the hollow kubelet's fake runtime reports running), asks for the
Deployment's logs (the API server cannot reach the hollow node, so `kubectl logs` fails),
labels, annotates and JSON-patches the Deployment, and changes a Service with a merge patch;
creates a second Deployment and deletes it in the foreground (`--cascade=foreground`: the
garbage collector deletes its ReplicaSet and pod before it); is refused an invalid
Deployment (422 Unprocessable Entity); changes a ConfigMap with `replace` and with a stale
resourceVersion (409 Conflict), another server-side applied; asks `auth can-i`, makes a
service account token, lists Secrets as that service account (403 Forbidden), gets what is
not there (404); cordons and drains the node (the budget refuses the last web pod's
eviction: 429, and the drain gives up), uncordons it, and deletes the namespace, which the
namespace controller empties.

`kubectl edit` is not in it: a Step runs kubectl with the story's environment only, so it
cannot give `edit` an editor that works without a terminal.

`scripts/record_wide.py` records it, with the whole control plane and the greeter through
the wiretap, into recordings/wide-session.jsonl.gz, the input of `python -m bench
explain_coverage`.
"""

from __future__ import annotations

from k8s_wiretap.workshop import manifest
from k8s_wiretap.workshop.scenarios import GREETING, Step, Story

__all__ = ["NAMESPACE", "WIDE"]

NAMESPACE = "shop"
NODE = "node-1"  # the lab's hollow node

MENU = """apiVersion: v1
kind: ConfigMap
metadata: {name: menu%s}
data: {soup: leek}
"""
# The greeter operator's ConfigMap for Greeting hello (scripts/greeter_operator.py).
GREETER_CONFIGMAP = ("get", "configmap", "greeting-hello", "-n", NAMESPACE)
CHANGED_GREETING = '{"spec": {"message": "bonjour"}}'
# resourceVersion 1 is long gone: the update is refused, 409 Conflict.
STALE_MENU = MENU % ', resourceVersion: "1"'


def _in(*args: str) -> tuple[str, ...]:
    """kubectl arguments in the session's namespace."""
    return (*args, "-n", NAMESPACE)


def _rollout(title: str, *args: str) -> tuple[Step, Step]:
    """A change to the Deployment, then `rollout status` until it is rolled out."""
    status = _in("rollout", "status", "deployment/web", "--timeout=90s")
    return Step(title, _in(*args)), Step("wait for the rollout", status)


WIDE = Story(
    "wide",
    (
        Step("create the namespace", ("create", "namespace", NAMESPACE)),
        Step(
            "apply one of each kind",
            _in("apply", "-f", "-"),
            manifest("wide"),
            until="{.status.readyReplicas}",
            until_get=_in("get", "deployment", "web"),
            expect="2",
        ),
        Step(
            "wait for the Deployment to be available",
            _in("wait", "--for=condition=Available", "deployment/web", "--timeout=90s"),
        ),
        Step(
            "create a custom resource definition",
            ("apply", "-f", "-"),
            manifest("crd"),
            until="{.status.conditions[?(@.type=='Established')].status}",
            until_get=("get", "crd", "greetings.workshop.example.com"),
            expect="True",
        ),
        Step(
            "create a custom resource: the greeter operator writes its ConfigMap",
            _in("apply", "-f", "-"),
            GREETING,
            until="{.data.message}",
            until_get=GREETER_CONFIGMAP,
            expect="hello",
        ),
        Step(
            "change it with a merge patch: the operator updates its ConfigMap",
            _in("patch", "greeting", "hello", "--type", "merge", "-p", CHANGED_GREETING),
            until="{.data.message}",
            until_get=GREETER_CONFIGMAP,
            expect="bonjour",
        ),
        Step(
            "wait for the StatefulSet's two pods, made in order",
            _in("get", "statefulset", "db"),
            until="{.status.readyReplicas}",
            until_get=_in("get", "statefulset", "db"),
            expect="2",
        ),
        *_rollout("set a new image", "set", "image", "deployment/web", "web=nginx:1.27"),
        *_rollout("restart the rollout", "rollout", "restart", "deployment/web"),
        *_rollout("undo the restart", "rollout", "undo", "deployment/web"),
        Step(
            "scale to 3",
            _in("scale", "deployment/web", "--replicas=3"),
            until="{.status.readyReplicas}",
            until_get=_in("get", "deployment", "web"),
            expect="3",
        ),
        Step(
            "debug a StatefulSet pod: an ephemeral container",
            (*_in("debug", "db-0", "--image=busybox:1.36", "--attach=false"), "--", "true"),
        ),
        Step(
            "the Deployment's logs: the API server cannot reach the hollow node",
            _in("logs", "deployment/web"),
            refused="Error from server",
        ),
        Step("label it", _in("label", "deployment", "web", "tier=front")),
        Step("annotate it", _in("annotate", "deployment", "web", "owner=team-a")),
        Step(
            "a JSON patch",
            _in(
                "patch",
                "deployment",
                "web",
                "--type",
                "json",
                "-p",
                '[{"op": "add", "path": "/metadata/labels/patched", "value": "json"}]',
            ),
        ),
        Step(
            "a merge patch",
            _in(
                "patch",
                "service",
                "web",
                "--type",
                "merge",
                "-p",
                '{"metadata": {"annotations": {"owner": "team-a"}}}',
            ),
        ),
        Step(
            "create a second Deployment",
            (*_in("create", "deployment", "old", "--image=busybox:1.36"), "--", "sleep", "1d"),
            until="{.status.readyReplicas}",
            until_get=_in("get", "deployment", "old"),
            expect="1",
        ),
        Step(
            "delete it in the foreground: its ReplicaSet and pod go first",
            _in("delete", "deployment", "old", "--cascade=foreground", "--timeout=60s"),
        ),
        Step(
            "create an invalid Deployment: 422 Unprocessable Entity",
            _in("create", "deployment", "bad", "--image=nginx:1.27", "--replicas=-1"),
            refused="is invalid",
        ),
        Step("replace a ConfigMap", _in("replace", "-f", "-"), MENU % ""),
        Step(
            "replace it from a stale copy: 409 Conflict",
            _in("replace", "-f", "-"),
            STALE_MENU,
            refused="Conflict",
        ),
        Step(
            "server-side apply a ConfigMap",
            _in("apply", "--server-side", "-f", "-"),
            manifest("settings"),
        ),
        Step("may I create deployments?", _in("auth", "can-i", "create", "deployments")),
        Step("create a service account", _in("create", "serviceaccount", "robot")),
        Step("a token for it", _in("create", "token", "robot")),
        Step(
            "list Secrets as it: 403 Forbidden",
            _in("get", "secrets", "--as=system:serviceaccount:shop:robot"),
            refused="Forbidden",
        ),
        Step("get what is not there: 404", _in("get", "configmap", "gone"), refused="NotFound"),
        Step("cordon the node", ("cordon", NODE)),
        Step(
            "drain it: the budget refuses the last web pod's eviction (429)",
            (
                "drain",
                NODE,
                "--ignore-daemonsets",
                "--delete-emptydir-data",
                "--force",
                "--timeout=15s",
            ),
            refused="disruption budget",
        ),
        Step("uncordon it", ("uncordon", NODE)),
        Step(
            "delete the namespace",
            ("delete", "namespace", NAMESPACE, "--wait=true", "--timeout=90s"),
        ),
    ),
)
