"""Decoding captured Kubernetes traffic into what it means.

The protobuf decoder (protobuf.py, with its proto_* modules and the generated schema in
schema/) renders Kubernetes protobuf bodies and watch frames exactly as the API server would
render the same objects in JSON. It reads bytes with k8s_wiretap.wire.protowire, and its
DecodeError is that reader's ProtoError (protobuf.py says why).
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
