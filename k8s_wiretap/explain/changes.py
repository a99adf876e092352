"""What a write changed, in words: the `{change}` of the explanation rules.

`kubectl set image` sends a strategic merge patch that names a container and an image; what
it changed is "container web's image nginx:1.25 → nginx:1.27". The old value comes from the
object as last seen before the write (the history, `explain/history.py`, or the object the
patch replay started from, `explain/patches.py`), the new one from the write's response; a
value the recording does not hold is not said (without the object before, only the new
values the request names are).

What is said, by request:

- a merge or strategic merge patch: the fields that differ between the object before and
  after, among those the patch names (labels and annotations as `key=value`, a container's
  fields by the container's name, an item of a list merged by name added or removed whole,
  a status condition by its type, a boolean that was unset as false);
- a JSON patch: each operation in words (adds, replaces, removes, moves, copies, tests),
  with what it changed; `kubectl rollout undo`'s patch of a Deployment's template is "back
  to revision N's template", N the `deployment.kubernetes.io/revision` of the ReplicaSet
  whose template it restores (staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollback.go);
- an update (`kubectl replace`): every field that differs from the object before, but those
  the API server sets itself and the status;
- a delete: its propagationPolicy (DeleteOptions body or query) and what it means;
- a SelfSubjectAccessReview (`kubectl auth can-i`): whom and what was asked, and the answer.

A server-side apply is `apply_fields.py`'s: it is said field by field there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.redact import is_placeholder
from k8s_wiretap.decode.diff import diff
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.patches import predecessor
from k8s_wiretap.kube.agents import user_name
from k8s_wiretap.kube.fields import LAST_APPLIED, SERVER_METADATA, WRITTEN_INTO
from k8s_wiretap.kube.media import patch_type
from k8s_wiretap.kube.refs import metadata_of, resource_version, uid_of
from k8s_wiretap.wire.words import counted

__all__ = [
    "Changed",
    "access_review",
    "change",
    "changed",
    "changes_between",
    "deletion",
    "field_path",
    "leaves",
    "under",
]

Path = tuple[str | int, ...]
REVISION = "deployment.kubernetes.io/revision"  # on each ReplicaSet of a Deployment
TEMPLATE_HASH = "pod-template-hash"  # the ReplicaSet's label kubectl drops when it rolls back
SAID = 5  # changes said at most; the rest are counted
LONG = 60  # characters of a value said at most
_SERVER_SET = frozenset({*SERVER_METADATA, "managedFields"})
_ABSENT = object()

PROPAGATION = {  # what the garbage collector does with what the object owns
    "Background": "it goes now, what it owns after",
    "Foreground": "it stays until what it owns is deleted",
    "Orphan": "what it owns stays, orphaned",
}


def changed(analysis: Analysis, exchange: Exchange) -> str:
    """What `exchange` (a write) changed, in words, from what `analysis` holds."""
    info = exchange.info
    body = analysis.request_body(exchange)
    request = body.value if body.ok else None
    response = analysis.response_body(exchange).value
    if info.verb == "delete":
        return deletion(request, info.param("propagationPolicy"), info.param("orphanDependents"))
    if info.resource in ACCESS_REVIEWS:
        return access_review(request, response, _asker(exchange), info.resource)
    if info.resource == "selfsubjectrulesreviews":
        return rules_review(request, response, _asker(exchange))
    if info.resource == "tokenreviews":
        return token_review(response)
    after = response if _is_object(response) else None
    before = _before(analysis, exchange, after)
    kind = patch_type(exchange.request_header("content-type")) or ""
    revision = _revision(analysis, exchange, request) if _undoes(exchange, request) else None
    return change(exchange, request, kind, before, after, revision)


def change(
    exchange: Exchange,
    body: Any,
    patch: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    revision: str | None = None,
) -> str:
    """The change of a patch or an update in words: `body` is the decoded request, `patch`
    its patch type ("" for an update), `before` the object as last seen before the write
    (None if unknown), `after` the object the write returned (None if it returned none),
    `revision` the revision a rollback restores."""
    subresource = exchange.info.subresource
    if exchange.info.verb == "update":
        return _update(body, before, after, subresource)
    if patch == "json" and isinstance(body, list):
        return _json_patch(body, before, after, revision, subresource)
    if patch in ("merge", "strategic", "") and isinstance(body, dict):
        # a patch whose type the record does not say (an audit log's) is an object too:
        # a merge, strategic or apply patch names the fields it sets as they do
        named = _written_into(exchange, list(_named(body, ())))
        return _said(_differences(before, after, named, subresource), named, body)
    if body is None:
        return "its body is not recorded (an audit log below the Request level logs none)"
    return f"a {patch or 'patch'} of {type(body).__name__} the wiretap does not read"


def deletion(body: Any, policy: str | None = None, orphan: str | None = None) -> str:
    """A delete's propagationPolicy (its DeleteOptions body, else the query) in words."""
    options = body if isinstance(body, dict) else {}
    chosen = options.get("propagationPolicy") or policy
    if not chosen and (options.get("orphanDependents") is True or orphan == "true"):
        chosen = "Orphan"
    if not chosen:
        return "no propagationPolicy: the resource's default"
    meaning = PROPAGATION.get(str(chosen), "a policy this release does not know")
    return f"propagationPolicy {chosen}: {meaning}"


# the access reviews: each asks whether a user may do something, and stores nothing
ACCESS_REVIEWS = frozenset(
    {"selfsubjectaccessreviews", "subjectaccessreviews", "localsubjectaccessreviews"}
)


def access_review(
    body: Any, response: Any, user: str = "", resource: str = "selfsubjectaccessreviews"
) -> str:
    """Whom an access review asks about (a SelfSubjectAccessReview: you, or the user kubectl
    impersonates with --as; a SubjectAccessReview or LocalSubjectAccessReview: the user its
    spec names), what it asked, and the answer in its response's status."""
    spec = body.get("spec") if isinstance(body, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    if resource != "selfsubjectaccessreviews":
        user = str(spec.get("user") or "") or (
            f"group {', '.join(str(g) for g in spec['groups'])}"
            if isinstance(spec.get("groups"), list) and spec["groups"]
            else "a user the log does not show"
        )
    asked = f"{user or 'you'} may " + _asked(spec)
    status = response.get("status") if isinstance(response, dict) else None
    if not isinstance(status, dict) or ("allowed" not in status and "denied" not in status):
        return f"{asked}: no answer recorded"
    answer = "yes (allowed)" if status.get("allowed") else "no (denied)"
    reason = status.get("reason") or status.get("evaluationError")
    return f"{asked}: {answer}" + (f", {reason}" if reason else "")


def _asker(exchange: Exchange) -> str:
    """Whom a self review asks about: the user impersonated (kubectl's --as), else "" (you,
    kubectl's user) for kubectl, else the user the record names."""
    audit = exchange.request.audit or {}
    found = audit.get("impersonatedUser")
    impersonated = str(found.get("username") or "") if isinstance(found, dict) else ""
    if impersonated or exchange.request_header("impersonate-user"):
        return impersonated or exchange.request_header("impersonate-user")
    if exchange.component == "kubectl":
        return ""
    return user_name(exchange.request.identity.user)


def rules_review(body: Any, response: Any, user: str = "") -> str:
    """What a SelfSubjectRulesReview asks (which actions you may take in a namespace) and
    how many rules its answer lists."""
    spec = body.get("spec") if isinstance(body, dict) else None
    where = spec.get("namespace") if isinstance(spec, dict) else None
    asked = f"what {user or 'you'} may do" + (f" in namespace {where}" if where else "")
    status = response.get("status") if isinstance(response, dict) else None
    if not isinstance(status, dict):
        return f"{asked}: no answer recorded"
    rules = status.get("resourceRules")
    count = len(rules) if isinstance(rules, list) else 0
    incomplete = ", incomplete" if status.get("incomplete") else ""
    return f"{asked}: {counted(count, 'resource rule')}{incomplete}"


def token_review(response: Any) -> str:
    """A TokenReview's answer: whether the token authenticates, and as whom."""
    status = response.get("status") if isinstance(response, dict) else None
    if not isinstance(status, dict):
        return "no answer recorded"
    if not status.get("authenticated"):
        error = status.get("error")
        return "not authenticated" + (f" ({error})" if error else "")
    user = status.get("user")
    name = user.get("username") if isinstance(user, dict) else None
    return f"authenticated as {name}" if name else "authenticated"


def _asked(spec: dict[str, Any]) -> str:
    """`create deployments.apps in namespace shop`, or a non-resource URL's verb and path."""
    attributes = spec.get("resourceAttributes")
    if isinstance(attributes, dict):
        resource = str(attributes.get("resource") or "*")
        if attributes.get("subresource"):
            resource += f"/{attributes['subresource']}"
        if attributes.get("group"):
            resource += f".{attributes['group']}"
        if attributes.get("name"):
            resource += f" {attributes['name']}"
        where = attributes.get("namespace")  # none: cluster-wide, or in every namespace
        scope = f" in namespace {where}" if where else ""
        return f"{attributes.get('verb') or '*'} {resource}{scope}"
    other = spec.get("nonResourceAttributes")
    if isinstance(other, dict):
        return f"{other.get('verb') or '*'} {other.get('path') or '/'}"
    return "something the request does not say"


# -- the object before, and the revision a rollback restores -------------------------------
def _before(analysis: Analysis, exchange: Exchange, after: Any) -> dict[str, Any] | None:
    """The object as last seen before the write: the replay's start for a patch (which
    takes a concurrent write into account, and a scale subresource as its Scale), else the
    history's latest observation, or the version just below the write's when that one is
    stale."""
    if exchange.info.verb == "patch":
        replay = analysis.replay(exchange)
        return replay.before if replay is not None and replay.before else None
    history = analysis.history
    ref = analysis.ref(exchange, after)
    found = history.before(ref, exchange.time, uid_of(after))
    if found is not None and history.stale(ref, found, resource_version(after)):
        found = predecessor(history, ref, resource_version(after), uid_of(after))
    return found.object if found is not None and found.object else None


def _undoes(exchange: Exchange, body: Any) -> bool:
    """kubectl rollout undo's JSON patch of a Deployment's template."""
    return (
        exchange.request_header("kubectl-command") == "kubectl rollout undo"
        and exchange.info.resource == "deployments"
        and _template_restored(body) is not None
    )


def _template_restored(body: Any) -> dict[str, Any] | None:
    for op in body if isinstance(body, list) else ():
        if isinstance(op, dict) and (op.get("op"), op.get("path")) == ("replace", "/spec/template"):
            value = op.get("value")
            return value if isinstance(value, dict) else None
    return None


def _revision(analysis: Analysis, exchange: Exchange, body: Any) -> str | None:
    """The revision of the Deployment's ReplicaSet whose template (without its
    pod-template-hash label) the rollback patch restores, as last seen before it."""
    template = _template_restored(body)
    info = exchange.info
    history = analysis.history
    for ref in list(history):
        if (ref.group, ref.resource, ref.namespace) != ("apps", "replicasets", info.namespace):
            continue
        seen = history.before(ref, exchange.time)
        replicaset = seen.object if seen is not None else {}
        if _owned_by(replicaset, "Deployment", info.name) and _restores(replicaset, template):
            annotations = metadata_of(replicaset).get("annotations") or {}
            if annotations.get(REVISION):
                return str(annotations[REVISION])
    return None


def _owned_by(obj: dict[str, Any], kind: str, name: str) -> bool:
    owners = metadata_of(obj).get("ownerReferences") or []
    return any(
        isinstance(o, dict) and o.get("kind") == kind and o.get("name") == name for o in owners
    )


def _restores(replicaset: dict[str, Any], template: Any) -> bool:
    """Whether `template` is the ReplicaSet's pod template without the hash label."""
    own = (replicaset.get("spec") or {}).get("template")
    if not isinstance(own, dict):
        return False
    own = json.loads(json.dumps(own))
    labels = metadata_of(own).get("labels")
    if isinstance(labels, dict):
        labels.pop(TEMPLATE_HASH, None)
    return bool(_pruned(own) == _pruned(template))


def _pruned(value: Any) -> Any:
    """`value` without empty members (what one serializer omits and another writes)."""
    if isinstance(value, dict):
        kept = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [], "")}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


# -- from one version of an object to the next (`history`) --------------------------------
@dataclass(frozen=True, slots=True)
class Changed:
    """One field that differs between two versions of an object: where (`path`, dotted,
    a named item as `[name]`, a condition as `<Type>`), from what to what (`was_set`,
    `is_set`: whether it had a value at all), and in words."""

    path: str
    old: Any
    new: Any
    was_set: bool
    is_set: bool
    words: str

    @property
    def how(self) -> str:
        """set, changed or removed."""
        return "set" if not self.was_set else "removed" if not self.is_set else "changed"

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"path": self.path, "how": self.how, "words": self.words}
        if self.was_set:
            record["old"] = self.old
        if self.is_set:
            record["new"] = self.new
        return record


_VERSIONING = frozenset({"resourceVersion", "managedFields"})  # change with every write


def changes_between(before: dict[str, Any], after: dict[str, Any]) -> list[Changed]:
    """Every field that differs from `before` to `after` — status and the metadata the
    server sets included (generation, deletionTimestamp), but the resourceVersion and
    managedFields, which every write changes."""
    before, after = _by_key(before), _by_key(after)
    found: list[Changed] = []
    for entry in diff(before, after):
        path = _parts(entry["path"], before, after)
        if path[:1] == ("metadata",) and len(path) > 1 and path[1] in _VERSIONING:
            continue
        for d in _leaves(path, entry.get("from", _ABSENT), entry.get("to", _ABSENT)):
            old, new = d.old, d.new
            found.append(
                Changed(
                    _dotted(d.path),
                    None if old is _ABSENT else old,
                    None if new is _ABSENT else new,
                    old is not _ABSENT,
                    new is not _ABSENT,
                    _words(d),
                )
            )
    return found


def leaves(obj: Any) -> dict[str, Any]:
    """Every leaf of `obj` by its path as `Changed.path` writes it (a list of scalars, or
    an empty map or list, is one leaf)."""
    found: dict[str, Any] = {}

    def walk(path: Path, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, member in value.items():
                walk((*path, key), member)
        elif isinstance(value, list) and value and any(isinstance(v, dict) for v in value):
            for index, member in enumerate(value):
                walk((*path, index), member)
        else:
            found[_dotted(path)] = value

    walk((), _by_key(obj))
    return found


def field_path(text: str) -> str:
    """A field path as people write it, as `Changed.path` writes it: a named item as
    `[web]` (`[name=web]` taken too)."""
    return text.strip().removeprefix(".").replace("[name=", "[")


def under(path: str, field: str) -> bool:
    """Whether `path` is `field` or inside it."""
    return path == field or path.startswith((f"{field}.", f"{field}["))


# -- what differs ------------------------------------------------------------------------
class _Difference:
    """One field that changed: where, from what (`_ABSENT` if it was not set) to what."""

    __slots__ = ("new", "old", "path")

    def __init__(self, path: Path, old: Any, new: Any) -> None:
        self.path, self.old, self.new = path, old, new


def _differences(
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    named: list[Path] | None,
    subresource: str = "",
) -> list[_Difference] | None:
    """The fields that differ from `before` to `after` (None if either is unknown), among
    those under a path of `named` (every field when None), but what the server sets."""
    if before is None or after is None:
        return None
    before, after = _by_key(before), _by_key(after)
    found = []
    for entry in diff(before, after):
        path = _parts(entry["path"], before, after)
        if _server_set(path, subresource) or (named is not None and not _under(path, named)):
            continue
        found += _leaves(path, entry.get("from", _ABSENT), entry.get("to", _ABSENT))
    return sorted(found, key=lambda d: d.path[:1] == ("metadata",))  # what it is about first


def _by_key(value: Any, key: str = "") -> Any:
    """`value` with each list of named items as a map by `[name]`, and each list of
    conditions as a map by `<type>`: an item is compared with the item of its name, however
    the list was ordered or grew."""
    if isinstance(value, dict):
        return {k: _by_key(v, k) for k, v in value.items()}
    if not isinstance(value, list) or not value:
        return value
    items = [_by_key(v) for v in value]
    if all(_has_name(i) for i in items) and len({i["name"] for i in items}) == len(items):
        return {f"[{i['name']}]": i for i in items}
    typed = all(isinstance(i, dict) and isinstance(i.get("type"), str) for i in items)
    if key == "conditions" and typed and len({i["type"] for i in items}) == len(items):
        return {f"<{i['type']}>": i for i in items}
    return items


def _leaves(path: Path, old: Any, new: Any) -> list[_Difference]:
    """A member added or removed whole (a label map where there was none), leaf by leaf;
    but an item of a list (a container, a condition) added or removed is said whole."""
    if old is _ABSENT and isinstance(new, dict) and new and not _item(path):
        return [d for k, v in new.items() for d in _leaves((*path, k), _ABSENT, v)]
    if new is _ABSENT and isinstance(old, dict) and old and not _item(path):
        return [d for k, v in old.items() for d in _leaves((*path, k), v, _ABSENT)]
    return [_Difference(path, old, new)]


def _condition(value: Any) -> tuple[Any, Any] | None:
    return None if not isinstance(value, dict) else (value.get("status"), value.get("reason"))


def _item(path: Path) -> bool:
    """Whether `path` names an item of a list by its name (`[web]`) or type (`<Ready>`)."""
    return bool(path) and isinstance(path[-1], str) and path[-1][:1] in ("[", "<")


def _server_set(path: Path, subresource: str) -> bool:
    if path[:1] == ("status",):  # the main resource's strategy keeps the status as it was
        return not subresource
    return path[:1] == ("metadata",) and len(path) > 1 and path[1] in _SERVER_SET


def _under(path: Path, named: list[Path]) -> bool:
    """Whether `path` is inside a named one, or contains one (a map added whole)."""
    return any(path[: len(n)] == n or n[: len(path)] == path for n in named)


def _parts(pointer: str, before: Any, after: Any, *, added: bool = False) -> Path:
    """A JSON pointer as parts; a list index as its item's name when the item has one
    (`[web]`), a condition's as its type (`<Ready>`). `added`: the pointer is where an
    `add` inserts, so its item is the one after it, not the one it pushed along."""
    parts: list[str | int] = []
    here: list[Any] = [after, before] if added else [before, after]
    for raw in pointer.split("/")[1:]:
        key = raw.replace("~1", "/").replace("~0", "~")
        if any(isinstance(h, list) for h in here) and key.isdigit():
            index = int(key)
            items = [h[index] for h in here if isinstance(h, list) and index < len(h)]
            name = next((i["name"] for i in items if _has_name(i)), None)
            kind = next((i["type"] for i in items if isinstance(i, dict) and "type" in i), None)
            if name is not None:
                parts.append(f"[{name}]")
            elif parts[-1:] == ["conditions"] and kind is not None:
                parts.append(f"<{kind}>")
            else:
                parts.append(index)
            here = items
        else:
            parts.append(key)
            here = [h.get(key) if isinstance(h, dict) else None for h in here]
    return tuple(parts)


def _has_name(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("name"), str)


# -- what the request names ----------------------------------------------------------------
def _named(body: dict[str, Any], path: Path) -> Iterator[Path]:
    """The paths a merge or strategic merge patch sets (a map by its members, anything
    else whole); items of a list merged by name as `[name]`."""
    for key, value in body.items():
        if key.startswith("$"):  # $setElementOrder, $retainKeys, $patch: directives
            continue
        here = (*path, key)
        if isinstance(value, dict) and value:
            yield from _named(value, here)
        elif isinstance(value, list) and value and all(_has_name(i) for i in value):
            for item in value:
                yield from _named_item(item, (*here, f"[{item['name']}]"))
        else:
            yield here


def _named_item(item: dict[str, Any], path: Path) -> Iterator[Path]:
    members = {k: v for k, v in item.items() if k != "name"}
    if not members or item.get("$patch") == "delete":
        yield path
    else:
        yield from _named(members, path)


def _written_into(exchange: Exchange, named: list[Path]) -> list[Path]:
    """The paths a patch names, and where the server writes a write-only one (a Secret's
    `stringData.k` lands in `data.k`, and only there: kube/fields.py, WRITTEN_INTO)."""
    info = exchange.info
    into = WRITTEN_INTO.get((info.group, info.resource), {}) if not info.subresource else {}
    moved = [(into[str(p[0])], *p[1:]) for p in named if p and p[0] in into]
    return named + moved


def _requested(body: dict[str, Any], path: Path = ()) -> Iterator[_Difference]:
    """What a merge patch sets, from the request alone (no old values: none are known)."""
    for named in _named(body, path):
        value: Any = body
        for part in named:
            value = _member(value, part)
        yield _Difference(named, _ABSENT, _ABSENT if value is None else value)


def _member(value: Any, part: str | int) -> Any:
    if isinstance(part, str) and part.startswith("[") and isinstance(value, list):
        return next((i for i in value if _has_name(i) and f"[{i['name']}]" == part), None)
    if isinstance(part, str) and part.startswith("<") and isinstance(value, list):
        return next(
            (i for i in value if isinstance(i, dict) and f"<{i.get('type')}>" == part), None
        )
    return value.get(part) if isinstance(value, dict) else None


# -- in words ------------------------------------------------------------------------------
# what names the object a body is about, not what it sets (an apply's configuration has them)
_RESTATED = frozenset({("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace")})


def _said(found: list[_Difference] | None, named: list[Path], body: dict[str, Any]) -> str:
    """The differences in words; the request's own values when the object before is not
    known; `nothing changed` when it is and nothing differs."""
    if found is None:  # an apply's whole configuration restates what the object is: not said
        said = [d for d in _requested(body) if d.path not in _RESTATED]
        return _joined([_words(d, known=False) for d in said])
    if not found:
        return "nothing changed (the object already said so)"
    return _joined([_words(d) for d in found])


def _update(
    body: Any, before: dict[str, Any] | None, after: dict[str, Any] | None, subresource: str
) -> str:
    found = _differences(before, after, None, subresource)
    if found is None:
        what = (
            "the object before it is not in the recording"
            if before is None
            else "the server answered with no object"
        )
        return f"the whole object sent ({what})" if isinstance(body, dict) else what
    if not found:
        return "nothing changed (the object sent is the object it was)"
    return _joined([_words(d) for d in found])


def _json_patch(
    ops: list[Any],
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    revision: str | None,
    subresource: str,
) -> str:
    """Each operation in words; a rollback's template as the revision it goes back to."""
    said = []
    for op in ops:
        if not isinstance(op, dict):
            continue
        added = op.get("op") == "add"
        path = _pointer_path(str(op.get("path", "")), before, after, added=added)
        if revision is not None and path == ("metadata", "annotations"):
            found = _differences(before, after, [path], subresource)
            if found == []:  # kubectl keeps the Deployment's own annotations: say them if changed
                continue
        if revision is not None and path == ("spec", "template"):
            found = _differences(before, after, [path], subresource)
            inner = _joined([_words(d) for d in found or ()]) if found else ""
            back = f"back to revision {revision}'s template"
            said.append(f"{back} ({inner})" if inner else back)
            continue
        said.append(_operation(op, path, before, after, subresource))
    return _joined([s for s in said if s]) or "no operations"


def _operation(
    op: dict[str, Any],
    path: Path,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    subresource: str,
) -> str:
    """One JSON patch operation: what it does where, with the value it replaced when the
    object before is known (`replaces spec.replicas: 2 → 3`, `removes data.soup (was x)`)."""
    verb = str(op.get("op", "?"))
    keyed = _keyed(path)
    name = f"{keyed[0]} {keyed[1]}" if keyed else _field(path)
    key = keyed[1] if keyed else ""
    if verb in ("move", "copy"):
        source = _field(_pointer_path(str(op.get("from", "")), before, after))
        return f"{verb}s {source} to {name}"
    if verb == "test":
        return f"tests that {name} is {_value(op.get('value'), key)}"
    old = _at(before, path)
    if verb == "remove":
        return f"removes {name}" + (f" (was {_value(old, key)})" if old is not _ABSENT else "")
    new = op.get("value")
    if isinstance(new, dict | list) and isinstance(old, dict | list):
        found = _differences(before, after, [path], subresource)
        if found:
            return f"{_verbed(verb)} {name}: " + _joined([_words(d) for d in found], ", ")
    if old is _ABSENT:
        return (
            f"{_verbed(verb)} {name}={_value(new, key)}"
            if keyed
            else (f"{_verbed(verb)} {name}: {_value(new)}")
        )
    if old == new:
        return f"{_verbed(verb)} {name}, which changed nothing"
    return f"{_verbed(verb)} {name}: {_value(old, key)} → {_value(new, key)}"


def _at(obj: Any, path: Path) -> Any:
    """The value at `path` in `obj` (`_ABSENT` if `obj` is unknown or has none there)."""
    if obj is None:
        return _ABSENT
    value = obj
    for part in path:
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) and part < len(value) else None
        elif isinstance(value, dict) and part not in value:
            return _ABSENT
        else:
            value = _member(value, part)
        if value is None:
            return _ABSENT
    return value


def _verbed(op: str) -> str:
    return {"add": "adds", "replace": "replaces", "remove": "removes"}.get(op, f"{op}s")


def _pointer_path(pointer: str, before: Any, after: Any, *, added: bool = False) -> Path:
    return _parts(pointer, before, after, added=added) if pointer.startswith("/") else ()


def _joined(said: list[str], between: str = "; ") -> str:
    if len(said) > SAID:
        return between.join(said[:SAID]) + f"{between}and {len(said) - SAID} more"
    return between.join(said)


def _words(d: _Difference, *, known: bool = True) -> str:
    """One change: `label tier=front`, `container web's image a → b`, `replicas 2 → 3`.
    `known` is False when the object before is not known: only the new value is said."""
    if _item(d.path) and str(d.path[-1]).startswith("<"):
        return _condition_words(d)
    if _item(d.path) and (d.old is _ABSENT or d.new is _ABSENT):
        return _item_words(d)
    if is_placeholder(d.old) or is_placeholder(d.new):
        return _redacted_words(d, known=known)
    noun = _keyed(d.path)
    if noun is not None:
        thing, key = noun
        if d.new is _ABSENT:
            return f"{thing} {key} removed"
        if d.old is _ABSENT or not known:
            return f"{thing} {key}={_value(d.new, key)}"
        return f"{thing} {key} {_value(d.old, key)} → {_value(d.new, key)}"
    field = _field(d.path)
    old = False if d.old is _ABSENT and isinstance(d.new, bool) and known else d.old
    new = False if d.new is _ABSENT and isinstance(d.old, bool) else d.new
    if new is _ABSENT:
        return f"{field} removed" if not known else f"{field} removed (was {_value(old)})"
    if old is _ABSENT or not known:
        return f"{field} set to {_value(new)}"
    return f"{field} {_value(old)} → {_value(new)}"


def _redacted_words(d: _Difference, *, known: bool) -> str:
    """A redacted value (a Secret's) is not said, only that it changed: two placeholders
    differ when the values differ."""
    field = _field(d.path)
    if d.new is _ABSENT:
        return f"{field} removed"
    if d.old is _ABSENT or not known:
        return f"{field} set (redacted)"
    return f"{field} changed (redacted)" if d.old != d.new else f"{field} unchanged (redacted)"


def _condition_words(d: _Difference) -> str:
    """`condition Approved True (KubectlApprove)`, `condition Ready False → True`."""
    kind = str(d.path[-1])[1:-1]
    if d.new is _ABSENT:
        return f"condition {kind} removed"
    status, reason = _condition(d.new) or (None, None)
    said = f"condition {kind} {_value(status)}" + (f" ({reason})" if reason else "")
    if d.old is _ABSENT:
        return said
    was, _ = _condition(d.old) or (None, None)
    return f"condition {kind} {_value(was)} → " + said.removeprefix(f"condition {kind} ")


def _item_words(d: _Difference) -> str:
    """A named item added (with its image, for a container) or removed."""
    if d.new is _ABSENT:
        return f"{_field(d.path)} removed"
    image = d.new.get("image") if isinstance(d.new, dict) else None
    return f"{_field(d.path)} added" + (f" (image {_value(image)})" if image else "")


def _keyed(path: Path) -> tuple[str, str] | None:
    """A label or an annotation: what it is (of the pod template?), and its key."""
    if len(path) < 3 or path[-2] not in ("labels", "annotations") or path[-3] != "metadata":
        return None
    thing = "label" if path[-2] == "labels" else "annotation"
    owner = path[:-3]
    if owner == ():
        return thing, str(path[-1])
    if owner[-1:] == ("template",):
        return f"the pod template's {thing}", str(path[-1])
    return f"{_field(owner)}'s {thing}", str(path[-1])


def _field(path: Path) -> str:
    """A path as people read it: `replicas`, `container web's image`, `container web's
    resources.requests.cpu`, `spec.selector`."""
    if path == ("spec", "replicas"):
        return "replicas"
    for at, part in enumerate(path):
        if isinstance(part, str) and part.startswith("<"):
            rest = _dotted(path[at + 1 :])
            return f"condition {part[1:-1]}" + (f"'s {rest}" if rest else "")
    for at in range(len(path) - 1):
        item = path[at + 1]
        if path[at] in _CONTAINERS and isinstance(item, str) and item.startswith("["):
            container = f"{_CONTAINERS[str(path[at])]} {item[1:-1]}"
            rest = _dotted(path[at + 2 :])
            return f"{container}'s {rest}" if rest else container
    return _dotted(path) or "the whole object"


_CONTAINERS = {
    "containers": "container",
    "initContainers": "init container",
    "ephemeralContainers": "ephemeral container",
}


def _dotted(path: Path) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.startswith("["):
            text += part
        else:
            text += f".{part}" if text else part
    return text


def _value(value: Any, key: str = "") -> str:
    """A value as said: scalars as they are (true, not True), the rest as compact JSON;
    what is long cut short, and the last applied configuration not said at all."""
    if key == LAST_APPLIED:
        return "(the last applied configuration)"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = value
    elif value is None:
        text = "null"
    else:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    return text if len(text) <= LONG else text[: LONG - 1] + "…"


def _is_object(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("kind") != "Status"
        and isinstance(value.get("metadata"), dict)
    )
