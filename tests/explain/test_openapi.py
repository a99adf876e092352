"""Which patch metadata a PATCH is replayed with: the committed story's own documents.

The story's kubectl fetched `/openapi/v3/apis/apps/v1`, `/openapi/v3/api/v1`, the apiextensions
and workshop.example.com documents (JSON) and, for the custom resource, `/openapi/v2`
(gnostic protobuf) while the story was recorded (recordings/apply-story.jsonl.gz).
"""

from __future__ import annotations

from functools import cache

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.openapi import v3_group_version
from k8s_wiretap.patch import PatchSchema
from tests.recorded import story, story_release


def test_group_versions_of_v3_paths() -> None:
    assert v3_group_version("/openapi/v3/apis/apps/v1?hash=D9D9&timeout=32s") == "apps/v1"
    assert v3_group_version("/openapi/v3/api/v1?hash=8F5F") == "v1"
    assert v3_group_version("/openapi/v3") is None
    assert v3_group_version("/openapi/v3/apis/apps") is None
    assert v3_group_version("/openapi/v2") is None
    assert v3_group_version("/apis/apps/v1") is None


@cache
def analysis() -> Analysis:
    return Analysis.of(story())


def fetched(path: str) -> Exchange:
    return next(e for e in analysis().exchanges if e.path.split("?")[0] == path)


def test_the_documents_of_each_group_version_in_time() -> None:
    shipped = PatchSchema.bundled(story_release())
    apps = fetched("/openapi/v3/apis/apps/v1")
    before, after = apps.time - 0.001, apps.time + 0.001
    assert analysis().patch_schema(before, "apps", "v1") is shipped
    used = analysis().patch_schema(after, "apps", "v1")
    assert used is not shipped and used is analysis().patch_schema(after + 60, "apps", "v1")
    assert set(used.definitions) < set(shipped.definitions) | {"io.k8s.api.apps.v1.Scale"}
    assert used.for_kind("autoscaling/v1", "Scale") is not None  # the scale subresource's
    # no v3 document of batch/v1: the whole /openapi/v2 once recorded, the shipped table before
    v2 = fetched("/openapi/v2")
    assert analysis().patch_schema(v2.time - 0.001, "batch", "v1") is shipped
    whole = analysis().patch_schema(v2.time + 0.001, "batch", "v1")
    assert whole is not shipped and whole.for_kind("batch/v1", "Job") is not None
    assert whole.for_kind("workshop.example.com/v1", "Greeting") is not None


def test_a_custom_resources_document() -> None:
    greetings = fetched("/openapi/v3/apis/workshop.example.com/v1")
    schema = analysis().patch_schema(greetings.time + 0.001, "workshop.example.com", "v1")
    greeting = schema.for_kind("workshop.example.com/v1", "Greeting")
    assert greeting is not None and greeting.field("spec") is not None
    assert (
        PatchSchema.bundled(story_release()).for_kind("workshop.example.com/v1", "Greeting") is None
    )
