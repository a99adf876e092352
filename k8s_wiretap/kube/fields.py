"""Fields with a meaning of their own to the API server or to kubectl, as data."""

from __future__ import annotations

__all__ = ["APPLY_UNTRACKED_METADATA", "LAST_APPLIED", "SERVER_METADATA", "WRITTEN_INTO"]

# kubectl's client-side apply keeps the file it applied here
# (staging/src/k8s.io/kubectl/pkg/util/apply.go, `corev1.LastAppliedConfigAnnotation`).
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# ObjectMeta fields the API server sets itself, whatever a client sends
# (staging/src/k8s.io/apiserver/pkg/registry/rest/create.go and update.go,
# `FillObjectMetaSystemFields`, and the storage's resourceVersion).
SERVER_METADATA = ("resourceVersion", "generation", "creationTimestamp", "uid", "selfLink")

# Write-only fields the API server merges into another on write and never stores, by
# (group, resource): a Secret's `stringData` ("All keys and values are merged into the data
# field on write, overwriting any existing values": core/v1 types.go, Secret.StringData;
# pkg/apis/core/v1/conversion.go, Convert_v1_Secret_To_core_Secret).
WRITTEN_INTO: dict[tuple[str, str], dict[str, str]] = {("", "secrets"): {"stringData": "data"}}

# ObjectMeta fields server-side apply never tracks as anyone's
# (apiserver/pkg/endpoints/handlers/fieldmanager/internal/stripmeta.go).
APPLY_UNTRACKED_METADATA = (
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
)
