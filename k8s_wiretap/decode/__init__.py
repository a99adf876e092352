"""Decoding captured Kubernetes bodies: bytes in, the JSON the API server would send out.

- `body.py`: one body, whatever it is (JSON, YAML, protobuf, CBOR, text), by a registry of
  decoders in mitmproxy's manner, never raising; `cache.py` decodes what repeats once;
- `watch.py`: the events of a watch stream, JSON, protobuf or CBOR;
- `protobuf.py` with its `proto_*` modules: Kubernetes protobuf rendered exactly as the API
  server renders the same objects in JSON, by the release's schema (k8s_wiretap.kube.schema).
  It reads bytes with k8s_wiretap.wire.protowire, and its DecodeError is that reader's
  ProtoError (protobuf.py says why). This package exports its functions;
- `cbor.py`, `cbor_order.py`: CBOR bodies, their keys put back in the server's JSON order;
- `gnostic.py`, `gnostic_v3.py`: OpenAPI v2 and v3 documents sent as gnostic protobuf;
- `diff.py`: what changed between two JSON documents.

What the decoded objects mean (histories, patches replayed, who did what) is
k8s_wiretap.explain's.
"""

from __future__ import annotations

from k8s_wiretap.decode.protobuf import (
    DecodeError,
    decode_object,
    decode_schemaless,
    decode_watch_event,
    render_message,
)

__all__ = [
    "DecodeError",
    "decode_object",
    "decode_schemaless",
    "decode_watch_event",
    "render_message",
]
