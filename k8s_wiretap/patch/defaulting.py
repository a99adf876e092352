"""The API server's defaulting of a decoded object, as far as kube/defaults.py knows it.

`apply_defaults(obj, release)` walks `obj` along its kind's Go types (roundtrip.py) and, at
each struct whose type has rules, sets what is missing (the enclosing type's rules first,
as SetObjectDefaults_* calls them). Kinds the data does not cover are defaulted only as
far as their types have rules (a Pod's PodSpec and containers). A custom resource, which
has no Go types, is defaulted from its schema's `default`s when the replay has its schema
(the OpenAPI document a recording holds), as apiextensions-apiserver's structural defaulting
does (pkg/apiserver/schema/defaulting/algorithm.go: a missing property gets its default,
top-down, in objects, list items and map values; a null one only when it is not nullable,
which the published schema does not say, so a null is left).

Computed rules, by the name the data file gives them:

- `image-pull-policy`: `Always` for an image whose tag is `latest`, or that has neither tag
  nor digest; `IfNotPresent` otherwise (SetDefaults_Container, parsers.ParseImageName);
- `service-account-name`, `deprecated-service-account`: the two names of a pod's service
  account kept equal, `serviceAccountName` winning (SetDefaults_PodSpec);
- `empty-dir`: `emptyDir: {}` for a volume that names no source (SetDefaults_Volume);
- `image-volume-pull-policy`: an image volume's `pullPolicy`, as for a container's image;
- `template-labels`: a ReplicationController's empty selector and labels become its pod
  template's labels (SetDefaults_ReplicationController).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from k8s_wiretap.kube.defaults import Rule, type_rules
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.patch.gosemantics import copy_json
from k8s_wiretap.patch.meta import Node
from k8s_wiretap.patch.roundtrip import go_fields, kind_message

__all__ = ["apply_defaults", "image_pull_policy"]

_MISSING: Any = object()


def image_pull_policy(image: Any) -> str:
    """SetDefaults_Container's pull policy for `image` (an unparsable one has no tag)."""
    text = image if isinstance(image, str) else ""
    name, _, digest = text.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    if not text:
        return "IfNotPresent"  # ParseNormalizedNamed fails: no tag
    return "Always" if tag == "latest" or (not tag and not digest) else "IfNotPresent"


def _pull_policy(struct: dict[str, Any], rule: Rule) -> None:
    if struct.get("imagePullPolicy") in (None, ""):
        struct["imagePullPolicy"] = image_pull_policy(struct.get("image"))


def _service_account_name(struct: dict[str, Any], rule: Rule) -> None:
    if not struct.get("serviceAccountName") and struct.get("serviceAccount"):
        struct["serviceAccountName"] = struct["serviceAccount"]


def _deprecated_service_account(struct: dict[str, Any], rule: Rule) -> None:
    if struct.get("serviceAccountName"):
        struct["serviceAccount"] = struct["serviceAccountName"]
    else:
        struct.pop("serviceAccount", None)  # "" is omitted


def _empty_dir(struct: dict[str, Any], rule: Rule) -> None:
    if all(key == "name" or value is None for key, value in struct.items()):
        struct["emptyDir"] = {}


def _image_volume_pull_policy(struct: dict[str, Any], rule: Rule) -> None:
    if struct.get("pullPolicy") in (None, ""):
        struct["pullPolicy"] = image_pull_policy(struct.get("reference"))


def _template_labels(struct: dict[str, Any], rule: Rule) -> None:
    template = _get(struct, ("spec", "template"))
    labels = _get(template, ("metadata", "labels"))
    if not isinstance(labels, dict):
        return
    spec = struct.get("spec")
    if isinstance(spec, dict) and not spec.get("selector"):
        spec["selector"] = copy_json(labels)
    metadata = struct.setdefault("metadata", {})
    if isinstance(metadata, dict) and not metadata.get("labels"):
        metadata["labels"] = copy_json(labels)


COMPUTED: dict[str, Callable[[dict[str, Any], Rule], None]] = {
    "image-pull-policy": _pull_policy,
    "service-account-name": _service_account_name,
    "deprecated-service-account": _deprecated_service_account,
    "empty-dir": _empty_dir,
    "image-volume-pull-policy": _image_volume_pull_policy,
    "template-labels": _template_labels,
}


def apply_defaults(
    obj: Any, release: ReleaseLike, members: Collection[str] = (), node: Node | None = None
) -> Any:
    """`obj` defaulted in place (and returned) as `release`'s API server defaults it, as
    far as the data knows (see the module docstring); `members`: only in these top-level
    members (all if empty), when the rest is known to be defaulted; `node`: the kind's
    schema, whose defaults a custom resource gets."""
    found = kind_message(obj, release)
    if found is not None:
        _struct(obj, found[0], found[1], release, members)
    elif node is not None and isinstance(obj, dict):
        _schema_defaults(obj, node, members)
    return obj


def _schema_defaults(value: Any, node: Node | None, only: Collection[str] = ()) -> None:
    """Structural defaulting's Default(x, s)."""
    if node is None:
        return
    if isinstance(value, dict) and node.kind == "struct":
        names = [name for name in node.field_names() if not only or name in only]
        for name in names:
            child = node.field(name)
            if child is not None and child.default is not None and name not in value:
                value[name] = copy_json(child.default)
        for name in names:
            if name in value:
                _schema_defaults(value[name], node.field(name))
    elif isinstance(value, dict) and node.kind == "map":
        for member in value.values():
            _schema_defaults(member, node.item())
    elif isinstance(value, list) and node.kind == "list":
        for item in value:
            _schema_defaults(item, node.item())


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(value, dict):
            return _MISSING
        value = value.get(name, _MISSING)
    return value


def _apply(struct: dict[str, Any], rule: Rule) -> None:
    if rule.computed:
        COMPUTED[rule.computed](struct, rule)
        return
    if rule.when_path:
        current = _get(struct, rule.when_path)
        if (None if current is _MISSING else current) != rule.when_value:
            return
    parent = _get(struct, rule.path[:-1])
    name = rule.path[-1]
    if isinstance(parent, dict) and parent.get(name) is None:
        parent[name] = copy_json(rule.value)


def _struct(
    value: dict[str, Any],
    message: str,
    minor: str,
    release: ReleaseLike,
    only: Collection[str] = (),
) -> None:
    for rule in type_rules(release, message):
        if not only or rule.path[0] in only:
            _apply(value, rule)
    fields = go_fields(message, minor) or {}
    for name, member in value.items():
        field = fields.get(name)
        if field is None or (only and name not in only):
            continue
        target = field.get("value") if field["go"] == "map" else field.get("message")
        nested = target.get("message") if isinstance(target, dict) else target
        if not isinstance(nested, str) or go_fields(nested, minor) is None:
            continue
        if isinstance(member, dict) and field["go"] != "map":
            _struct(member, nested, minor, release)
            continue
        items = member.values() if isinstance(member, dict) else member
        for item in items if isinstance(member, (dict, list)) else ():
            if isinstance(item, dict):
                _struct(item, nested, minor, release)
