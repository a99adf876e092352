"""Every shape an audit log is kept in, each told by its content, never a file's name
(docs/importing.md, "The shapes a log arrives in"): `base` (what a shape is, detection),
`own` (the API server's own, and the wrappers of log shippers and stores), `clouds` (EKS,
AKS, GKE), `openshift` (OpenShift Logging's ViaQ and OTLP). How a file is laid out (JSON
lines, an array, documents, gzip, base64) is `importers.framing`'s part.
"""

from __future__ import annotations

from k8s_wiretap.importers.shapes import clouds, openshift, own
from k8s_wiretap.importers.shapes.base import (
    REGISTRY,
    TAKEN,
    Shape,
    Unfit,
    detect,
    loaded,
    nested,
)

__all__ = [
    "REGISTRY",
    "TAKEN",
    "Shape",
    "Unfit",
    "clouds",
    "detect",
    "loaded",
    "nested",
    "openshift",
    "own",
]
