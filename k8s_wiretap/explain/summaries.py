"""What each exchange is, and why it happens: a one-line summary and a short why.

The rules are data (`kube/data/explanations.yaml`, each with its source, read by
`kube/explanations.py`); this module
matches them against what the exchange is — who sent it, the request as the API server
resolves it, its status, whether it is an informer's first list or a relist, whether its
watch expired — and fills their templates from the decoded bodies, the object history and
the causal chains (`chains.py`): the summary of a controller's write says which watch
event set it off. The etcd key each exchange reads or writes comes with it (`kube/etcd.py`).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from operator import itemgetter
from typing import Any, ClassVar

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.explain import details as detail
from k8s_wiretap.explain import streams
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.chains import Chains
from k8s_wiretap.explain.changes import changed
from k8s_wiretap.explain.names import spoken
from k8s_wiretap.kube.agents import person_component, user_name
from k8s_wiretap.kube.controllers import DISTRIBUTIONS, third_party
from k8s_wiretap.kube.etcd import etcd_key
from k8s_wiretap.kube.explanations import RULES_FILE, Rule, rules
from k8s_wiretap.kube.fields import LAST_APPLIED
from k8s_wiretap.kube.media import patch_type
from k8s_wiretap.kube.reads import served_from
from k8s_wiretap.kube.refs import involved_of, resource_version
from k8s_wiretap.kube.refusals import Refusal, refusal
from k8s_wiretap.kube.release import Release
from k8s_wiretap.kube.requestinfo import RequestInfo
from k8s_wiretap.kube.resources import Resources
from k8s_wiretap.kube.verbs import READS, WATCH, WRITES

__all__ = ["Explanation", "Rule", "Summaries", "rules"]

# components named by the user they authenticate as (kube/agents.py), and `unknown` (nothing
# names it): a template says them as a sentence does (`user/kubernetes-admin` is
# "kubernetes-admin", `unknown` "a client the record does not name")
IDENTITIES = frozenset({"user", "serviceaccount", "unknown", *DISTRIBUTIONS})
UNKNOWN = "\0"  # the parameter that stands for a query string not known (an import's)
UNKNOWN_QUERY = {UNKNOWN: "unknown"}

FACTS = frozenset(  # what `Summaries._facts` says of every exchange: what rules match on
    {
        "component",
        "command",
        "verb",
        "resource",
        "subresource",
        "status",
        "path",
        "param",
        "patch",
        "manager",
        "initial",
        "expired",
        "method",
        "name",
        "namespace",
        "body",
        "deleting",
        "third_party",
        "unanswered",
        "person",
        "applied",
        "leader_lock",
        "refused_by",
    }
)


STORED = READS | WRITES  # the verbs whose exchange names an etcd key (`Summaries._etcd`)
NO_REFUSAL = Refusal()  # what `Summaries._refusal` says of all but a 4xx (it never changes)


def _plain(decoded: Decoded) -> Any:
    return decoded.value if decoded.ok else decoded.error


@dataclass(slots=True)
class Explanation:
    summary: str
    why: str
    rule: str
    noise: bool
    source: str
    etcd: dict[str, Any] | None
    stored: Decoded | None = None  # what etcd recorded, decoded: `etcd["stored"]["value"]`

    def to_json(self, body: Callable[[Decoded], Any] | None = None) -> dict[str, Any]:
        """As JSON; `body`, when given, says how the stored value goes in (the JSON writer's:
        serialized once, however many writes landed the same bytes); else it is as decoded."""
        etcd = self.etcd
        if self.stored is not None and body is not None and etcd is not None:
            etcd = {**etcd, "stored": {**etcd["stored"], "value": body(self.stored)}}
        return {
            "summary": self.summary,
            "why": self.why,
            "noise": self.noise,
            "rule": self.rule,
            "rule_source": self.source,
            "etcd": etcd,
        }


@cache
def _matched() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The facts the rules look at, and the query parameters they name."""
    keys = sorted({k for r in rules() for k in r.match})
    params = sorted({n for r in rules() for n in r.match.get("param") or {}})
    return tuple(keys), tuple(params)


_chosen: dict[tuple[Any, ...], Rule] = {}


@cache
def _keying() -> tuple[Callable[[dict[str, Any]], tuple[Any, ...]], dict[str, frozenset[Any]]]:
    """What `_rule` chooses by: a tuple of the facts the rules look at (every one `_facts`
    gives) but those with a value per object, and those (`_named`)."""
    keys, _ = _matched()
    named = _named()
    plain = [k for k in keys if k != "param"]
    unknown = sorted(set(plain) - FACTS)
    if unknown:
        raise ValueError(f"kube/data/{RULES_FILE}: rules match on what no exchange has: {unknown}")
    kept = [k for k in plain if k not in named]
    getter = itemgetter(*kept) if len(kept) > 1 else lambda facts: facts[kept[0]]
    return (lambda facts: (getter(facts),)) if len(kept) <= 1 else getter, named


@cache
def _named() -> dict[str, frozenset[Any]]:
    """Of the facts with a value per object (its name, its namespace), the values the rules
    name: any other value chooses as none of them would, so `_rule` keys on None instead
    (the choices stay a few hundred however many objects a recording has)."""
    keys = ("name", "namespace")
    return {
        k: frozenset(w for r in rules() if k in r.match for w in _many(r.match[k]))
        for k in keys
        if k in _matched()[0]
    }


@cache
def _key() -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """What `_rule` chooses by, as one function made once: the facts `_keying` says, each
    fact of `_named` (None for a value no rule names), and the query parameters the rules
    name (a constant for a request without any, most of them)."""
    plain, named = _keying()
    said = tuple(named.items())
    params = (UNKNOWN, *_matched()[1])
    none = (None,) * len(params)

    def key(facts: dict[str, Any]) -> tuple[Any, ...]:
        options = facts["param"]
        asked = tuple([options.get(n) for n in params]) if options else none
        return (*plain(facts), *[facts[k] if facts[k] in v else None for k, v in said], *asked)

    return key


def _rule(facts: dict[str, Any]) -> Rule:
    """The first rule that matches: chosen once for each combination of what the rules
    look at (a few hundred in a recording)."""
    key = _key()(facts)
    rule = _chosen.get(key)
    if rule is None:
        named = _named()
        said = [facts[k] if facts[k] in values else None for k, values in named.items()]
        # matched as keyed (a name no rule names is None); the templates get the real ones
        facts = {**facts, **dict(zip(named, said, strict=True))}
        rule = next(r for r in rules() if _matches(r.match, facts))
        if len(_chosen) > 4096:
            _chosen.clear()
        _chosen[key] = rule
    return rule


class _Values(dict[str, Any]):
    """A template's values: the facts, and each of `Summaries.VALUES` computed only when
    the template names it (the cause, say, takes a look at the chains); "?" for others."""

    def __init__(self, summaries: Summaries, exchange: Exchange, facts: dict[str, Any]):
        super().__init__(facts)
        del self["command"]  # the template's own, below
        if facts["component"].partition("/")[0] in IDENTITIES:  # named by its user
            self["component"] = spoken(facts["component"])
        self.summaries, self.exchange = summaries, exchange

    def __missing__(self, key: str) -> Any:
        make = Summaries.VALUES.get(key)
        if make is None:
            return "?"
        value = self[key] = make(self.summaries, self.exchange, self)
        return value


class Summaries:
    """The explanation of every exchange of an analysis."""

    def __init__(self, analysis: Analysis, chains: Chains | None = None) -> None:
        self.analysis = analysis
        self.chains = chains or Chains(analysis)
        # each client's LISTs and WATCHes of a resource, (component, group, resource) → the
        # latest and whether each of the last few started an informer; exchanges explained
        # later (a stream's) are added in time order
        self._first: dict[tuple[str, str, str], _Started] = {}
        for exchange in analysis.exchanges:
            self.saw(exchange)

    @property
    def release(self) -> Release | None:
        return self.analysis.server_release

    def saw(self, exchange: Exchange) -> bool:
        """Note `exchange` (in time order); True if it is an informer starting: its client's
        first LIST or WATCH of its resource, or one beside another still open (several
        informers of one client, as the dynamic certificate controllers' watches of one
        ConfigMap). One after an earlier one ended is a relist or a rewatch (a LIST after a
        failed watch list: the reflector's fallback)."""
        info = exchange.info
        if info.verb not in ("list", WATCH) or not info.is_resource_request:
            return False
        key = (exchange.component, info.group, info.resource)
        known = self._first.get(key)
        if known is not None:
            said = known.decided.get(exchange.id)
            if said is not None:
                return said
        initial = known is None or _open_at(known.latest, exchange.time)
        if known is None:
            known = self._first[key] = _Started(exchange)
        known.latest = exchange
        known.decided[exchange.id] = initial
        if len(known.decided) > DECIDED:
            known.decided.popitem(last=False)
        return initial

    def explain(self, exchange: Exchange) -> Explanation:
        facts = self._facts(exchange)
        rule = _rule(facts)
        values = _Values(self, exchange, facts)
        etcd, stored = self._etcd(exchange)
        summary = _squeezed(rule.summary.format_map(values))
        if exchange.info.dry_run and exchange.info.verb in WRITES:
            summary += " (a dry run: nothing is stored, no watcher is told)"
        if exchange.info.streaming and "{transport}" not in rule.summary:  # a refusal's rule
            summary += streams.transport(exchange)
        summary += streams.managed_fields_note(self.analysis, exchange)
        if rule.id not in CHECKS:  # a review's question names whom it asks about already
            summary += _impersonating(exchange)
        return Explanation(
            summary,
            _squeezed(rule.why.format_map(values)),
            rule.id,
            rule.noise,
            rule.source,
            etcd,
            stored,
        )

    # -- what the rules match on ------------------------------------------------------------
    def _facts(self, exchange: Exchange) -> dict[str, Any]:
        info = exchange.info
        body = self.analysis.request_body(exchange)
        written = self.analysis.response_body(exchange).value if info.verb in WRITES else None
        events = self.analysis.events(exchange)
        meta: dict[str, Any] = {}
        if isinstance(written, dict) and written.get("kind") != "Status":
            found = written.get("metadata")
            meta = found if isinstance(found, dict) else {}
        elif info.verb == "create" and isinstance(body.value, dict) and body.ok:
            found = body.value.get("metadata")  # a refused create: the name it asked for
            meta = found if isinstance(found, dict) else {}
        return {
            "component": exchange.component,
            "command": exchange.request_header("kubectl-command"),
            "verb": info.verb,
            "resource": info.resource,
            "subresource": info.subresource,
            "status": exchange.status,
            "path": exchange.path.split("?")[0] if not info.is_resource_request else "",
            "param": UNKNOWN_QUERY if exchange.query_unknown else info.options(),
            "patch": patch_type(exchange.request_header("content-type")) or "",
            "manager": info.param("fieldManager") or "",
            "initial": self.saw(exchange),
            "expired": bool(events) and any(e.expired for e in events),
            "method": exchange.method,
            "name": str(meta.get("name") or info.name),
            "namespace": _namespace_of(info.group, info.resource, meta, info.namespace),
            "body": body.value if body.ok else None,
            "deleting": bool(meta.get("deletionTimestamp")),
            "third_party": third_party(exchange.component),
            "unanswered": exchange.status is None and exchange.error is not None,
            "person": person_component(exchange.component),
            "applied": info.verb in ("patch", "create")
            and _applied(body.value)
            and _applies(exchange.component),
            "leader_lock": _leader_lock(info, meta, body.value),
            "refused_by": self._refusal(exchange).by,
        }

    def _refusal(self, exchange: Exchange) -> Refusal:
        status = exchange.status
        if status is None or not 400 <= status < 500:
            return NO_REFUSAL
        audit = exchange.request.audit or {}
        annotations = audit.get("annotations")
        message = str(self._status_body(exchange).get("message") or "")
        found = annotations if isinstance(annotations, dict) else {}
        return refusal(status, found, message, exchange.info.verb)

    # -- what the templates say -------------------------------------------------------------
    def _kind(self, exchange: Exchange, facts: dict[str, Any]) -> str:
        info = exchange.info
        return self.analysis.resources.kind_of(info.group, info.resource) or info.resource

    def _served(self, exchange: Exchange, facts: dict[str, Any]) -> str:
        return served_from(exchange.info.verb, facts["param"], self.release)

    VALUES: ClassVar[dict[str, Callable[[Summaries, Exchange, dict[str, Any]], Any]]] = {
        "kind": _kind,
        "object": lambda s, e, f: _object(f["kind"], f["namespace"], f["name"], e.info.resource),
        "listed": lambda s, e, f: _listed(f["kind"], f["namespace"], f["name"]),
        "command": lambda s, e, f: e.request_header("kubectl-command") or "kubectl",
        "rv": lambda s, e, f: _rv(f["param"]),
        "selector": lambda s, e, f: (
            f["param"].get("fieldSelector") or f["param"].get("labelSelector") or "all"
        ),
        "events": lambda s, e, f: _events(e),
        "served": _served,
        "node": lambda s, e, f: _binding_target(f["body"]),
        "involved": lambda s, e, f: _involved(f["body"], s.analysis.response_body(e).value),
        "cause": lambda s, e, f: s._cause(e),
        "verbs": lambda s, e, f: _third_person(e.info.verb),
        "error": lambda s, e, f: (e.error or "").rstrip(".").lower(),
        "who": lambda s, e, f: e.request_header("kubectl-command") or spoken(e.component),
        "what": lambda s, e, f: (
            _what(f["object"], e.info.subresource) if e.info.is_resource_request else f["path"]
        ),
        "failure": lambda s, e, f: _failure(s._status_body(e)),
        "conflict": lambda s, e, f: _conflict(s._status_body(e)),
        "causes": lambda s, e, f: _causes(s._status_body(e)),
        "budget": lambda s, e, f: _budget(s._status_body(e)),
        "token": lambda s, e, f: _token(f["body"]),
        "change": lambda s, e, f: changed(s.analysis, e),
        "taints": lambda s, e, f: detail.taints(f["body"]),
        "scheduling": lambda s, e, f: detail.scheduling(f["body"]),
        "conditions": lambda s, e, f: detail.conditions(f["body"]),
        "finalizers": lambda s, e, f: detail.finalizers(f["body"]),
        "owners": lambda s, e, f: detail.owners(f["body"]),
        "aggregated": lambda s, e, f: detail.aggregated(f["body"]),
        "annotations": lambda s, e, f: detail.annotated(f["body"]),
        "phase": lambda s, e, f: detail.phase(f["body"]),
        "replicas": lambda s, e, f: detail.replicas(f["body"]),
        "disruptions": lambda s, e, f: detail.disruptions(f["body"]),
        "pinned": lambda s, e, f: detail.pinned(f["body"]),
        "elector": lambda s, e, f: spoken(e.component.removesuffix("/leader-election")),
        "sender": lambda s, e, f: "" if e.component == "kubectl" else f"{spoken(e.component)}: ",
        "refused": lambda s, e, f: s._refusal(e).what,
        "allowed": lambda s, e, f: _allowed(s._refusal(e).allowed),
        "code": lambda s, e, f: _code(e.status),
        "holder": lambda s, e, f: _holder(f["body"], s.analysis.response_body(e).value),
        "transport": lambda s, e, f: streams.transport(e),
        "outcome": lambda s, e, f: streams.outcome(e),
    }

    def _status_body(self, exchange: Exchange) -> dict[str, Any]:
        """The Status the API server answered a failure with ({} if it sent none)."""
        value = self.analysis.response_body(exchange).value
        return value if isinstance(value, dict) and value.get("kind") == "Status" else {}

    def _cause(self, exchange: Exchange) -> str:
        return self.chains.said(exchange)

    def _etcd(self, exchange: Exchange) -> tuple[dict[str, Any] | None, Decoded | None]:
        """The etcd key the exchange reads or writes, and for a write the revision; and
        what etcd stored there, decoded, when the recording has it."""
        info = exchange.info
        if not info.is_resource_request or info.verb not in STORED:
            return None, None
        builtin = _builtin(info.group, info.resource)
        if info.resource == "serviceaccounts" and info.subresource == "token":
            note = "a TokenRequest: the token is signed, nothing is stored"
            return {"key": None, "note": note}, None
        if info.dry_run:
            return {"key": None, "note": "a dry run: nothing is stored"}, None
        response = self.analysis.response_body(exchange).value
        ref = self.analysis.ref(exchange, response if info.verb in WRITES else None)
        if not ref.name:
            prefix = etcd_key(ref.with_name(""), builtin=builtin)
            return ({"prefix": prefix, "read": info.verb in READS} if prefix else None), None
        key = etcd_key(ref, builtin=builtin)
        if key is None:
            return {"key": None, "note": "not stored: read live from the components"}, None
        record: dict[str, Any] = {"key": key}
        stored = None
        revision = resource_version(response)
        if info.verb in WRITES and exchange.status is not None and exchange.status < 300:
            if revision is not None:
                record["revision"] = revision
                landed, stored = self._landed(key, revision)
                record.update(landed)
            if info.subresource == "binding":
                record["note"] = "the binding sets the pod's spec.nodeName: the pod is written"
        return record, stored

    def _landed(self, key: str, revision: int) -> tuple[dict[str, Any], Decoded | None]:
        """What etcd itself recorded for this write, when the recording has etcd's view:
        the stored object, decoded (protobuf for built-in kinds, JSON for custom ones)."""
        if not self.analysis.etcd_recorded:
            return {}, None
        found = self.analysis.stored(key, revision)
        if found is None:
            note = "etcd recorded no change of this key at this revision"
            return {"stored": None, "note": note}, None
        change, decoded = found
        if change.deleted:  # a final DELETE: the key is gone from etcd at this revision
            return {"stored": {"format": "deleted", "value": None, "time": change.time}}, None
        stored = {"format": decoded.format, "value": _plain(decoded), "time": change.time}
        return {"stored": stored}, decoded


@dataclass(slots=True)
class _Started:
    """A client's LISTs and WATCHes of one resource, as `Summaries.saw` took them."""

    latest: Exchange
    decided: OrderedDict[str, bool] = field(default_factory=OrderedDict)  # the last DECIDED


DECIDED = 64  # exchanges `Summaries.saw` remembers its answer for, per client and resource


def _events(exchange: Exchange) -> int | str:
    """How many events a watch had; an audit log holds none of them: not 0, not recorded."""
    events = exchange.watch_events()
    if not events and exchange.audit_only:
        return "no recorded"
    return len(events)


def _open_at(exchange: Exchange, when: float) -> bool:
    """Whether `exchange` was still open at `when` (no end yet, or an end after it)."""
    return exchange.end is None or exchange.end.time > when


def _squeezed(text: str) -> str:
    """`text` with each run of whitespace one space and none at its ends: `text` itself
    when there is nothing to squeeze (ASCII and printable, so its only whitespace is the
    space, never two together nor at an end), as in nearly every filled template."""
    if (
        text.isascii()
        and text.isprintable()
        and "  " not in text
        and text[:1] != " "
        and text[-1:] != " "
    ):
        return text
    return " ".join(text.split())


@cache
def _builtin(group: str, resource: str) -> bool:
    """Whether the built-in table knows the resource (its etcd prefix is the server's own)."""
    return Resources.builtin().get(group, resource) is not None


def _object(kind: str, namespace: str, name: str, resource: str) -> str:
    if not name:
        return f"{resource or kind} in {namespace}" if namespace else f"all {resource or kind}"
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _namespace_of(group: str, resource: str, meta: dict[str, Any], namespace: str) -> str:
    """The object's namespace: none for a Namespace (its path names it twice over)."""
    if not group and resource == "namespaces":
        return ""
    return str(meta.get("namespace") or namespace)


def _what(thing: str, subresource: str) -> str:
    """`Deployment default/web's status`: the object, or its subresource."""
    return f"{thing}'s {subresource}" if subresource else thing


def _failure(status: dict[str, Any]) -> str:
    """What a Status says went wrong, without its leading `<resource> "<name>" is forbidden: `."""
    message = str(status.get("message") or status.get("reason") or "no Status recorded")
    head, _, rest = message.partition(" is forbidden: ")
    return rest if rest and head else message


def _conflict(status: dict[str, Any]) -> str:
    """Why a write conflicted: a stale resourceVersion, a name taken, or the manager's fields."""
    message = str(status.get("message") or "")
    if "the object has been modified" in message:
        return (
            "the resourceVersion it sent is stale (the object changed since it read it);"
            " it must read again and retry"
        )
    if message.endswith("already exists"):
        return "it already exists"
    return message or "no Status recorded"


def _causes(status: dict[str, Any]) -> str:
    """Which field broke which rule, from the Status's details.causes (else its message)."""
    details = status.get("details")
    found = details.get("causes") if isinstance(details, dict) else None
    said = [
        f"{c.get('field') or '?'}: {c.get('message') or c.get('reason') or '?'}"
        for c in found or ()
        if isinstance(c, dict)
    ]
    return "; ".join(said) or _failure(status)


_BUDGET = re.compile(r"disruption budget (\S+) (.*)")


def _budget(status: dict[str, Any]) -> str:
    """Which PodDisruptionBudget refused an eviction, and why, from the Status's causes."""
    details = status.get("details")
    for cause in (details.get("causes") if isinstance(details, dict) else None) or ():
        found = _BUDGET.search(str(cause.get("message") or "")) if isinstance(cause, dict) else None
        if found:
            return f"PodDisruptionBudget {found[1]} ({found[2]})"
    return f"a PodDisruptionBudget ({_failure(status)})"


def _token(body: Any) -> str:
    """What a TokenRequest asks for: the pod it is bound to, its audiences, its lifetime."""
    spec = body.get("spec") if isinstance(body, dict) else None
    if not isinstance(spec, dict):
        return ""
    said = []
    bound = spec.get("boundObjectRef")
    if isinstance(bound, dict) and bound.get("name"):
        said.append(f"bound to {bound.get('kind') or 'object'} {bound['name']}")
    audiences = spec.get("audiences")
    if isinstance(audiences, list) and audiences:
        said.append("audience " + ", ".join(str(a) for a in audiences))
    if spec.get("expirationSeconds"):
        said.append(f"expires in {spec['expirationSeconds']} s")
    return f" ({'; '.join(said)})" if said else ""


def _third_person(verb: str) -> str:
    """`watches`, `patches`, `creates`: a verb as the templates say it of a component."""
    return f"{verb}es" if verb.endswith(("ch", "sh", "s", "x")) else f"{verb}s"


def _listed(kind: str, namespace: str, name: str) -> str:
    """What a LIST or WATCH covers: one object (by a field selector), or every one."""
    if name:
        return _object(kind, namespace, name, "")
    return f"every {kind} in {namespace}" if namespace else f"every {kind}"


def _binding_target(body: Any) -> str:
    target = body.get("target") if isinstance(body, dict) else None
    return str(target.get("name", "?")) if isinstance(target, dict) else "?"


def _involved(body: Any, answer: Any = None) -> str:
    """What an Event is about: from the body sent, else (a PATCH's) from the answer."""
    about = involved_of(body)
    if about is None and isinstance(answer, dict) and answer.get("kind") == "Event":
        about = involved_of(answer)
    if about is None or not about.get("name"):
        return "something"
    return _object(
        str(about.get("kind", "")), str(about.get("namespace", "")), str(about["name"]), ""
    )


def _matches(match: dict[str, Any], facts: dict[str, Any]) -> bool:
    # loops, not all() and any() over generators: a generator is a function made, called
    # and freed, and a new choice (`_rule`) tries a hundred rules
    for key, wanted in match.items():  # noqa: SIM110
        if not _holds(key, wanted, facts):
            return False
    return True


def _holds(key: str, wanted: Any, facts: dict[str, Any]) -> bool:
    value = facts.get(key)
    if key == "param":
        for name, want in wanted.items():  # noqa: SIM110
            if not _param(facts["param"], name, want):
                return False
        return True
    if key == "status":
        return _status(value, wanted)
    if key == "path":
        return any([_path(str(value), str(p)) for p in _many(wanted)])
    if key == "component":
        return any([_component(str(value), str(c)) for c in _many(wanted)])
    if key == "manager" and isinstance(wanted, str) and wanted.endswith("*"):
        return str(value).startswith(wanted[:-1])
    for w in _many(wanted):  # noqa: SIM110
        if value == w:
            return True
    return False


def _many(wanted: Any) -> Iterable[Any]:
    return wanted if isinstance(wanted, list) else [wanted]


def _rv(params: dict[str, str]) -> str:
    """The resourceVersion asked for: none is "now"; an unknown query, not recorded."""
    if UNKNOWN in params:
        return "(not recorded)"
    return params.get("resourceVersion") or "now"


def _param(params: dict[str, str], name: str, want: Any) -> bool:
    if UNKNOWN in params:  # neither present nor absent: no rule on it holds
        return False
    if want == "*":
        return name in params
    if want == "-":
        return name not in params
    return params.get(name) == str(want)


def _status(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, str) and wanted.endswith("xx"):
        return value is not None and str(value)[0] == wanted[0]
    return bool(value == wanted)


def _path(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _component(component: str, wanted: str) -> bool:
    if wanted.endswith("/*"):
        return component.startswith(wanted[:-1])
    return component == wanted


# -- who acted, and for whom ----------------------------------------------------------------
# the rules of access reviews: their question says whom it is about (the user --as names)
CHECKS = frozenset({"access-review", "rules-review", "kubectl-auth-can-i"})


def _impersonating(exchange: Exchange) -> str:
    """`, as system:serviceaccount:shop:app (impersonated)`: whom the sender acted for, from
    its audit Event's impersonatedUser, else its Impersonate-User header."""
    audit = exchange.request.audit or {}
    found = audit.get("impersonatedUser")
    name = str(found.get("username") or "") if isinstance(found, dict) else ""
    name = name or exchange.request_header("impersonate-user")
    if not name:
        return ""
    sender = user_name(exchange.request.identity.user)
    by = f" by {sender}" if sender else ""
    return f", acting as {name} (impersonated{by}: the API server authorized it as {name})"


# -- kubectl apply, as its body says it -------------------------------------------------
def _applies(component: str) -> bool:
    """Whether `component` may run a client-side apply: kubectl, a person, a third party (Argo
    CD applies as kubectl does); never Kubernetes' own controllers, whose objects carry the
    annotation when they copy it (a ControllerRevision, its owner's)."""
    return component == "kubectl" or person_component(component) or third_party(component)


def _applied(body: Any) -> bool:
    """Whether a write's body carries kubectl apply's last-applied-configuration: a client-side
    apply's create, or its three-way patch (which always sets the annotation anew)."""
    meta = body.get("metadata") if isinstance(body, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return isinstance(annotations, dict) and isinstance(annotations.get(LAST_APPLIED), str)


# -- leader election --------------------------------------------------------------------
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"  # Endpoints and ConfigMap locks
# (staging/src/k8s.io/client-go/tools/leaderelection/resourcelock/interface.go
# LeaderElectionRecordAnnotationKey)
LEADER_LEASES = frozenset(  # the components' default lock names (--leader-elect-resource-name)
    {"kube-controller-manager", "kube-scheduler", "cloud-controller-manager"}
)


def _leader_lock(info: RequestInfo, meta: dict[str, Any], body: Any) -> bool:
    """Whether an object is a leader-election lock: a Lease held by a holderIdentity (not a
    node's heartbeat in kube-node-lease, not an API server's identity Lease), a component's
    Lease by its default name, any other Lease when the record holds no body (a Metadata
    log's: a Lease outside kube-node-lease is some component's lock), or an Endpoints or
    ConfigMap with the leader annotation."""
    resource, namespace = info.resource, info.namespace
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not annotations and isinstance(body, dict):
        found = body.get("metadata")
        annotations = found.get("annotations") if isinstance(found, dict) else None
    if resource in ("endpoints", "configmaps"):
        return isinstance(annotations, dict) and LEADER_ANNOTATION in annotations
    if resource != "leases" or namespace == "kube-node-lease":
        return False
    name = str(meta.get("name") or info.name)
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if isinstance(labels, dict) and "apiserver.kubernetes.io/identity" in labels:
        return False
    if namespace == "kube-system" and name in LEADER_LEASES:
        return True
    if name.startswith(("apiserver-", "kube-apiserver-")):  # the API servers' identity Leases
        return False
    spec = body.get("spec") if isinstance(body, dict) else None
    if not isinstance(body, dict):  # no body recorded: outside kube-node-lease, a lock
        return bool(name)
    return isinstance(spec, dict) and bool(spec.get("holderIdentity"))


def _holder(body: Any, answer: Any) -> str:
    """Who holds a leader-election lock: a Lease's spec.holderIdentity, or the holderIdentity
    of the leader annotation of an Endpoints or ConfigMap."""
    for obj in (answer, body):
        if not isinstance(obj, dict):
            continue
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("holderIdentity"):
            return str(spec["holderIdentity"])
        meta = obj.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        record = annotations.get(LEADER_ANNOTATION) if isinstance(annotations, dict) else None
        if isinstance(record, str):
            try:
                said = json.loads(record)
            except ValueError:
                continue
            if isinstance(said, dict) and said.get("holderIdentity"):
                return str(said["holderIdentity"])
    return "a holder the log does not show"


# -- refusals ---------------------------------------------------------------------------
def _allowed(reason: str) -> str:
    """What the authorizer said when it allowed a request an admission plugin then refused."""
    if not reason:
        return "the authorizer allowed it"
    if reason == "allowed":
        return "the authorizer allowed it (authorization.k8s.io/decision: allow)"
    return f"the authorizer allowed it ({reason})"


def _code(status: int | None) -> str:
    """`forbidden (403)`, `invalid (422)`, `refused (400)`: a refusal's code in words."""
    words = {403: "forbidden", 422: "invalid", 429: "too many requests"}
    return f"{words.get(status or 0, 'refused')} ({status})"
