"""Audit logs explained as truly as the lab's, on real logs transformed as real clusters' logs
come: without User-Agents (older logs, webhook output, SIEM exports drop them), with the
users a distribution gives (an IAM ARN, an email, OpenShift's kube:admin, a node named by its
cloud), and the committed GKE entry with and without its agent.

Each test says the real log it starts from:

- LAB_LOG, recordings/wide-session.audit.log.gz: the lab's own API server's audit log at
  RequestResponse of the wide session (scripts/record_audit.py);
- GKE_LOG, tests/importers/data/gke-audit.jsonl: a GKE cluster's Cloud Logging entry (its
  README says whose).

What a test expects is read from the log itself (its users, its codes, its annotations),
never typed in as counts.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bench.explain_coverage import Said, contradiction, coverage, explain
from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from tests.conftest import cli
from tests.recorded import RECORDINGS, STORY, lines_of

LAB_LOG = RECORDINGS / "wide-session.audit.log.gz"
GKE_LOG = Path(__file__).resolve().parents[1] / "importers" / "data" / "gke-audit.jsonl"
CONTROL_PLANE = {  # the lab's control plane's users, and the component each is
    "system:kube-controller-manager": "controller-manager",
    "system:kube-scheduler": "scheduler",
    "system:apiserver": "apiserver",
}
SENSITIVE = ("secrets", "serviceaccounts/token")  # whose Status messages the import masks
PEOPLE = {  # the lab's admin as each distribution names a person
    "eks": "arn:aws:iam::111122223333:role/Admin",
    "gke": "alice@example.com",
    "openshift": "kube:admin",
    "oidc": "oidc:alice",
}


@cache
def lab_events() -> tuple[dict[str, Any], ...]:
    with gzip.open(LAB_LOG, "rt") as stream:
        return tuple(json.loads(line) for line in stream if line.strip())


def transformed(
    events: Iterable[dict[str, Any]],
    *,
    users: dict[str, str] | None = None,
    agents: bool = False,
) -> list[dict[str, Any]]:
    """`events` as another cluster's log holds them: without their userAgent (unless
    `agents`), each user renamed as `users` says (the rest of the event as it was)."""
    out = []
    for event in events:
        copy = json.loads(json.dumps(event))
        if not agents:
            copy.pop("userAgent", None)
        user = copy.get("user") or {}
        name = user.get("username")
        if users and name in users:
            user["username"] = users[name]
        out.append(copy)
    return out


def imported(tmp_path: Path, events: Iterable[dict[str, Any]], name: str) -> Path:
    log = tmp_path / f"{name}.log"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / f"{name}.jsonl"
    result = cli("import", "audit", str(log), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def stripped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """LAB_LOG without any User-Agent, imported."""
    return imported(tmp_path_factory.mktemp("stripped"), transformed(lab_events()), "stripped")


@pytest.fixture(scope="module")
def stripped_said(stripped: Path) -> list[Said]:
    return explain(stripped)


def _by_id(events: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(e["auditID"]): e for e in events}


# -- attribution ---------------------------------------------------------------------------
def test_without_user_agents_each_exchange_is_its_users_component(
    stripped_said: list[Said],
) -> None:
    """From LAB_LOG, every userAgent removed: the control plane by its users, the
    controllers by their service accounts, the kubelet by its node, the admin as a person."""
    events = _by_id(lab_events())
    seen: dict[str, set[str]] = {}
    for said in stripped_said:
        user = events[said.id]["user"]["username"]
        seen.setdefault(user, set()).add(said.component)
    for user, component in CONTROL_PLANE.items():
        assert seen[user] == {component}, user
    nodes = [u for u in seen if u.startswith("system:node:")]
    assert nodes and all(seen[u] == {"kubelet"} for u in nodes)
    accounts = [u for u in seen if u.startswith("system:serviceaccount:kube-system:")]
    assert accounts
    for account in accounts:
        controller = account.rpartition(":")[2]
        assert seen[account] == {f"controller-manager/{controller}"}, account
    assert seen["kubernetes-admin"] == {"user/kubernetes-admin"}
    actors = [
        s for s in stripped_said if s.component == "unknown" or s.summary.startswith("unknown")
    ]
    assert not actors  # an object's name may say unknown (legacy-unknown-approver), no actor


def test_without_user_agents_the_explanations_hold(
    stripped_said: list[Said], tmp_path: Path
) -> None:
    """From LAB_LOG without agents: nothing unattributed, no generic summary, none that
    contradicts its request, no summary says 'nothing said', and as many controller writes
    have a cause as with the agents."""
    c = coverage(stripped_said)
    assert c.exchanges == len({e["auditID"] for e in lab_events()})
    assert c.unattributed == 0
    assert c.unknown_actors == 0
    assert c.generic <= 0.02 * c.exchanges
    assert c.contradictions == []
    assert not [s.summary for s in stripped_said if "nothing said" in s.summary]
    with_agents = coverage(explain(imported(tmp_path, lab_events(), "with-agents")))
    assert c.controller_caused == with_agents.controller_caused  # the user tells as much


def test_the_lab_log_with_its_agents_says_nothing_of_nothing(tmp_path: Path) -> None:
    """LAB_LOG as it is: a RequestResponse log of kubectl's writes, with their agents but no
    Kubectl-Command header and no patch type; each write says what it changed."""
    said = explain(imported(tmp_path, lab_events(), "lab"))
    assert said
    assert not [s.summary for s in said if "nothing said" in s.summary]
    assert not [(s.summary, w) for s in said if (w := contradiction(s))]


@pytest.mark.parametrize("distribution", sorted(PEOPLE))
def test_a_person_is_a_person_in_every_distribution(tmp_path: Path, distribution: str) -> None:
    """From LAB_LOG without agents, its admin renamed as `distribution` names a person: each
    of the admin's requests is that person's, told by their name, and none is filed under
    the control plane on its own."""
    name = PEOPLE[distribution]
    path = imported(
        tmp_path,
        transformed(lab_events(), users={"kubernetes-admin": name}),
        distribution,
    )
    admin = {e["auditID"] for e in lab_events() if e["user"]["username"] == "kubernetes-admin"}
    explainer = Explainer(Analysis.of(load(path)))
    theirs = [e for e in explainer.analysis.exchanges if e.id in admin]
    assert theirs
    for exchange in theirs:
        assert explainer.analysis.who(exchange).component == f"user/{name}"
        assert name in explainer.summaries.explain(exchange).summary
    actions = explainer.actions()
    alone = next(a for a in actions if a.title == "the control plane on its own")
    assert not admin & {e.id for e in alone.exchanges}
    mine = [a for a in actions if a.title.startswith(f"{name}'s requests")]
    assert mine and all({e.id for e in a.exchanges} <= admin for a in mine)
    assert len(mine) < len(admin)  # a command's requests together, not one action each


def test_a_node_is_named_as_its_cloud_names_it(tmp_path: Path) -> None:
    """From LAB_LOG without agents, its node renamed as EKS names nodes: the node's requests
    are that node's kubelet's."""
    nodes = {e["user"]["username"] for e in lab_events()}
    nodes = {n for n in nodes if n.startswith("system:node:")}
    renamed = {n: "system:node:ip-10-0-1-23.ec2.internal" for n in nodes}
    path = imported(tmp_path, transformed(lab_events(), users=renamed), "eks-node")
    explainer = Explainer(Analysis.of(load(path)))
    ids = {e["auditID"] for e in lab_events() if e["user"]["username"] in nodes}
    found = [explainer.analysis.who(e) for e in explainer.analysis.exchanges if e.id in ids]
    assert found
    assert {(w.component, w.node) for w in found} == {("kubelet", "ip-10-0-1-23.ec2.internal")}


# -- refusals ------------------------------------------------------------------------------
def _refused(said: list[Said], code: int) -> list[tuple[Said, dict[str, Any]]]:
    events = _by_id(lab_events())
    return [(s, events[s.id]) for s in said if s.status == code]


def test_a_refusal_after_rbac_allowed_it_is_not_rbacs(stripped_said: list[Said]) -> None:
    """From LAB_LOG without agents: each 403 whose event says the authorizer allowed it is
    told by the admission plugin that refused it (here NamespaceLifecycle, a namespace being
    deleted), never as RBAC's; each the authorizer forbade, as the authorizer's."""
    refused = _refused(stripped_said, 403)
    allowed = [
        (s, e) for s, e in refused if e["annotations"]["authorization.k8s.io/decision"] == "allow"
    ]
    forbidden = [
        (s, e) for s, e in refused if e["annotations"]["authorization.k8s.io/decision"] == "forbid"
    ]
    assert allowed and forbidden
    for said, event in allowed:
        assert "RBAC found no role" not in said.summary
        assert "by RBAC" not in said.summary.replace("not by RBAC", "")
        if said.resource in SENSITIVE:  # its Status is masked: the plugin's words are gone
            assert said.rule == "refused-admission", said.summary
            assert "not by RBAC" in said.summary
        elif "because it is being terminated" in event["responseStatus"]["message"]:
            namespace = event["objectRef"]["namespace"]
            assert said.rule == "refused-namespace", said.summary
            assert f"namespace {namespace} is being deleted" in said.summary
    for said, _event in forbidden:
        assert said.rule in ("forbidden", "forbidden-user"), said.summary
        assert "forbidden (403)" in said.summary


def _with(
    event: dict[str, Any], change: Callable[[dict[str, Any]], None], audit_id: str
) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(event))
    change(copy)
    copy["auditID"] = audit_id
    return copy


def test_podsecurity_and_webhooks_and_quota_are_named(tmp_path: Path) -> None:
    """From LAB_LOG: a real 403 the authorizer allowed (a create in a namespace being
    deleted), its Status message and annotations replaced by what each admission plugin
    writes (the words of its source, kube/refusals.py): each is told by its plugin, and
    PodSecurity's as not RBAC's."""
    base = next(
        e
        for e in lab_events()
        if (e.get("responseStatus") or {}).get("code") == 403
        and e["annotations"]["authorization.k8s.io/decision"] == "allow"
        and (e.get("objectRef") or {}).get("resource") == "pods"
    )
    name = base["objectRef"].get("name") or "db-0"

    def said(message: str, **annotations: str) -> Callable[[dict[str, Any]], None]:
        def change(event: dict[str, Any]) -> None:
            for status in (event["responseStatus"], event.get("responseObject") or {}):
                status["message"] = f'pods "{name}" is forbidden: {message}'
            event["annotations"].update(annotations)

        return change

    cases = {
        "refused-podsecurity": said(
            'violates PodSecurity "restricted:latest": privileged (container "db" must not'
            " set securityContext.privileged=true)",
            **{"pod-security.kubernetes.io/enforce-policy": "restricted:latest"},
        ),
        "refused-webhook": said('admission webhook "deny.example.com" denied the request: no'),
        "refused-quota": said(
            "exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2"
        ),
        "refused-limitrange": said("maximum cpu usage per Container is 500m, but limit is 1"),
        "refused-policy": said(
            "ValidatingAdmissionPolicy 'no-privileged' with binding 'b' denied request: no"
        ),
    }
    events = [_with(base, change, f"refusal-{rule}") for rule, change in cases.items()]
    said_all = {s.id: s for s in explain(imported(tmp_path, transformed(events), "refusals"))}
    for rule in cases:
        found = said_all[f"refusal-{rule}"]
        assert found.rule == rule, found.summary
        assert "forbidden (403)" in found.summary
        assert contradiction(found) is None
    podsecurity = said_all["refusal-refused-podsecurity"].summary
    assert "PodSecurity" in podsecurity and "restricted:latest" in podsecurity
    assert "not by RBAC" in podsecurity
    assert "deny.example.com" in said_all["refusal-refused-webhook"].summary
    assert "ResourceQuota compute" in said_all["refusal-refused-quota"].summary


# -- checks, impersonation, apply ---------------------------------------------------------
def test_an_access_review_is_a_question(stripped_said: list[Said]) -> None:
    """From LAB_LOG without agents: kubectl auth can-i's SelfSubjectAccessReview is told as
    the question it asked and its answer, not as a create."""
    events = _by_id(lab_events())
    reviews = [s for s in stripped_said if s.resource == "selfsubjectaccessreviews"]
    assert reviews
    for said in reviews:
        event = events[said.id]
        asked = event["requestObject"]["spec"]["resourceAttributes"]
        assert said.rule == "access-review"
        assert " asks whether " in said.summary and " creates " not in said.summary
        assert asked["resource"] in said.summary
        answer = "yes (allowed)" if event["responseObject"]["status"]["allowed"] else "no"
        assert answer in said.summary


def test_a_subject_access_review_asks_about_its_subject(tmp_path: Path) -> None:
    """From LAB_LOG: its SelfSubjectAccessReview made a SubjectAccessReview (as an
    aggregated API server sends them, naming the user it asks about) and a TokenReview:
    each is told as a check."""
    review = next(
        e
        for e in lab_events()
        if (e.get("objectRef") or {}).get("resource") == "selfsubjectaccessreviews"
    )

    def subject(event: dict[str, Any]) -> None:
        event["objectRef"]["resource"] = "subjectaccessreviews"
        event["requestURI"] = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
        event["requestObject"]["kind"] = "SubjectAccessReview"
        event["requestObject"]["spec"]["user"] = "system:serviceaccount:shop:robot"

    def token(event: dict[str, Any]) -> None:
        event["objectRef"] = {
            "resource": "tokenreviews",
            "apiGroup": "authentication.k8s.io",
            "apiVersion": "v1",
        }
        event["requestURI"] = "/apis/authentication.k8s.io/v1/tokenreviews"
        event["requestObject"] = {"kind": "TokenReview", "spec": {}}
        event["responseObject"] = {
            "kind": "TokenReview",
            "status": {
                "authenticated": True,
                "user": {"username": "system:serviceaccount:shop:robot"},
            },
        }

    events = [_with(review, subject, "check-sar"), _with(review, token, "check-token")]
    said = {s.id: s for s in explain(imported(tmp_path, transformed(events), "checks"))}
    sar, tokens = said["check-sar"], said["check-token"]
    assert sar.rule == "access-review"
    assert "asks whether system:serviceaccount:shop:robot may" in sar.summary
    assert tokens.rule == "token-review"
    assert "checks a token" in tokens.summary and "authenticated as" in tokens.summary
    assert not [s for s in said.values() if " creates " in s.summary]


def test_impersonation_says_who_acted_for_whom(stripped_said: list[Said]) -> None:
    """From LAB_LOG without agents: a request the admin sent as another user (kubectl --as)
    names both."""
    events = _by_id(lab_events())
    acting = [s for s in stripped_said if "impersonatedUser" in events[s.id]]
    assert acting
    for said in acting:
        event = events[said.id]
        impersonated, sender = event["impersonatedUser"]["username"], event["user"]["username"]
        if said.rule == "access-review":  # its question is about the one impersonated
            assert said.summary.startswith(f"{sender} asks whether {impersonated} may")
            continue
        assert f"acting as {impersonated}" in said.summary
        assert f"impersonated by {sender}" in said.summary


def test_kubectl_apply_is_told_from_its_body(stripped_said: list[Said]) -> None:
    """From LAB_LOG without agents: each create of the admin's whose body carries the
    last-applied-configuration annotation is told as kubectl apply's; a controller's object
    that copies its owner's annotations (a ControllerRevision) is the controller's."""
    events = _by_id(lab_events())
    carrying = [
        s
        for s in stripped_said
        if s.verb in ("create", "patch")
        and s.status is not None
        and s.status < 300
        and isinstance(body := events[s.id].get("requestObject"), dict)
        and "kubectl.kubernetes.io/last-applied-configuration"
        in json.dumps(body.get("metadata") or {})
    ]
    applied = [s for s in carrying if s.component == "user/kubernetes-admin"]
    copied = [s for s in carrying if s.component.startswith("controller-manager/")]
    assert applied and copied
    for said in applied:
        assert "kubectl apply" in said.summary, said.summary
    for said in copied:
        assert "kubectl apply" not in said.summary, said.summary


AS_AN_AUDIT_LOG_HOLDS_IT = ("kubectl-command", "kubectl-session", "content-type", "user-agent")


def test_a_client_side_apply_without_its_headers_is_kubectl_applys(tmp_path: Path) -> None:
    """From STORY (recordings/apply-story.jsonl.gz, the proxy's recording of the apply
    story), each kubectl apply request stripped of what an audit log does not keep (its
    Kubectl-Command, Kubectl-Session, Content-Type and User-Agent): its patches are told
    as kubectl apply's three-way patch, with what each changed, where the proxy's recording
    said apply-patch."""
    stripped: list[dict[str, Any]] = []
    applies: set[str] = set()
    for record in lines_of(STORY):
        record = json.loads(json.dumps(record))
        headers = record.get("headers") or []
        if record.get("record") == "request" and [
            v for k, v in headers if k.lower() == "kubectl-command" and v == "kubectl apply"
        ]:
            record["headers"] = [
                [k, v] for k, v in headers if k.lower() not in AS_AN_AUDIT_LOG_HOLDS_IT
            ]
            applies.add(record["id"])
        stripped.append(record)
    path = tmp_path / "stripped.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in stripped))
    proxy = {s.id: s for s in explain(STORY) if s.id in applies}
    told = {s.id: s for s in explain(path) if s.id in applies}
    patches = [i for i, s in proxy.items() if s.rule == "apply-patch"]
    assert patches
    for id_ in patches:
        said = told[id_]
        assert said.rule == "apply-patch-seen", said.summary
        assert "kubectl apply's three-way patch of " in said.summary
        change = said.summary.split(": ", 2)[2]
        assert change and "nothing said" not in change
    server_side = [i for i, s in proxy.items() if s.rule == "apply-server-side"]
    assert server_side  # kubectl apply --server-side: its force parameter says so
    for id_ in server_side:
        said = told[id_]
        assert said.rule == "apply-server-side-seen", said.summary
        assert "apiVersion" not in said.summary  # what names the object is not a change
    assert not [s.summary for s in told.values() if "nothing said" in s.summary]


# -- leader election, GKE ------------------------------------------------------------------
def test_leader_election_is_told_by_its_lock(stripped_said: list[Said]) -> None:
    """From LAB_LOG without agents (no /leader-election role in any agent): the controller
    manager's and the scheduler's Lease writes are leader election, with their holder."""
    events = _by_id(lab_events())
    locks = [
        s
        for s in stripped_said
        if s.resource == "leases"
        and events[s.id]["objectRef"].get("name") in ("kube-controller-manager", "kube-scheduler")
        and s.verb in ("create", "update")
    ]
    assert {s.component for s in locks} == {"controller-manager", "scheduler"}
    for said in locks:
        assert said.rule == "leader-lock"
        assert "leader election" in said.summary and "held by " in said.summary


@pytest.mark.parametrize("agents", [True, False])
def test_gkes_leader_endpoints_are_leader_election(tmp_path: Path, agents: bool) -> None:
    """From GKE_LOG (its one Kubernetes entry: the VPA recommender updating Endpoints in
    kube-system), with its agent and without: leader election, named once, by GKE's user."""
    out = tmp_path / "gke.jsonl"
    log = GKE_LOG
    if not agents:
        entries = [json.loads(line) for line in GKE_LOG.read_text().splitlines() if line]
        for entry in entries:
            entry.get("protoPayload", {}).get("requestMetadata", {}).pop(
                "callerSuppliedUserAgent", None
            )
        log = tmp_path / "gke-no-agent.jsonl"
        log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    result = cli("import", "audit", str(log), "-o", str(out))
    assert result.returncode == 0, result.stderr
    said = explain(out)
    assert len(said) == 1
    only = said[0]
    assert only.rule == "leader-lock"
    assert "vpa-recommender's leader election" in only.summary
    assert "held by gke-" in only.summary
    if not agents:
        assert only.component == "gke/vpa-recommender"
        assert only.summary.startswith("GKE's vpa-recommender")
    story = cli("explain", "--all", str(out))
    assert story.returncode == 0, story.stderr
    line = next(x for x in story.stdout.splitlines() if "leader election" in x)
    who = line.split(" ", 1)[1].split(" its lock ")[0]  # the time, then who and what
    assert who.count("vpa-recommender") == 1, line  # said once, not "x: x's ..."


# -- the story -----------------------------------------------------------------------------
DAY = 86_400.0
TIMED = re.compile(r"^\s*(?:(\d{4}-\d{2}-\d{2}) )?\d{2}:\d{2}:\d{2}\.\d{3} ")
SAID_TWICE = re.compile(r"^\s*[\d:. -]+(?:\+\d+ ms )?(\S+?):? \1\b")


def _later(event: dict[str, Any], days: float) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(event))
    for key in ("requestReceivedTimestamp", "stageTimestamp"):
        when = dt.datetime.fromisoformat(copy[key].replace("Z", "+00:00"))
        copy[key] = (when + dt.timedelta(seconds=days * DAY)).isoformat().replace("+00:00", "Z")
    return copy


def test_a_story_of_several_days_shows_its_dates(tmp_path: Path) -> None:
    """From LAB_LOG without agents, its second half a day later (a log kept over two days):
    every line of the story carries its date, and no line says its component twice."""
    events = transformed(lab_events())
    half = len(events) // 2
    ids = {e["auditID"] for e in events[:half]}
    later = [e if e["auditID"] in ids else _later(e, 1) for e in events]
    path = imported(tmp_path, later, "two-days")
    story = cli("explain", "--all", str(path))
    assert story.returncode == 0, story.stderr
    timed = [m for line in story.stdout.splitlines() if (m := TIMED.match(line))]
    assert timed and all(m.group(1) for m in timed)
    assert len({m.group(1) for m in timed}) == 2
    twice = [x for x in story.stdout.splitlines() if SAID_TWICE.match(x)]
    assert not twice, twice[:5]
    lines = cli("explain", "--format", "lines", str(path))
    assert lines.returncode == 0, lines.stderr
    timed = [m for line in lines.stdout.splitlines() if (m := TIMED.match(line))]
    assert timed and all(m.group(1) for m in timed)
    one_day = cli("explain", "--all", str(imported(tmp_path, events, "one-day")))
    clocks = [TIMED.match(x) for x in one_day.stdout.splitlines()]
    found = [m for m in clocks if m is not None]
    assert found and not [m for m in found if m.group(1)]


def test_a_read_refused_after_rbac_allowed_it_is_no_admissions(tmp_path: Path) -> None:
    """From LAB_LOG: a watch the authorizer allowed, answered 403 all the same (as a long
    watch is when its credential expires while it runs): neither RBAC's nor admission's,
    which no read passes."""
    base = next(
        e
        for e in lab_events()
        if e["verb"] == "watch"
        and e["annotations"].get("authorization.k8s.io/decision") == "allow"
        and e["stage"] == "ResponseComplete"
    )

    def refused(event: dict[str, Any]) -> None:
        event["responseStatus"] = {"metadata": {}, "code": 403}

    said = explain(imported(tmp_path, transformed([_with(base, refused, "late-403")]), "late"))
    assert [s.rule for s in said] == ["refused-after-allowed"]
    assert "though the authorizer allowed it" in said[0].summary
    assert "admission" not in said[0].summary and "RBAC found" not in said[0].summary


def test_a_request_no_record_names_is_said_so_not_unknown(tmp_path: Path) -> None:
    """From LAB_LOG without agents, the admin's create of its namespace with its user
    removed (as sanitised samples drop it): nothing names its sender, and its summary says
    so rather than naming an `unknown`."""
    base = next(
        e
        for e in lab_events()
        if e["verb"] == "create"
        and (e.get("objectRef") or {}).get("resource") == "namespaces"
        and e["user"]["username"] == "kubernetes-admin"
    )

    def anonymous(event: dict[str, Any]) -> None:
        event["user"] = {}

    said = explain(imported(tmp_path, transformed([_with(base, anonymous, "nobody")]), "nobody"))
    assert [s.component for s in said] == ["unknown"]
    assert said[0].summary.startswith("a client the record does not name")
    assert coverage(said).unknown_actors == 0
