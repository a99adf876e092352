"""Random but plausible patches of a Deployment, for the differential test against the server.

Every kind of patch with the directives and quirks that matter: Go zero values and nulls of
defaulted fields (`paused: false`, `progressDeadlineSeconds: null`), containers, env and ports
merged by key, `$patch: delete|replace` items and maps, `$setElementOrder` lists that may name
items that do not exist (the server then rejects some), `$deleteFromPrimitiveList` and
`$retainKeys`, nulls, empty lists; merge patches with nulls in lists; JSON patches with `-`,
negative indices and missing members.
"""

from __future__ import annotations

import random
from typing import Any

NAMES = ["web", "side", "a", "b"]
ENV = ["A", "B", "C", "D"]

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "random", "labels": {"app": "random", "x": "1"}, "finalizers": ["f/a"]},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "random"}},
        "template": {
            "metadata": {"labels": {"app": "random"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "busybox:1",
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                        "ports": [{"containerPort": 80}],
                    },
                    {"name": "side", "image": "busybox:1"},
                ]
            },
        },
    },
}


class Patches:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def some(self, items: list[Any], low: int = 0, high: int | None = None) -> list[Any]:
        return self.rng.sample(items, self.rng.randint(low, high or len(items)))

    def env(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name in self.some(ENV, 0, 3):
            roll = self.rng.random()
            if roll < 0.2:
                out.append({"name": name, "$patch": "delete"})
            elif roll < 0.3:
                out.append({"name": name, "value": None})
            else:
                out.append({"name": name, "value": self.rng.choice(["1", "2", "x"])})
        return out

    def container(self, name: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": name}
        if self.chance(0.6):
            out["image"] = self.rng.choice(["busybox:1", "busybox:2", "nginx"])
        if self.chance(0.5):
            out["env"] = self.env()
        if self.chance(0.2):
            out["$setElementOrder/env"] = [{"name": n} for n in self.some(ENV)]
        if self.chance(0.3):
            out["ports"] = [{"containerPort": p} for p in self.some([80, 81, 8080], 0, 2)]
        if self.chance(0.2):
            out["args"] = self.some(["x", "y", "z"])
        if self.chance(0.1):
            out["$patch"] = self.rng.choice(["delete", "replace"])
        return out

    def metadata(self, patch: dict[str, Any]) -> None:
        if self.chance(0.4):
            labels: dict[str, Any] = {
                k: self.rng.choice([None, "v1", "v2"]) for k in self.some(["x", "y", "z"], 1, 2)
            }
            if self.chance(0.1):
                labels.update({"$patch": "replace", "app": "random"})
            patch.setdefault("metadata", {})["labels"] = labels
        if self.chance(0.3):
            key = self.rng.choice(
                ["finalizers", "$deleteFromPrimitiveList/finalizers", "$setElementOrder/finalizers"]
            )
            patch.setdefault("metadata", {})[key] = self.some(["f/a", "f/b", "f/c"], 0, 2)

    def strategy(self) -> dict[str, Any]:
        kind = self.rng.choice(["Recreate", "RollingUpdate"])
        out: dict[str, Any] = {"type": kind}
        if kind == "Recreate":
            out.update({"$retainKeys": ["type"], "rollingUpdate": None})
        elif self.chance(0.5):
            out["$retainKeys"] = ["type", "rollingUpdate"]
            out["rollingUpdate"] = {"maxSurge": self.rng.choice([1, "50%"])}
        return out

    def zeros(self, patch: dict[str, Any]) -> None:
        """Go zero values the server leaves out, and defaulted fields set or removed (a
        null), which its defaulting puts back."""
        if self.chance(0.3):
            spec = patch.setdefault("spec", {})
            spec["paused"] = self.rng.choice([False, None])
            spec["minReadySeconds"] = self.rng.choice([0, 5])
        if self.chance(0.3):
            spec = patch.setdefault("spec", {})
            name = self.rng.choice(["progressDeadlineSeconds", "revisionHistoryLimit"])
            spec[name] = self.rng.choice([None, 100])

    def strategic(self) -> dict[str, Any]:
        patch: dict[str, Any] = {}
        self.metadata(patch)
        self.zeros(patch)
        if self.chance(0.3):
            patch.setdefault("spec", {})["replicas"] = self.rng.randint(0, 3)
        if self.chance(0.3):
            patch.setdefault("spec", {})["strategy"] = self.strategy()
        if self.chance(0.7):
            template = patch.setdefault("spec", {}).setdefault("template", {})
            pod = template.setdefault("spec", {})
            pod["containers"] = [self.container(n) for n in self.some(NAMES, 1, 3)]
            if self.chance(0.4):
                pod["$setElementOrder/containers"] = [{"name": n} for n in self.some(NAMES, 1)]
        return patch

    def merge(self) -> dict[str, Any]:
        patch: dict[str, Any] = {}
        if self.chance(0.5):
            patch["metadata"] = {
                "labels": {self.rng.choice(["x", "y"]): self.rng.choice([None, "v"])}
            }
        if self.chance(0.5):
            patch["spec"] = {"replicas": self.rng.randint(0, 2)}
        self.zeros(patch)
        if self.chance(0.5):
            web = {"name": "web", "image": "busybox:3", "args": [self.rng.choice(["x", None]), "y"]}
            patch.setdefault("spec", {})["template"] = {"spec": {"containers": [web]}}
        return patch

    def json(self) -> list[dict[str, Any]]:
        env = "/spec/template/spec/containers/0/env/"
        choices: list[dict[str, Any]] = [
            {"op": "replace", "path": "/spec/replicas", "value": self.rng.randint(0, 2)},
            {"op": "add", "path": f"/metadata/labels/{self.rng.choice('xy')}", "value": "v"},
            {"op": "remove", "path": f"/metadata/labels/{self.rng.choice('xy')}"},
            {"op": "add", "path": env + self.rng.choice(["-", "0", "-1"]), "value": {"name": "P"}},
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "b:9"},
            {"op": "remove", "path": env + self.rng.choice(["0", "-1", "5"])},
        ]
        return [self.rng.choice(choices) for _ in range(self.rng.randint(1, 3))]

    def next(self) -> tuple[str, Any]:
        kind = self.rng.choice(["strategic"] * 4 + ["merge", "json"])
        patch = {"strategic": self.strategic, "merge": self.merge, "json": self.json}[kind]()
        return kind, patch


class Applies:
    """Random server-side applies of the Deployment `random` by a few managers, each a whole
    configuration: fields set to Go zero values (`paused: false`, `minReadySeconds: 0`, a
    container's `tty: false`, `workingDir: ""`), nulls, and fields one apply sets and the
    next leaves out (pruned, then defaulted again by the server: `progressDeadlineSeconds`,
    `revisionHistoryLimit`, `strategy`, a container's `imagePullPolicy`)."""

    MANAGERS = ("m1", "m2", "m3")

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.patches = Patches(seed)

    def pick(self, *choices: Any) -> Any:
        return self.rng.choice(choices)

    def optional(self, out: dict[str, Any], name: str, *values: Any) -> None:
        """Sets `name` to one of `values` half the time (a value may be None: a null)."""
        if self.rng.random() < 0.5:
            out[name] = self.rng.choice(values)

    def container(self, name: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": name}
        self.optional(out, "image", "busybox:1", "busybox:2", "nginx", "nginx:latest")
        self.optional(out, "imagePullPolicy", "Always", "Never", "IfNotPresent")
        self.optional(out, "tty", False, True)
        self.optional(out, "stdin", False)
        self.optional(out, "workingDir", "", "/tmp")
        self.optional(out, "terminationMessagePath", "/dev/termination-log", "/tmp/t")
        self.optional(out, "args", [], ["x"])
        if self.rng.random() < 0.4:
            out["env"] = [
                {"name": n, "value": self.pick("", "1", "x")} for n in self.patches.some(ENV, 0, 2)
            ]
        if self.rng.random() < 0.3:
            out["ports"] = [{"containerPort": 80, "protocol": self.pick("TCP", "UDP")}]
        return out

    def strategy(self) -> Any:
        return self.pick(
            None,
            {"type": "Recreate"},
            {"type": "RollingUpdate"},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": self.pick(0, 1, "50%")}},
        )

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "random"}}}
        self.optional(spec, "replicas", 0, 1, 2, None)
        self.optional(spec, "paused", False, None)
        self.optional(spec, "minReadySeconds", 0, 5)
        self.optional(spec, "progressDeadlineSeconds", 100, 600, None)
        self.optional(spec, "revisionHistoryLimit", 0, 3, None)
        self.optional(spec, "strategy", self.strategy())
        pod: dict[str, Any] = {}
        if self.rng.random() < 0.8:
            pod["containers"] = [self.container(n) for n in self.patches.some(NAMES[:2], 1)]
        self.optional(pod, "hostname", "", "h")
        self.optional(pod, "restartPolicy", "Always")
        self.optional(pod, "terminationGracePeriodSeconds", 30, 5, None)
        self.optional(pod, "dnsPolicy", "ClusterFirst", "Default")
        self.optional(pod, "hostNetwork", False)
        spec["template"] = {"metadata": {"labels": {"app": "random"}}, "spec": pod}
        return spec

    def next(self) -> tuple[str, bool, dict[str, Any]]:
        """(manager, force, configuration)"""
        config: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment"}
        config["metadata"] = {"name": "random"}
        if self.rng.random() < 0.4:
            labels = {k: self.pick("v1", "v2", "") for k in self.patches.some(["x", "y"], 1)}
            config["metadata"]["labels"] = labels
        config["spec"] = self.spec()
        return self.pick(*self.MANAGERS), self.rng.random() < 0.8, config
