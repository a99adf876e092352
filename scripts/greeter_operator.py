"""greeter: a small third-party operator, written with the Python `kubernetes` client.

    .venv/bin/python scripts/greeter_operator.py KUBECONFIG

It watches the workshop's custom resource Greeting (workshop.example.com/v1, the CRD of
k8s_wiretap/workshop/crd.yaml) in namespace `shop` and, for each Greeting ADDED or MODIFIED,
creates or updates the ConfigMap `greeting-<name>`, owned by the Greeting (ownerReferences,
so deleting the Greeting deletes it), whose `message` is the Greeting's `spec.message`.
It runs until killed. It sends a User-Agent of its own (USER_AGENT), by which the wiretap
names it (k8s_wiretap/kube/data/agents.yaml); nothing else in the wiretap knows it, which
makes it the wide session's example of a controller the wiretap has no data about
(scripts/record_wide.py runs it through the proxy during the session).

Until the CRD exists its watch is refused (404 Not Found): it tries again every 2 seconds.
A watch starts without a resourceVersion, so the API server first sends every Greeting
there is as ADDED; each watch ends after WATCH_SECONDS and starts again.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

USER_AGENT = "greeter-operator/1.0 (python kubernetes client)"
NAMESPACE = "shop"
GROUP, VERSION, PLURAL, KIND = "workshop.example.com", "v1", "greetings", "Greeting"
WATCH_SECONDS = 300
RETRY_SECONDS = 2.0
MERGE_PATCH = "application/merge-patch+json"


def connect(kubeconfig: str) -> client.ApiClient:
    """An API client for `kubeconfig`'s current context, sending USER_AGENT."""
    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    api_client = client.ApiClient(configuration)
    api_client.user_agent = USER_AGENT
    return api_client


def desired(greeting: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap `greeting` asks for."""
    meta = greeting["metadata"]
    owner = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"greeting-{meta['name']}", "ownerReferences": [owner]},
        "data": {"message": str(greeting.get("spec", {}).get("message", ""))},
    }


def reconcile(core: client.CoreV1Api, event: str, greeting: dict[str, Any]) -> None:
    """Create the Greeting's ConfigMap (ADDED) or update it (MODIFIED): an ADDED whose
    ConfigMap exists updates it, a MODIFIED whose ConfigMap is gone creates it."""
    body = desired(greeting)
    name = body["metadata"]["name"]
    create = event == "ADDED"
    for _ in range(2):
        try:
            if create:
                # the client sends a dict body as it is; its annotations name only the model
                core.create_namespaced_config_map(NAMESPACE, body)  # type: ignore[arg-type]
            else:
                core.patch_namespaced_config_map(name, NAMESPACE, body, _content_type=MERGE_PATCH)
        except ApiException as error:
            if error.status not in (404, 409):
                raise
            create = error.status == 404
            continue
        print(f"greeter: {'created' if create else 'updated'} configmap {name}", file=sys.stderr)
        return


def watch_once(api_client: client.ApiClient) -> None:
    """One watch of the namespace's Greetings, each ADDED or MODIFIED reconciled."""
    greetings = client.CustomObjectsApi(api_client)
    core = client.CoreV1Api(api_client)
    stream = watch.Watch().stream(
        greetings.list_namespaced_custom_object,
        GROUP,
        VERSION,
        NAMESPACE,
        PLURAL,
        timeout_seconds=WATCH_SECONDS,
    )
    for event in stream:
        if event["type"] in ("ADDED", "MODIFIED"):
            reconcile(core, event["type"], event["object"])


def main(kubeconfig: str) -> None:
    """Watch and reconcile until killed; a refused watch (no CRD yet) is tried again."""
    api_client = connect(kubeconfig)
    while True:
        try:
            watch_once(api_client)
        except ApiException as error:
            print(f"greeter: watch refused ({error.status}), again", file=sys.stderr)
            time.sleep(RETRY_SECONDS)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: greeter_operator.py KUBECONFIG")
    main(sys.argv[1])
