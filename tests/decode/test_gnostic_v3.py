"""The gnostic protobuf form of a group version's /openapi/v3 document, read back as JSON.

The fixtures are a lab API server's `/openapi/v3/apis/coordination.k8s.io/v1` (the release in
their names)
fetched twice, as JSON and with `Accept: application/com.github.proto-openapi.spec.v3@v1.0
+protobuf` (answered as `...spec.v3.v1.0+protobuf`); tests/patch/test_story_1_37.py does
the same with apps/v1 on a running lab.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.decode.body import decode_body
from k8s_wiretap.decode.gnostic_v3 import OpenApiV3Decoder, openapi_v3_from_gnostic
from k8s_wiretap.kube.media import GNOSTIC_OPENAPI, GNOSTIC_OPENAPI_V3, response_media
from k8s_wiretap.patch import PatchSchema
from k8s_wiretap.wire.protowire import ProtoError

FIXTURES = Path(__file__).parent / "fixtures" / "openapi-v3"
# coordination-v1-<release>.pb.gz and its .json.gz twin, whichever release they came from
COORDINATION_PB = next(FIXTURES.glob("coordination-v1-*.pb.gz")).name
COORDINATION_JSON = COORDINATION_PB.replace(".pb.gz", ".json.gz")
SERVED_AS = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"


def fixture(name: str) -> bytes:
    return gzip.decompress((FIXTURES / name).read_bytes())


def without_object_defaults(value: Any) -> Any:
    """The JSON document as protobuf can carry it: a `default` is a scalar there."""
    if isinstance(value, dict):
        return {
            k: without_object_defaults(v)
            for k, v in value.items()
            if not (k == "default" and isinstance(v, (dict, list)))
        }
    if isinstance(value, list):
        return [without_object_defaults(v) for v in value]
    return value


def test_the_servers_protobuf_reads_as_its_json() -> None:
    served = json.loads(fixture(COORDINATION_JSON))
    converted = openapi_v3_from_gnostic(fixture(COORDINATION_PB))
    assert converted["openapi"] == served["openapi"] == "3.0.0"
    assert converted["info"] == served["info"]
    assert converted["components"]["schemas"] == without_object_defaults(
        served["components"]["schemas"]
    )
    lease = PatchSchema.from_openapi(converted).for_kind("coordination.k8s.io/v1", "Lease")
    assert lease is not None and lease.field("spec") is not None
    owners = lease.field("metadata").field("ownerReferences")  # type: ignore[union-attr]
    assert owners is not None and (owners.merge_key, owners.map_keys) == ("uid", ("uid",))


def test_what_is_not_a_v3_document() -> None:
    for data in (b"\xff\xff", b"\x2a\x01\xff", b"\x2a\x02\x0a\x07"):
        with pytest.raises(ProtoError):
            openapi_v3_from_gnostic(data)


def test_the_registry_reads_it_by_its_media_type() -> None:
    decoder = OpenApiV3Decoder()
    data = fixture(COORDINATION_PB)
    assert decoder.priority(GNOSTIC_OPENAPI_V3, data) == 90
    assert decoder.priority(GNOSTIC_OPENAPI, data) == 0
    # the API server answers the `@v1.0` Accept with the `.v1.0` spelling
    assert response_media(SERVED_AS, GNOSTIC_OPENAPI_V3) == GNOSTIC_OPENAPI_V3
    served_v2 = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert response_media(served_v2, GNOSTIC_OPENAPI) == GNOSTIC_OPENAPI
    assert response_media("application/octet-stream", GNOSTIC_OPENAPI) == GNOSTIC_OPENAPI
    assert response_media("application/json", "application/json") == "application/json"
    decoded = decode_body(data, GNOSTIC_OPENAPI_V3)
    assert decoded.format == "openapi-v3-protobuf", decoded.error
    assert decoded.value["components"]["schemas"]
