"""Patch replays per second: a typical `kubectl apply` of a Deployment, replayed and checked.

One replay is what the analysis of a recording does for each PATCH it saw: decode the request
body, apply the strategic merge patch to the object as it was before (the built-in 1.20
schema, unknown fields dropped), and compare the result with the object the server returned
(`k8s_wiretap.patch.replay` + `compare`). The objects are shaped like the API server's: a
two-container Deployment with defaults, status, managedFields and the last-applied annotation,
and a patch as kubectl 1.32 computes it (new annotation, replicas, an image, an env var
changed, one added, one deleted, `$setElementOrder` lists). Target: 2,000 replays per second.
"""

from __future__ import annotations

import copy
import json
import os
import statistics
import time
from typing import Any

from k8s_wiretap.patch import PatchSchema, compare, replay

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3000"))
REPEATS = 5
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def container(name: str, image: str, env: list[tuple[str, str]], port: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "args": ["serve", "--port", str(port)],
        "env": env_list(env),
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m"}},
        "readinessProbe": {
            "httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
            "timeoutSeconds": 1,
            "periodSeconds": 10,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }


LABELS = {"app": "web", "tier": "frontend"}


def env_list(env: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in env]


def config(replicas: int, image: str, env: list[tuple[str, str]]) -> dict[str, Any]:
    """The manifest a user applies."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {
                    "containers": [
                        {"name": "web", "image": image, "env": env_list(env),
                         "ports": [{"name": "http", "containerPort": 8080}]},
                        {"name": "metrics", "image": "exporter:1.4",
                         "ports": [{"name": "metrics", "containerPort": 9100}]},
                    ]
                },
            },
        },
    }  # fmt: skip


def live(manifest: dict[str, Any], env: list[tuple[str, str]]) -> dict[str, Any]:
    """The Deployment as the API server returns it after `kubectl apply` of `manifest`."""
    spec = manifest["spec"]
    web = spec["template"]["spec"]["containers"][0]
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "3f0e2b36-0d33-4c36-9f53-2d4b1d2c2a11",
            "resourceVersion": "48211",
            "generation": 4,
            "creationTimestamp": "2021-02-03T10:00:00Z",
            "labels": {"app": "web"},
            "annotations": {
                "deployment.kubernetes.io/revision": "4",
                LAST_APPLIED: json.dumps(manifest, separators=(",", ":")) + "\n",
            },
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update",
                 "apiVersion": "apps/v1", "time": "2021-02-03T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, f"f:{LAST_APPLIED}": {}},
                                             "f:labels": {".": {}, "f:app": {}}},
                              "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {}}}},
                {"manager": "kube-controller-manager", "operation": "Update",
                 "apiVersion": "apps/v1", "time": "2021-02-03T10:00:05Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {"f:replicas": {}, "f:readyReplicas": {}}}},
            ],
        },
        "spec": {
            "replicas": spec["replicas"],
            "selector": spec["selector"],
            "template": {
                "metadata": {"creationTimestamp": None, "labels": LABELS},
                "spec": {
                    "containers": [
                        container("web", web["image"], env, 8080),
                        container("metrics", "exporter:1.4", [], 9100),
                    ],
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 30,
                    "dnsPolicy": "ClusterFirst",
                    "securityContext": {},
                    "schedulerName": "default-scheduler",
                },
            },
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        },
        "status": {"observedGeneration": 4, "replicas": spec["replicas"], "readyReplicas": 2},
    }  # fmt: skip


def kubectl_patch(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The strategic merge patch kubectl sends for old → new (as kubectl 1.32 shapes it)."""
    return {
        "metadata": {"annotations": {LAST_APPLIED: json.dumps(new, separators=(",", ":")) + "\n"}},
        "spec": {
            "replicas": new["spec"]["replicas"],
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "web"}, {"name": "metrics"}],
                    "containers": [
                        {
                            "$setElementOrder/env": [{"name": "MODE"}, {"name": "LEVEL"}],
                            "env": [
                                {"name": "LEVEL", "value": "debug"},
                                {"$patch": "delete", "name": "REGION"},
                            ],
                            "image": new["spec"]["template"]["spec"]["containers"][0]["image"],
                            "name": "web",
                        }
                    ],
                }
            },
        },
    }


def scenario() -> tuple[bytes, dict[str, Any], dict[str, Any]]:
    """(patch body, object before, object the server returned)."""
    old_env = [("MODE", "prod"), ("REGION", "eu")]
    new_env = [("MODE", "prod"), ("LEVEL", "debug")]
    old = config(2, "shop/web:1.7", old_env)
    new = config(3, "shop/web:1.8", new_env)
    before = live(old, old_env)
    after = live(new, new_env)
    after["metadata"]["resourceVersion"] = "48290"
    after["metadata"]["generation"] = 5
    after["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "4"
    return json.dumps(kubectl_patch(old, new)).encode(), before, after


def one(body: bytes, before: dict[str, Any], after: dict[str, Any]) -> bool:
    kind = "application/strategic-merge-patch+json"
    local = replay(kind, body, before)
    result = compare(kind, body, before, local, after)
    return bool(result.matches)


def main() -> None:
    body, before, after = scenario()
    PatchSchema.builtin()  # loaded once, outside the timing
    frozen = copy.deepcopy(before)
    assert one(body, before, after), compare(
        "strategic", body, before, replay("strategic", body, before), after
    ).mismatches
    rates = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(ROUNDS):
            one(body, before, after)
        rates.append(ROUNDS / (time.perf_counter() - start))
    assert before == frozen
    print("patch replay: kubectl-apply strategic merge patch of a Deployment")
    print(f"  body {len(body)} bytes, object {len(json.dumps(before))} bytes, {ROUNDS} x {REPEATS}")
    print(f"  replays/s (apply + compare): median {statistics.median(rates):,.0f}, "
          f"min {min(rates):,.0f}, max {max(rates):,.0f} (target 2,000)")  # fmt: skip


if __name__ == "__main__":
    main()
