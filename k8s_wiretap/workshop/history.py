"""The history session: one Deployment changed by everyone who changes Deployments.

The workshop's Deployment `web` (web.yaml) in the default namespace is

1. applied (client-side: field manager `kubectl-client-side-apply`), and rolled out;
2. scaled to 3 (`kubectl scale`: the scale subresource, manager `kubectl`);
3. labelled by another manager (`kubectl label --field-manager team-b`);
4. given a new image (`kubectl set image`: manager `kubectl-set`), and rolled out;
5. server-side applied by `platform`, which wants 4 replicas: `replicas` is `kubectl`'s
   since the scale, so the apply conflicts, and `--force-conflicts` takes it over;

while the controllers write its status after each change. `scripts/record_history.py`
records it, with the whole control plane through the wiretap, into
recordings/history-session.jsonl.gz: the recording `history` is tested on.
"""

from __future__ import annotations

from k8s_wiretap.workshop import manifest
from k8s_wiretap.workshop.scenarios import Step, Story

__all__ = ["HISTORY", "PLATFORM", "TAKEOVER"]

PLATFORM = "platform"  # the server-side applier that takes replicas over
TAKEOVER = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 4}
"""


def _until_ready(
    title: str, args: tuple[str, ...], replicas: int, stdin: str | None = None
) -> Step:
    """A step, then wait until the Deployment has `replicas` ready and updated pods."""
    return Step(
        title,
        args,
        stdin,
        until="{.status.readyReplicas}/{.status.updatedReplicas}",
        until_get=("get", "deployment", "web"),
        expect=f"{replicas}/{replicas}",
    )


HISTORY = Story(
    "history",
    (
        _until_ready("apply the Deployment", ("apply", "-f", "-"), 2, manifest("web")),
        _until_ready("scale it to 3", ("scale", "deployment/web", "--replicas=3"), 3),
        Step(
            "label it, as another manager",
            ("label", "deployment", "web", "tier=front", "--field-manager=team-b"),
        ),
        _until_ready("set a new image", ("set", "image", "deployment/web", "nginx=nginx:1.27"), 3),
        _until_ready(
            "a server-side apply takes replicas over",
            (
                "apply",
                "--server-side",
                f"--field-manager={PLATFORM}",
                "--force-conflicts",
                "-f",
                "-",
            ),
            4,
            TAKEOVER,
        ),
    ),
)
