"""Record server-side apply cases from a running lab into tests/patch/fixtures/apply-MINOR.json.

    .venv/bin/python scripts/record_apply_cases.py --dir LAB_DIR

Each case is one or more applies of a workload by a field manager; the last one is the case (its
object before, its configuration, the server's answer), the earlier ones make the object it
starts from. They are the gaps the replay of the default release's applies had: Go zero values
the server leaves out (`paused: false`), fields an apply drops that the server defaults again
(`progressDeadlineSeconds`), on Deployments, DaemonSets and StatefulSets, and a struct pruned
whole once the applier's fields in it are gone (`strategy.rollingUpdate`, with the
`maxUnavailable` defaulting put there); a ReplicationController's labels and selector taken from
its template, volumes' and claim templates' defaults; the fields "before-first-apply" owns of an
object nobody managed (from the kind's Go zero value). tests/patch/test_apply.py replays them.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path
from typing import Any

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.state import LabState
from tests.patch.traffic import request

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "patch" / "fixtures"
OUT = FIXTURES / f"apply-{CURRENT.minor_version}.json"  # the default release's


def workload(kind: str, name: str, spec: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    container = {"name": "web", "image": "busybox:1"}
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [container]},
    }
    for key, value in pod.items():
        if key == "container":
            container.update(value)
        else:
            template["spec"][key] = value
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}, "template": template}
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {**body, **spec},
    }


ZERO = {"paused": False, "minReadySeconds": 0}
ZERO_POD = {"hostname": "", "hostNetwork": False}
ZERO_CONTAINER = {"tty": False, "workingDir": "", "args": [], "env": [{"name": "A", "value": ""}]}
SET = {
    "replicas": 3,
    "progressDeadlineSeconds": 100,
    "revisionHistoryLimit": 3,
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
}
SET_POD = {"dnsPolicy": "Default", "terminationGracePeriodSeconds": 5, "schedulerName": "x"}
SET_CONTAINER = {"imagePullPolicy": "Never", "terminationMessagePath": "/tmp/t"}

CASES: list[tuple[str, str, list[dict[str, Any]]]] = [
    (
        "zero values, created",
        "Deployment",
        [workload("Deployment", "zero", ZERO, {**ZERO_POD, "container": ZERO_CONTAINER})],
    ),
    (
        "zero values, on a live object",
        "Deployment",
        [
            workload("Deployment", "zero-live", {"minReadySeconds": 5}, {}),
            workload("Deployment", "zero-live", ZERO, {**ZERO_POD, "container": ZERO_CONTAINER}),
        ],
    ),
    (
        "dropped fields, defaulted again",
        "Deployment",
        [
            workload("Deployment", "dropped", SET, {**SET_POD, "container": SET_CONTAINER}),
            workload("Deployment", "dropped", {}, {}),
        ],
    ),
    (
        "a struct emptied of what the applier owned, pruned whole",
        "Deployment",
        [
            workload(
                "Deployment",
                "emptied",
                {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
                {},
            ),
            workload("Deployment", "emptied", {"strategy": {"type": "Recreate"}}, {}),
        ],
    ),
    (
        "nulls, defaulted",
        "Deployment",
        [workload("Deployment", "nulls", {"replicas": None, "revisionHistoryLimit": None}, {})],
    ),
    (
        "a null struct, owned and defaulted",
        "Deployment",
        [workload("Deployment", "null-struct", {"strategy": None}, {"securityContext": {}})],
    ),
    (
        "a DaemonSet's dropped strategy, defaulted again",
        "DaemonSet",
        [
            workload(
                "DaemonSet",
                "daemons",
                {"updateStrategy": {"type": "OnDelete"}, "revisionHistoryLimit": 2},
                {},
            ),
            workload("DaemonSet", "daemons", {}, {}),
        ],
    ),
    (
        "a StatefulSet's dropped fields, defaulted again",
        "StatefulSet",
        [
            workload(
                "StatefulSet",
                "stateful",
                {
                    "updateStrategy": {"type": "OnDelete"},
                    "replicas": 0,
                    "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
                },
                {},
            ),
            workload("StatefulSet", "stateful", {"replicas": 0}, {}),
        ],
    ),
]


def controller(labels: dict[str, str] | None, selector: bool, volumes: bool) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": [{"name": "web", "image": "busybox"}]}
    if volumes:
        image = {"name": "w", "image": {"reference": "x:latest"}}
        pod["volumes"] = [{"name": "v"}, image, {"name": "s", "secret": {"secretName": "q"}}]
    spec: dict[str, Any] = {"replicas": 0, "template": {"metadata": {"labels": {"app": "rc"}}}}
    spec["template"]["spec"] = pod
    if selector:
        spec["selector"] = {"app": "rc"}
    metadata: dict[str, Any] = {"name": "rc", **({"labels": labels} if labels else {})}
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": metadata, "spec": spec}


CLAIM = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
VOLUMES = [
    {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": CLAIM}}},
    {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}},
]
CASES.append(
    (
        "a StatefulSet's claim templates and volumes, defaulted",
        "StatefulSet",
        [
            workload(
                "StatefulSet",
                "claims",
                {
                    "replicas": 0,
                    "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": CLAIM}],
                },
                {"volumes": VOLUMES},
            )
        ],
    )
)
CASES.append(
    (
        "a ReplicationController's labels and volumes, defaulted",
        "ReplicationController",
        [controller({"own": "x"}, True, False), controller(None, False, True)],
    )
)

PATHS = {
    "ReplicationController": "/api/v1/namespaces/default/replicationcontrollers",
    "Deployment": "/apis/apps/v1/namespaces/default/deployments",
    "DaemonSet": "/apis/apps/v1/namespaces/default/daemonsets",
    "StatefulSet": "/apis/apps/v1/namespaces/default/statefulsets",
}


UNMANAGED = "created without managedFields"  # as an object from before 1.18 is
CASES.append(
    (
        "an object nobody manages, first owned by before-first-apply",
        "StatefulSet",
        [
            {UNMANAGED: workload("StatefulSet", "unmanaged", {"replicas": 0}, {})},
            workload("StatefulSet", "unmanaged", {"replicas": 0, "minReadySeconds": 3}, {}),
        ],
    )
)


def record(layout: Layout, title: str, kind: str, applies: list[dict[str, Any]]) -> Any:
    name = applies[-1]["metadata"]["name"]
    path = f"{PATHS[kind]}/{name}"
    request(layout, "DELETE", path)
    time.sleep(1)
    case: dict[str, Any] = {}
    for config in applies:
        if UNMANAGED in config:
            status, _ = request(layout, "POST", PATHS[kind], config[UNMANAGED], "application/json")
            assert status == 201
            no_fields: dict[str, Any] = {"metadata": {"managedFields": [{}]}}
            assert request(layout, "PATCH", path, no_fields, "merge")[0] == 200
            continue
        time.sleep(1)  # the controllers' writes of the object before: done
        status, before = request(layout, "GET", path)
        with_version = copy.deepcopy(config)
        if status == 200:
            with_version["metadata"]["resourceVersion"] = before["metadata"]["resourceVersion"]
        query = "?fieldManager=m1"
        status, after = request(layout, "PATCH", path + query, with_version, "apply")
        assert status in (200, 201), after
        case = {
            "case": title,
            "manager": "m1",
            "before": before if isinstance(before, dict) and before.get("kind") == kind else {},
            "config": with_version,
            "server": after,
        }
    request(layout, "DELETE", path)
    return case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True, help="the lab's folder")
    directory = parser.parse_args().dir
    state = LabState.load(directory / "lab.json")
    assert state is not None, "no lab there"
    layout = Layout(directory, state.ports)
    cases = [record(layout, *case) for case in CASES]
    document = {"release": f"v{state.kube_version}", "cases": cases}
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"{OUT}: {len(cases)} cases from Kubernetes {state.kube_version}")


if __name__ == "__main__":
    main()
