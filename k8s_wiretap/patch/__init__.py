"""Replay Kubernetes PATCH requests as the API server of a given release applies them, and
check the result.

- `apply_strategic(original, patch, node, release)`: strategic merge patch (strategic.py),
  with the rules of that release (`SmpRules`; None: 1.20);
- `apply_merge(document, patch, release)`: JSON merge patch, RFC 7386 (merge.py);
- `apply_json_patch(document, operations)`: JSON patch, RFC 6902 (json_patch.py);
- `apply_config(live, config, manager, node)`: server-side apply (apply.py);
- `compare(kind, patch, before, after_local, server)`: did the replay predict the server's
  result on what the patch touched (compare.py);
- `PatchSchema`/`Node`: patch metadata from an OpenAPI v2 or v3 document, with Kubernetes
  1.20's and the default release's tables shipped (`PatchSchema.bundled(release)`, meta.py);
  the protobuf forms kubectl and others download are read by `k8s_wiretap.decode.gnostic`
  (v2) and `gnostic_v3`;
- `drop_unknown_fields`: what the server's decoder keeps of a patched object (prune.py);
- `replay(kind, body, before, release=...)`: all of the above in one call (replay.py).

Every function raises `PatchError` (with the server's message and HTTP status) exactly where
the server rejects the patch, and nothing else.
"""

from __future__ import annotations

from k8s_wiretap.patch.apply import apply_config
from k8s_wiretap.patch.bodies import decode_patch_body, patch_kind
from k8s_wiretap.patch.compare import Comparison, compare
from k8s_wiretap.patch.errors import ConflictError, PatchError
from k8s_wiretap.patch.json_patch import apply_json_patch
from k8s_wiretap.patch.merge import apply_merge
from k8s_wiretap.patch.meta import Node, PatchSchema
from k8s_wiretap.patch.prune import drop_unknown_fields
from k8s_wiretap.patch.replay import replay
from k8s_wiretap.patch.strategic import SmpRules, apply_strategic

__all__ = [
    "Comparison",
    "ConflictError",
    "Node",
    "PatchError",
    "PatchSchema",
    "SmpRules",
    "apply_config",
    "apply_json_patch",
    "apply_merge",
    "apply_strategic",
    "compare",
    "decode_patch_body",
    "drop_unknown_fields",
    "patch_kind",
    "replay",
]
