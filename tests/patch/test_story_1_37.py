"""The workshop's apply story on a lab of the default release, with its own kubectl, replayed.

One lab of the default release (kube.release.CURRENT) whose every component talks through
the wiretap records the story
(k8s_wiretap/workshop/scenarios.py: client-side apply create and update, scale, label, a new
image, server-side apply, its 409 conflict and the forced apply, a custom resource with merge
and JSON patches, a Secret). Its kubectl reads patch metadata from OpenAPI v3, one JSON
document per group version; every PATCH of the recording (kubectl's, the controllers' and
the hollow kubelet's) must replay to what the server did, with the recorded documents and
without them (the release's shipped table), and the shipped table must be what this lab
serves.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.decode.gnostic_v3 import openapi_v3_from_gnostic
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.openapi import v3_group_version
from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.kube.media import GNOSTIC_OPENAPI_V3
from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.patch import PatchSchema
from k8s_wiretap.workshop.scenarios import run_story
from tests.conftest import load_script
from tests.decode.test_gnostic_v3 import without_object_defaults

pytestmark = pytest.mark.lab  # starts a lab of its own

RELEASE = str(CURRENT)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Recording, ApiClient]]:
    """The story recorded on a lab of RELEASE with its kubectl first on PATH; and, while the lab
    still runs, a client of its API server."""
    folder = tmp_path_factory.mktemp("story-default")
    lab = Lab(folder / "lab")
    state = lab.up(UpOptions(build=False, kube_version=RELEASE, record=folder / "story.jsonl"))
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(state.kubeconfig).parent / 'bin'}{os.pathsep}{path}"
    try:
        run_story("apply", state.kubeconfig, folder / "cache", settle=lambda: time.sleep(2))
        client = admin_client(Layout(Path(state.kubeconfig).parent, state.ports))
        yield load(folder / "story.jsonl"), client
    finally:
        os.environ["PATH"] = path
        lab.down()


@pytest.fixture(scope="module")
def recording(recorded: tuple[Recording, ApiClient]) -> Recording:
    return recorded[0]


def kubectl_openapi(recording: Recording) -> list[tuple[str, int | None, str]]:
    return [
        (e.path.split("?")[0], e.status, e.request_header("accept"))
        for e in sorted(recording.exchanges, key=lambda e: e.time)
        if e.component == "kubectl" and e.path.startswith("/openapi/")
    ]


def test_kubectl_reads_patch_metadata_from_openapi_v3(recording: Recording) -> None:
    kubectl = [e for e in recording.exchanges if e.component == "kubectl"]
    assert {e.request_header("user-agent").split(" ")[0] for e in kubectl} == {
        f"kubectl/v{RELEASE}"
    }
    fetched = kubectl_openapi(recording)
    # the index first, then each group version's document once, by its hash, as JSON: it is
    # immutable, kubectl caches it
    assert fetched[0][0] == "/openapi/v3"
    revalidates_the_index(kubectl)
    documents = [f for f in fetched if v3_group_version(f[0]) is not None]
    paths = [path for path, _, _ in documents]
    assert paths[:2] == ["/openapi/v3/apis/apps/v1", "/openapi/v3/api/v1"]
    assert len(set(paths)) == len(paths)
    assert {(status, accept) for _, status, accept in documents} == {(200, "application/json")}
    hashed = [e for e in recording.exchanges if v3_group_version(e.path) is not None]
    assert all("hash=" in e.path for e in hashed)
    assert {e.response_header("cache-control") for e in hashed} == {"public, immutable"}
    # /openapi/v2 (gnostic protobuf) only late, for the custom resource, which kubectl's
    # v3 path does not patch: it falls back to v2, then to a JSON merge patch
    v2 = [i for i, f in enumerate(fetched) if f[0] == "/openapi/v2"]
    assert v2 and fetched.index(documents[0]) < v2[0]


def revalidates_the_index(kubectl: list[Exchange]) -> None:
    """kubectl keeps the OpenAPI v3 index in its cache and asks again with If-Modified-Since:
    the API server answers 304 when the index is the one kubectl has, else 200 with a later
    Last-Modified (the index changes as the server's groups do, so how many of each a run
    gets depends on its timing)."""
    index = [e for e in kubectl if e.path.split("?")[0] == "/openapi/v3"]
    assert len(index) > 1 and not index[0].request_header("if-modified-since")
    for exchange in index[1:]:
        since = exchange.request_header("if-modified-since")
        modified = exchange.response_header("last-modified")
        assert since and modified, exchange.path
        if exchange.status == 304:
            assert modified == since
        else:
            assert exchange.status == 200
            assert parsedate_to_datetime(modified) > parsedate_to_datetime(since)


def every_patch_replays(analysis: Analysis) -> Counter[str]:
    """Assert every PATCH replays to what the server did; count them by patch type."""
    kinds: Counter[str] = Counter()
    for exchange in analysis.exchanges:
        replay = analysis.replay(exchange)
        if replay is None:
            continue
        where = f"{exchange.component} {exchange.method} {exchange.path}"
        kinds[replay.type] += 1
        if replay.refused:  # a refused patch is refused alike
            assert exchange.status == 409 and replay.after["reason"] == "Conflict", where
            # counted: the story's own, another manager's server-side apply of a field
            # kubectl owns; a live lab may refuse another PATCH with 409 too (a make test
            # run had a second)
            kinds["refused"] += exchange.component == "kubectl" and replay.type == "apply"
        assert replay.before is not None, (where, replay.note)
        assert replay.matches_server is True, (where, replay.mismatches)
    return kinds


def test_every_patch_replays_with_the_recorded_v3_documents(recording: Recording) -> None:
    analysis = Analysis.of(recording)
    assert analysis.server_version == f"v{RELEASE}"
    kinds = every_patch_replays(analysis)
    assert {"strategic", "merge", "json", "apply"} <= set(kinds) and kinds["refused"] == 1
    # kubectl's Deployment patches were replayed with the apps/v1 document it fetched
    deployment = next(
        e
        for e in analysis.exchanges
        if e.component == "kubectl" and e.info.verb == "patch" and e.info.resource == "deployments"
    )
    used = analysis.patch_schema(deployment.time, "apps", "v1")
    assert used is not PatchSchema.bundled(RELEASE) and used is not PatchSchema.builtin()
    assert used.for_kind("apps/v1", "Deployment") is not None
    assert len(used.definitions) < len(PatchSchema.bundled(RELEASE).definitions)


def test_every_patch_replays_with_the_shipped_1_37_table(recording: Recording) -> None:
    """A recording that holds no OpenAPI document (kubectl had them cached) replays with
    the shipped table of its server's release."""
    exchanges = [e for e in recording.exchanges if not e.path.startswith("/openapi/")]
    analysis = Analysis.of(Recording(recording.header, exchanges, recording.notes))
    assert analysis.patch_schema(time.time(), "apps", "v1") is PatchSchema.bundled(RELEASE)
    kinds = every_patch_replays(analysis)
    assert {"strategic", "merge", "json", "apply"} <= set(kinds) and kinds["refused"] == 1


def test_the_shipped_table_is_what_the_lab_serves(recorded: tuple[Recording, ApiClient]) -> None:
    """The built-in group versions' documents, that is: the story's lab also serves the
    workshop's custom resource."""
    generate = load_script("generate_openapi_v3")
    shipped = datafiles.path(f"openapi-v3-{CURRENT.minor_version}.json").read_text()
    only = json.loads(shipped)["x-wiretap-group-versions"]
    assert "apis/apps/v1" in only and not any("example.com" in gv for gv in only)
    found, served = generate.schemas(recorded[1], only)
    assert served == only
    assert shipped == generate.dump(f"v{RELEASE}", served, found)


def test_the_labs_v3_protobuf_is_its_json(recorded: tuple[Recording, ApiClient]) -> None:
    client = recorded[1]
    url = client.get("/openapi/v3").json()["paths"]["apis/apps/v1"]["serverRelativeURL"]
    served = client.get(url, timeout=30, accept="application/json").json()
    binary = client.get(url, timeout=30, accept=GNOSTIC_OPENAPI_V3)
    assert binary.headers["Content-Type"] == GNOSTIC_OPENAPI_V3.replace("@", ".")
    converted = openapi_v3_from_gnostic(binary.body)
    schemas = served["components"]["schemas"]
    assert converted["components"]["schemas"] == without_object_defaults(schemas)
