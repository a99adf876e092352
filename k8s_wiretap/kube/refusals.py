"""Who refused a request: the authorizer, or which admission plugin, from what the API server
says of it — its audit Event's annotations and the Status it answered.

An authorizer that denies writes `authorization.k8s.io/decision: forbid` (and its reason) in
the audit Event; one that allows, `allow`. A request refused after that was refused by
admission: PodSecurity, a validating webhook, a ValidatingAdmissionPolicy, ResourceQuota,
LimitRanger or NamespaceLifecycle, each of which says so in its own words in the Status
message (and PodSecurity and the policies in annotations too). The keys and the words, each
with where the API server writes it:
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ADMITTED", "ANNOTATIONS", "Refusal", "refusal"]

# the audit annotations that say who decided
ANNOTATIONS = {
    # staging/src/k8s.io/apiserver/pkg/endpoints/filters/authorization.go
    # (decisionAnnotationKey, reasonAnnotationKey)
    "decision": "authorization.k8s.io/decision",
    "reason": "authorization.k8s.io/reason",
    # staging/src/k8s.io/pod-security-admission/api/constants.go
    # (labelPrefix + EnforcedPolicyAnnotationKey, AuditViolationsAnnotationKey)
    "enforce": "pod-security.kubernetes.io/enforce-policy",
    "violations": "pod-security.kubernetes.io/audit-violations",
    # staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go
    "policy": "validation.policy.admission.k8s.io/validation_failure",
}


@dataclass(frozen=True, slots=True)
class _Plugin:
    by: str  # the fact rules match on
    words: re.Pattern[str]  # what the Status message says
    source: str


PLUGINS = (
    _Plugin(  # "pods "x" is forbidden: violates PodSecurity "restricted:latest": ..."
        "podsecurity",
        re.compile(r'violates PodSecurity "(?P<what>[^"]+)"'),
        "staging/src/k8s.io/pod-security-admission/admission/admission.go",
    ),
    _Plugin(  # "admission webhook "x.example.com" denied the request: ..."
        "webhook",
        re.compile(r'admission webhook "(?P<what>[^"]+)" denied the request'),
        "staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go",
    ),
    _Plugin(  # "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ..."
        "policy",
        re.compile(r"ValidatingAdmissionPolicy '(?P<what>[^']+)'"),
        "staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go",
    ),
    _Plugin(  # "exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2"
        "quota",
        re.compile(r"exceeded quota: (?P<what>[^,]+)"),
        "staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go",
    ),
    _Plugin(  # "maximum cpu usage per Container is 500m, but limit is 1"
        "limitrange",
        re.compile(r"(?P<what>(?:maximum|minimum) \S+ usage per \w+)"),
        "plugin/pkg/admission/limitranger/admission.go",
    ),
    _Plugin(  # "unable to create new content in namespace shop because it is being terminated"
        "namespace",
        re.compile(r"in namespace (?P<what>\S+) because it is being terminated"),
        "staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go",
    ),
)

# RBAC's and the Node authorizer's words in a 403 (a proxy's recording has no annotations):
# staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go (Forbidden)
_AUTHORIZER = re.compile(r'User "[^"]*" cannot ')


@dataclass(frozen=True, slots=True)
class Refusal:
    """Who refused a request: `by` is `authorizer` (RBAC, the Node authorizer, a webhook
    authorizer), an admission plugin (`podsecurity`, `webhook`, `policy`, `quota`,
    `limitrange`, `namespace`), `admission` (an admission plugin, the words saying none),
    `allowed` (a read the authorizer allowed, refused all the same), or "" (nothing says);
    `what` names the policy, webhook, quota or namespace; `allowed` is the authorizer's
    reason when it allowed the request."""

    by: str = ""
    what: str = ""
    allowed: str = ""


# the verbs admission sees: the writes and a connect (exec, attach, port-forward: a create
# of a pod's subresource); reads pass no admission
# (staging/src/k8s.io/apiserver/pkg/admission/interfaces.go, Operation)
ADMITTED = frozenset({"create", "update", "patch", "delete", "deletecollection"})


def refusal(
    status: int | None, annotations: Mapping[str, Any], message: str, verb: str = "create"
) -> Refusal:
    """Who refused a request of `verb` answered `status` (a 4xx), from its audit annotations
    (empty for a proxy's recording) and its Status message. A read the authorizer allowed
    and that was refused all the same is `allowed`: no admission plugin sees a read."""
    if status is None or not 400 <= status < 500:
        return Refusal()
    decision = str(annotations.get(ANNOTATIONS["decision"]) or "")
    reason = str(annotations.get(ANNOTATIONS["reason"]) or "")
    if decision == "forbid":
        return Refusal("authorizer", reason)
    allowed = reason or ("allowed" if decision == "allow" else "")
    for plugin in PLUGINS:
        found = plugin.words.search(message)
        if found:
            return Refusal(plugin.by, found["what"], allowed)
    if status == 403 and annotations.get(ANNOTATIONS["enforce"]) and "PodSecurity" in message:
        return Refusal("podsecurity", str(annotations[ANNOTATIONS["enforce"]]), allowed)
    if status == 403 and ANNOTATIONS["policy"] in annotations:
        return Refusal("policy", "", allowed)
    if status == 403 and _AUTHORIZER.search(message):
        return Refusal("authorizer")
    if status == 403 and decision == "allow":
        return Refusal("admission" if verb in ADMITTED else "allowed", "", allowed)
    return Refusal("", "", allowed)
