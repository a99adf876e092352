"""The readable story of the committed recording: each kubectl command and what it set off."""

from __future__ import annotations

import io
import re
from functools import cache

from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.views.story import verdict, write_story
from tests.conftest import cli
from tests.recorded import STORY, story


@cache
def explainer() -> Explainer:
    return Explainer(Analysis.of(story()))


def told(*, noise: bool = False, markdown: bool = False) -> str:
    out = io.StringIO()
    write_story(explainer(), out, noise=noise, markdown=markdown)
    return out.getvalue()


def section(text: str, after: str) -> list[str]:
    """The lines of the first section whose lines include `after`."""
    for part in text.split("\n== ")[1:]:
        if after in part:
            return part.splitlines()
    raise AssertionError(f"no section has {after!r}")


def depth(line: str) -> int:
    return (len(line) - len(line.lstrip(" "))) // 2


def test_the_scale_up_apply_and_what_it_set_off() -> None:
    lines = section(told(), "patches Deployment default/web (strategic merge patch")
    assert lines[0].startswith("kubectl apply")
    patch = next(i for i, line in enumerate(lines) if "patches Deployment default/web" in line)
    assert "→ etcd /registry/deployments/default/web @" in lines[patch]
    assert lines[patch + 1].strip().startswith("application/strategic-merge-patch+json: {")
    assert '"spec": {"replicas": 3}' in lines[patch + 1]
    assert lines[patch + 2].strip().endswith(": matches the server's result")
    assert lines[patch + 3].strip() == "set /spec/replicas 2 → 3"
    assert lines[patch + 4].strip() == "changed by your file"
    chain = [
        "the deployment controller updates ReplicaSet web-",
        "the replicaset controller creates Pod web-",
        "the scheduler binds Pod web-",
        "the kubelet reports Pod web-",
    ]
    found = patch
    for level, step in enumerate(chain, 1):
        found = next(i for i in range(found + 1, len(lines)) if step in lines[i])
        assert depth(lines[found]) == level, lines[found]  # one level under its cause
        assert re.search(r"\+\d+ ms ", lines[found]), lines[found]


def test_noise_is_folded_unless_asked_for() -> None:
    quiet, everything = told(), told(noise=True)
    assert "leader Lease" not in quiet and "leader Lease" in everything
    assert "more hidden: leases, discovery, health, events" in quiet
    assert len(everything.splitlines()) > len(quiet.splitlines())


def test_markdown_for_a_handout() -> None:
    text = told(markdown=True)
    assert "\n## kubectl apply\n" in text and "\n## the control plane on its own\n" in text
    assert re.search(r"\n  - \S+ \+\d+ ms controller-manager/deployment-controller: ", text)
    assert "[dim]" not in text and "[/" not in text


def test_the_command_tells_the_story_by_default() -> None:
    result = cli("explain", str(STORY))
    assert result.returncode == 0, result.stderr
    assert "== kubectl apply" in result.stdout
    assert "the scheduler binds Pod web-" in result.stdout
    lines = cli("explain", str(STORY), "--format", "lines")
    assert len(lines.stdout.splitlines()) == len(story().exchanges)


def test_a_refused_apply_is_told_as_refused_alike_not_as_a_result() -> None:
    analysis = explainer().analysis
    (conflict,) = [e for e in analysis.exchanges if e.method == "PATCH" and e.status == 409]
    replay = analysis.replay(conflict)
    assert replay is not None and replay.refused
    said = verdict(conflict, replay)
    assert said.endswith("refused alike (409 Conflict), as the server refused it"), said
    assert "matches the server's result" not in said
    patches = [(e, analysis.replay(e)) for e in analysis.exchanges if e.method == "PATCH"]
    told = [verdict(e, r) for e, r in patches if r is not None]
    assert told and all(t.startswith("replayed on the object as ") for t in told)
    assert all(" ms before: " in t or " ms after it was sent (a race): " in t for t in told)


def test_field_values_say_what_happened_to_them() -> None:
    text = told()
    assert "left alone /metadata/labels/team stays 'payments'" in text
    assert "removed /data/size 'large' → gone" in text
    assert "set /stringData/password sent, but not a field the stored object keeps" in text


def test_a_final_delete_says_etcd_deleted_the_key() -> None:
    deleted = [line for line in told(noise=True).splitlines() if "deleted from etcd" in line]
    assert deleted and all("kubelet" in line and "/registry/pods/" in line for line in deleted)
