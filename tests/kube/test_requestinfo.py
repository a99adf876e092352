"""Request resolution, checked against the API server's own test table
(apiserver/pkg/endpoints/request/requestinfo_test.go, Kubernetes 1.20)."""

from __future__ import annotations

import pytest

from k8s_wiretap.kube.requestinfo import parse_request

# method, url, verb, group, version, namespace, resource, subresource, name, parts
SUCCESS_CASES = [
    ("GET", "/api/v1/namespaces", "list", "", "v1", "", "namespaces", "", "", ("namespaces",)),
    (
        "GET",
        "/api/v1/namespaces/other",
        "get",
        "",
        "v1",
        "other",
        "namespaces",
        "",
        "other",
        ("namespaces", "other"),
    ),
    ("GET", "/api/v1/namespaces/other/pods", "list", "", "v1", "other", "pods", "", "", ("pods",)),
    (
        "GET",
        "/api/v1/namespaces/other/pods/foo",
        "get",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
        ("pods", "foo"),
    ),
    (
        "HEAD",
        "/api/v1/namespaces/other/pods/foo",
        "get",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
        ("pods", "foo"),
    ),
    ("GET", "/api/v1/pods", "list", "", "v1", "", "pods", "", "", ("pods",)),
    ("HEAD", "/api/v1/pods", "list", "", "v1", "", "pods", "", "", ("pods",)),
    (
        "GET",
        "/api/v1/namespaces/other/pods/foo",
        "get",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
        ("pods", "foo"),
    ),
    ("GET", "/api/v1/namespaces/other/pods", "list", "", "v1", "other", "pods", "", "", ("pods",)),
    (
        "GET",
        "/api/v1/proxy/namespaces/other/pods/foo",
        "proxy",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
        ("pods", "foo"),
    ),
    (
        "GET",
        "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource",
        "proxy",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
        ("pods", "foo", "subpath", "not", "a", "subresource"),
    ),
    ("GET", "/api/v1/watch/pods", "watch", "", "v1", "", "pods", "", "", ("pods",)),
    ("GET", "/api/v1/pods?watch=true", "watch", "", "v1", "", "pods", "", "", ("pods",)),
    ("GET", "/api/v1/pods?watch=false", "list", "", "v1", "", "pods", "", "", ("pods",)),
    (
        "GET",
        "/api/v1/watch/namespaces/other/pods",
        "watch",
        "",
        "v1",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
    (
        "GET",
        "/api/v1/namespaces/other/pods?watch=1",
        "watch",
        "",
        "v1",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
    (
        "GET",
        "/api/v1/namespaces/other/pods?watch=0",
        "list",
        "",
        "v1",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
    (
        "GET",
        "/api/v1/namespaces/other/pods/foo/status",
        "get",
        "",
        "v1",
        "other",
        "pods",
        "status",
        "foo",
        ("pods", "foo", "status"),
    ),
    (
        "GET",
        "/api/v1/namespaces/other/pods/foo/proxy/subpath",
        "get",
        "",
        "v1",
        "other",
        "pods",
        "proxy",
        "foo",
        ("pods", "foo", "proxy", "subpath"),
    ),
    (
        "PUT",
        "/api/v1/namespaces/other/finalize",
        "update",
        "",
        "v1",
        "other",
        "namespaces",
        "finalize",
        "other",
        ("namespaces", "other", "finalize"),
    ),
    (
        "PUT",
        "/api/v1/namespaces/other/status",
        "update",
        "",
        "v1",
        "other",
        "namespaces",
        "status",
        "other",
        ("namespaces", "other", "status"),
    ),
    (
        "PATCH",
        "/api/v1/namespaces/other/pods/foo",
        "patch",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
        ("pods", "foo"),
    ),
    (
        "DELETE",
        "/api/v1/namespaces/other/pods/foo",
        "delete",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
        ("pods", "foo"),
    ),
    (
        "POST",
        "/api/v1/namespaces/other/pods",
        "create",
        "",
        "v1",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
    ("DELETE", "/api/v1/nodes", "deletecollection", "", "v1", "", "nodes", "", "", ("nodes",)),
    (
        "DELETE",
        "/api/v1/namespaces",
        "deletecollection",
        "",
        "v1",
        "",
        "namespaces",
        "",
        "",
        ("namespaces",),
    ),
    (
        "DELETE",
        "/api/v1/namespaces/other/pods",
        "deletecollection",
        "",
        "v1",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
    (
        "DELETE",
        "/apis/extensions/v1/namespaces/other/pods",
        "deletecollection",
        "extensions",
        "v1",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
    (
        "POST",
        "/apis/extensions/v1/namespaces/other/pods",
        "create",
        "extensions",
        "v1",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
    (
        "POST",
        "/apis/extensions/v1beta3/namespaces/other/pods",
        "create",
        "extensions",
        "v1beta3",
        "other",
        "pods",
        "",
        "",
        ("pods",),
    ),
]


@pytest.mark.parametrize(
    ("method", "url", "verb", "group", "version", "namespace", "resource", "sub", "name", "parts"),
    SUCCESS_CASES,
)
def test_resource_requests(
    method: str,
    url: str,
    verb: str,
    group: str,
    version: str,
    namespace: str,
    resource: str,
    sub: str,
    name: str,
    parts: tuple[str, ...],
) -> None:
    info = parse_request(method, url)
    assert info.is_resource_request
    assert (
        info.verb,
        info.group,
        info.version,
        info.namespace,
        info.resource,
        info.subresource,
        info.name,
        info.parts,
    ) == (verb, group, version, namespace, resource, sub, name, parts)


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/api/version/",
        "/apis/group/version/",
        "/badprefix/version/resource",
        "/apis/version/resource",
        "/not-api/version/resource",
        "/apis/extensions/v1beta1",
        "/api/version",
        "/api",
        "",
        "/version",
        "/healthz",
        "/openapi/v2",
    ],
)
def test_non_resource_requests(url: str) -> None:
    info = parse_request("GET", url)
    assert not info.is_resource_request
    assert info.verb == "get"


@pytest.mark.parametrize(
    ("url", "name", "verb"),
    [
        ("/apis/group/version/resource", "", "list"),
        ("/apis/group/version/resource?fieldSelector=metadata.name=name1", "name1", "list"),
        (
            "/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1",
            "name1",
            "watch",
        ),
        ("/apis/group/version/resource?fieldSelector=foo=bar", "", "list"),
        ("/apis/group/version/resource?fieldSelector=metadata.name=name1,foo", "", "list"),
        (
            "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=true",
            "",
            "watch",
        ),
        (
            "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=false",
            "",
            "list",
        ),
        # URL-encoded, as client-go sends it (informers of a single object)
        (
            "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%3Dx&watch=true",
            "x",
            "watch",
        ),
    ],
)
def test_field_selector_names_the_object(url: str, name: str, verb: str) -> None:
    info = parse_request("GET", url)
    assert (info.name, info.verb) == (name, verb)


@pytest.mark.parametrize(
    ("value", "verb"),
    [
        ("true", "watch"),
        ("1", "watch"),
        ("t", "watch"),
        ("TRUE", "watch"),
        ("yes", "watch"),
        ("", "watch"),
        ("false", "list"),
        ("0", "list"),
        ("f", "list"),
        ("False", "list"),
        ("fAlSe", "list"),
    ],
)
def test_watch_query_values_as_strconv_parsebool_sees_them(value: str, verb: str) -> None:
    assert parse_request("GET", f"/api/v1/pods?watch={value}").verb == verb


def test_streaming_subresources_and_query_parameters() -> None:
    exec_ = parse_request("POST", "/api/v1/namespaces/d/pods/p/exec?command=ls&stdout=true")
    assert (exec_.verb, exec_.resource, exec_.subresource, exec_.name) == (
        "create",
        "pods",
        "exec",
        "p",
    )
    assert parse_request("GET", "/api/v1/namespaces/d/pods/p/exec").verb == "get"
    patch = parse_request(
        "PATCH",
        "/apis/apps/v1/namespaces/d/deployments/web?"
        "fieldManager=kubectl-client-side-apply&dryRun=All",
    )
    assert patch.param("fieldManager") == "kubectl-client-side-apply"
    assert patch.param("dryRun") == "All"


def test_options_and_streaming_subresources() -> None:
    info = parse_request(
        "GET",
        "/api/v1/pods?labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dnode-1"
        "&resourceVersion=0&watch=true&allowWatchBookmarks=true&timeoutSeconds=300",
    )
    assert info.options() == {
        "labelSelector": "app=web",
        "fieldSelector": "spec.nodeName=node-1",
        "resourceVersion": "0",
        "timeoutSeconds": "300",
        "allowWatchBookmarks": "true",
    }
    assert parse_request("POST", "/api/v1/namespaces/d/pods/p/portforward").streaming
    assert parse_request("GET", "/api/v1/namespaces/d/pods/p/attach?stdin=1").streaming
    assert not parse_request("GET", "/api/v1/namespaces/d/pods/p/log").streaming
