"""What tests/decode/test_proto_lab.py needs from a real lab: its discovery, both answers to
one request, and watch streams read as they arrive.

A lab here is either release the project runs (the default, and 1.20 from Debian): nothing
below names a resource or an API version; what to list and fetch comes from the lab's own
discovery, so the same checks cover whatever each release serves.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from k8s_wiretap.decode.protobuf import decode_object, decode_watch_event
from k8s_wiretap.kube.client import ApiClient, Response
from k8s_wiretap.kube.release import Release
from k8s_wiretap.wire.framing import JsonFramer, LengthPrefixFramer
from k8s_wiretap.wire.inflate import Inflater
from tests.conftest import Kubectl
from tests.decode.same import difference

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
NS = "decode-lab"
ATTEMPTS = 20  # objects change between two requests (leases, status): retry until both agree
# Subresources that are no object: streams, proxies, option kinds.
NOT_OBJECTS = {"log", "exec", "attach", "portforward", "proxy"}
# What a schemaless decode leaves in its result (k8s_wiretap/decode/proto_schemaless.py).
FALLBACK_MARKS = ("$schemaless", "$unknownFields")


@dataclass(frozen=True)
class Resource:
    """One resource of one group version, as discovery lists it."""

    group_version: str  # "v1", "apps/v1"
    name: str  # "deployments"
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    subresources: tuple[str, ...] = ()  # those with a GET that answers an object

    @property
    def group(self) -> str:
        return self.group_version.rpartition("/")[0]

    @property
    def root(self) -> str:
        core = "/" not in self.group_version
        return f"/api/{self.group_version}" if core else f"/apis/{self.group_version}"

    @property
    def collection(self) -> str:
        return f"{self.root}/{self.name}"

    def path(self, name: str, namespace: str | None = None) -> str:
        where = f"{self.root}/namespaces/{namespace}" if self.namespaced else self.root
        return f"{where}/{self.name}/{name}"


@dataclass
class ProtoLab:
    """A running lab, its objects created, and what its discovery serves."""

    client: ApiClient
    kubectl: Kubectl
    start: str  # a resourceVersion from before the objects were created
    release: str  # the API server's gitVersion ("v1.30.2")
    fixture: Path
    resources: list[Resource] = field(default_factory=list)
    custom_groups: set[str] = field(default_factory=set)  # served by CRDs: JSON only

    @property
    def minor(self) -> tuple[int, int]:
        release = Release.parse(self.release)
        return release.major, release.minor

    @property
    def minor_name(self) -> str:
        return Release.parse(self.release).minor_version

    def resource(self, api_version: str, kind: str) -> Resource:
        for resource in self.resources:
            if (resource.group_version, resource.kind) == (api_version, kind):
                return resource
        raise AssertionError(f"{api_version} {kind} is not served")

    def protobuf_served(self, resource: Resource) -> bool:
        """Custom resources are JSON only, their subresources too (even scale, a Scale)."""
        return resource.group not in self.custom_groups


def group_versions(client: ApiClient) -> list[str]:
    """Every group version the server serves (not only the preferred ones)."""
    versions = list(client.get("/api").json()["versions"])
    for group in client.get("/apis").json()["groups"]:
        versions += [version["groupVersion"] for version in group["versions"]]
    return versions


def discover(client: ApiClient) -> list[Resource]:
    """Every resource of every group version, with its subresources that GET an object."""
    found = []
    for version in group_versions(client):
        root = f"/api/{version}" if "/" not in version else f"/apis/{version}"
        listed = client.get(root).json()["resources"]
        subresources: dict[str, list[str]] = {}
        for entry in listed:
            parent, _, sub = entry["name"].partition("/")
            if sub and sub not in NOT_OBJECTS and "get" in entry.get("verbs", []):
                subresources.setdefault(parent, []).append(sub)
        for entry in listed:
            if "/" in entry["name"]:
                continue
            found.append(
                Resource(
                    version,
                    entry["name"],
                    entry["kind"],
                    entry["namespaced"],
                    tuple(entry.get("verbs", [])),
                    tuple(subresources.get(entry["name"], [])),
                )
            )
    return found


def custom_groups(client: ApiClient) -> set[str]:
    crds = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").json()
    return {crd["spec"]["group"] for crd in crds["items"]}


def fetch(client: ApiClient, path: str, accept: str) -> Response:
    return client.get(path, accept=accept, timeout=30)


def resource_version(document: Any) -> str | None:
    metadata = document.get("metadata") if isinstance(document, dict) else None
    return metadata.get("resourceVersion") if isinstance(metadata, dict) else None


def fallbacks(tree: Any, path: str = "$") -> list[str]:
    """Where a decoded tree holds a schemaless result or fields its schema did not know."""
    found = []
    if isinstance(tree, dict):
        found += [f"{path}.{mark}" for mark in FALLBACK_MARKS if mark in tree]
        for key, value in tree.items():
            found += fallbacks(value, f"{path}.{key}")
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            found += fallbacks(value, f"{path}[{index}]")
    return found


def left_out(sent: Any, served: Any, path: str = "$") -> list[tuple[str, Any]]:
    """(path, value) of each field of `sent` (an object as a fixture writes it) that the
    served object lacks; lists are followed item by item when they kept their length."""
    found: list[tuple[str, Any]] = []
    if isinstance(sent, dict) and isinstance(served, dict):
        for key, value in sent.items():
            if key not in served:
                found.append((f"{path}.{key}", value))
            else:
                found += left_out(value, served[key], f"{path}.{key}")
    elif isinstance(sent, list) and isinstance(served, list) and len(sent) == len(served):
        for index, (mine, theirs) in enumerate(zip(sent, served, strict=True)):
            found += left_out(mine, theirs, f"{path}[{index}]")
    return found


def compare(lab: ProtoLab, path: str, json_accept: str = JSON, pb_accept: str = PROTOBUF) -> Any:
    """Decode the protobuf response, check it is the JSON one, key order included, and that
    nothing in it was decoded without a schema; return the JSON.

    Objects change between two requests (leases, status), and what the server makes at each
    request may come in another order (componentstatuses, in the order their probes answer):
    retried until both agree. A decoding mistake cannot hide so: the decoder reads the same
    bytes the same way every time, and never agrees.
    """
    found = None
    for _ in range(ATTEMPTS):
        as_json, as_protobuf = (
            fetch(lab.client, path, json_accept),
            fetch(lab.client, path, pb_accept),
        )
        assert as_json.status == as_protobuf.status, path
        assert as_protobuf.headers["Content-Type"].startswith(PROTOBUF), (path, as_protobuf.headers)
        want = as_json.json()
        got = decode_object(as_protobuf.body, release=lab.release)
        assert not fallbacks(got), (path, fallbacks(got))
        found = difference(got, want)
        if found is None:
            return want
    raise AssertionError(f"{path}: {found}")


def refused_as_protobuf(lab: ProtoLab, path: str) -> Any:
    """A path served as JSON only (custom resources): protobuf gets a 406 Status, itself in
    protobuf, and a client that accepts both gets JSON. Returns the JSON."""
    response = fetch(lab.client, path, PROTOBUF)
    assert response.status == 406, (path, response.status)
    status = decode_object(response.body, release=lab.release)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotAcceptable", 406)
    assert not fallbacks(status)
    either = fetch(lab.client, path, f"{PROTOBUF}, {JSON}")
    assert either.status == 200 and either.headers["Content-Type"].startswith(JSON), path
    return either.json()


# -- watch streams ----------------------------------------------------------------------------


def decoder_for(accept: str, release: str) -> Callable[[bytes], Any]:
    if accept.startswith(JSON):
        return json.loads
    return lambda frame: decode_watch_event(frame, release=release)


def watch(lab: ProtoLab, path: str, accept: str) -> list[Any]:
    """Every event of a watch that the server ends (`timeoutSeconds`), decoded."""
    response = lab.client.get(path, accept=accept, timeout=30)
    assert response.status == 200, response.body[:300]
    framer = JsonFramer() if accept.startswith(JSON) else LengthPrefixFramer()
    frames = framer.feed(response.body)
    assert not framer.flush()
    return [decoder_for(accept, lab.release)(frame) for frame in frames]


def both(run: Callable[[str], list[Any]], accepts: tuple[str, str]) -> tuple[Any, Any]:
    """`run(accept)` for the JSON and the protobuf accept at the same time."""
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def one(accept: str) -> None:
        try:
            results[accept] = run(accept)
        except BaseException as error:  # re-raised in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=one, args=(accept,)) for accept in accepts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results[accepts[0]], results[accepts[1]]


def ssl_context(client: ApiClient) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(client.ca_file))
    if client.cert_file and client.key_file:
        context.load_cert_chain(str(client.cert_file), str(client.key_file))
    return context


@dataclass
class GzipWatch:
    """A watch asked with `Accept-Encoding: gzip`, as client-go asks, read as it arrives."""

    headers: dict[str, str]
    events: list[Any]
    members: int  # gzip members in the body: the default release closes one at every flush
    inflated: bytes  # the stream as the recorder keeps it


def gzip_members(body: bytes) -> int:
    """How many gzip members `body` is, one after another."""
    import zlib

    count = 0
    while body:
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        decoder.decompress(body)
        assert decoder.eof, "a gzip member is cut short"
        count, body = count + 1, decoder.unused_data
    return count


def gzip_watch(
    lab: ProtoLab, path: str, accept: str, until: Callable[[list[Any]], bool]
) -> GzipWatch:
    """Read a gzipped watch chunk by chunk, inflating with the recorder's Inflater, until
    `until(events so far)` holds (then hang up) or the server ends it."""
    url = urlsplit(lab.client.server)
    connection = http.client.HTTPSConnection(
        url.hostname or "127.0.0.1", url.port, timeout=60, context=ssl_context(lab.client)
    )
    headers = {"Accept": accept, "Accept-Encoding": "gzip", "User-Agent": "decode-tests"}
    decode = decoder_for(accept, lab.release)
    try:
        connection.request("GET", path, headers=headers)
        reply = connection.getresponse()
        assert reply.status == 200, reply.read()[:300]
        inflater = Inflater(reply.getheader("Content-Encoding") or "identity")
        framer = JsonFramer() if accept.startswith(JSON) else LengthPrefixFramer()
        raw, inflated, events = bytearray(), bytearray(), []
        for chunk in iter(lambda: reply.read1(65536), b""):
            raw += chunk
            inflated += (data := inflater.feed(chunk))
            events += [decode(frame) for frame in framer.feed(data)]
            if until(events):
                break
        assert inflater.error is None, inflater.error
        headers = dict(reply.getheaders())
        return GzipWatch(headers, events, gzip_members(bytes(raw)), bytes(inflated))
    finally:
        connection.close()


def events_differ(from_protobuf: list[Any], from_json: list[Any]) -> str | None:
    """Where two event lists first differ (each decoded protobuf event against its JSON)."""
    if len(from_protobuf) != len(from_json):
        return f"{len(from_protobuf)} events != {len(from_json)}"
    for index, (got, want) in enumerate(zip(from_protobuf, from_json, strict=True)):
        if fallbacks(got):
            return f"event {index}: {fallbacks(got)}"
        found = difference(got, want, f"event[{index}]")
        if found:
            return f"{want['type']} {resource_version(want['object'])}: {found}"
    return None


def names(lab: ProtoLab, resource: Resource) -> Iterator[tuple[str | None, str]]:
    """(namespace, name) of every object of `resource`."""
    for item in lab.client.get(resource.collection).json()["items"]:
        yield item["metadata"].get("namespace"), item["metadata"]["name"]
