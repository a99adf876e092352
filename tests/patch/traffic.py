"""Real traffic for the replay tests: what kubectl sent and what the API server answered.

kubectl at `-v=9` logs every request body, the request line (as a curl command with the
Content-Type) and every response body; `exchanges(log)` reads them back. A PATCH exchange plus
the object just before it is one replay case: `check_replay` replays it with the engine, as
the server's release (`server_release`) applies patches, and asserts the server stored what
the engine predicts.
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.patch import PatchSchema, compare, replay
from tests.conftest import Kubectl

_BODY = re.compile(r'"(Request|Response) Body" body=(.*)$')
_CURL = re.compile(r"curl -v -X(\w+) (.*) '(https?://[^']+)'")
_TYPE = re.compile(r'-H "Content-Type: ([^"]+)"')


@dataclass
class LoggedCall:
    """One request kubectl -v=8 logged (curl line, request and response bodies)."""

    method: str
    url: str
    content_type: str
    request: str
    response: str

    def path(self) -> str:
        return re.sub(r"^https?://[^/]+", "", self.url).split("?")[0]

    def query(self) -> dict[str, str]:
        _, _, query = self.url.partition("?")
        return dict(p.partition("=")[::2] for p in query.split("&") if p)


def _body(first: str, lines: list[str]) -> str:
    """A logged body: `"quoted"` on one line, or `<` then tab-indented lines then ` >`."""
    if first.startswith('"'):
        return str(json.loads(first))
    body = []
    while lines and not lines[0].startswith(" >"):
        body.append(lines.pop(0).removeprefix("\t"))
    return "\n".join(body)


def exchanges(log: str) -> list[LoggedCall]:
    """The exchanges in kubectl's `-v=9` stderr, in order."""
    out: list[LoggedCall] = []
    lines = log.splitlines()
    request = ""
    pending: LoggedCall | None = None
    while lines:
        line = lines.pop(0)
        body = _BODY.search(line)
        curl = _CURL.search(line)
        if body and body.group(1) == "Request":
            request = _body(body.group(2), lines)
        elif curl:
            content_type = _TYPE.search(curl.group(2))
            kind = content_type.group(1) if content_type else ""
            pending = LoggedCall(curl.group(1), curl.group(3), kind, request, "")
        elif body and pending is not None:
            pending.response = _body(body.group(2), lines)
            out.append(pending)
            pending, request = None, ""
    return out


def traced(kubectl: Kubectl, *args: str, stdin: str | None = None) -> list[LoggedCall]:
    result = kubectl.run("-v=9", *args, stdin=stdin, check=False)
    if result.returncode != 0:  # the last line is kubectl's own error message
        raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr.splitlines()[-1]}")
    return exchanges(result.stderr)


def last_patch(log: list[LoggedCall]) -> LoggedCall:
    patches = [e for e in log if e.method == "PATCH"]
    assert patches, "kubectl sent no PATCH"
    return patches[-1]


@cache
def server_release(api: ApiClient) -> str:
    """The API server's gitVersion ("v1.30.2"): its rules and shipped table replay."""
    return str(api.get("/version").json()["gitVersion"])


def check_replay(
    exchange: LoggedCall,
    before: dict[str, Any],
    everything: bool = True,
    release: str | None = None,
    schema: PatchSchema | None = None,
) -> dict[str, Any]:
    """Replay `exchange` on `before` as `release`'s server, with `schema` (default: the
    release's shipped table); assert the server's answer agrees. Returns the replay."""
    schema = schema or PatchSchema.bundled(release)
    after = json.loads(exchange.response)
    assert after.get("kind") != "Status", after
    manager = exchange.query().get("fieldManager")
    force = exchange.query().get("force") == "true"
    body, content_type = exchange.request, exchange.content_type
    subresource = "status" if exchange.path().endswith("/status") else ""
    local = replay(
        content_type,
        body,
        before,
        schema=schema,
        manager=manager,
        force=force,
        release=release,
        subresource=subresource,
    )
    for scope in (False, True) if everything else (False,):
        result = compare(
            content_type,
            body,
            before,
            local,
            after,
            schema=schema,
            manager=manager,
            subresource=subresource,
            everything=scope,
        )
        # the deployment controller may write its revision annotation between two requests
        # kubectl sends back to back: a change of the whole object the patch did not make
        noise = "deployment.kubernetes.io/revision" if scope else "\0"
        mismatches = [m for m in result.mismatches if noise not in m]
        assert not mismatches, (scope, mismatches, exchange.request)
    return dict(local)


def get(api: ApiClient, path: str) -> dict[str, Any]:
    response = api.get(path)
    assert response.status == 200, response.body
    value = response.json()
    assert isinstance(value, dict)
    return value


CONTENT_TYPES = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}


def request(
    layout: Layout, method: str, path: str, body: Any = None, kind: str = ""
) -> tuple[int, Any]:
    """One request with the admin certificate; (status, decoded JSON body)."""
    context = ssl.create_default_context(cafile=str(layout.pki / "ca.crt"))
    context.load_cert_chain(str(layout.pki / "admin.crt"), str(layout.pki / "admin.key"))
    url = urlsplit(layout.server)
    connection = http.client.HTTPSConnection(url.hostname or "", url.port, context=context)
    headers = {"Accept": "application/json"}
    if kind:
        headers["Content-Type"] = CONTENT_TYPES.get(kind, kind)
    data = None if body is None else json.dumps(body)
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        return response.status, json.loads(payload) if payload else None
    finally:
        connection.close()
