"""The wire changes of the last two releases, explained
(docs/decoding.md#what-137-and-138-changed-on-the-wire): exchanges the lab cannot make — an
exec upgraded to a WebSocket (the lab's hollow node has no address), responses without
managedFields (1.38's alpha ManagedFieldsOptOut) — written through the proxy's own recorder
as the proxy writes them, then explained; and the watch lists of the committed recording of
the current release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.events import End, Message, RequestSeen, ResponseSeen
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.reader import load
from k8s_wiretap.capture.recorder import Recorder
from k8s_wiretap.capture.records import Client
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.explain.analysis import DROPPED, Analysis
from k8s_wiretap.explain.summaries import Summaries
from tests.decode.test_remotecommand import EXIT_3
from tests.recorded import story

KUBECTL = b"kubectl/v1.38.0 (linux/amd64) kubernetes/abcdef0"
EXEC = "/api/v1/namespaces/default/pods/web/exec?command=sh&command=-c&command=exit+3&stdout=true"
CM = "/api/v1/namespaces/default/configmaps/menu"
DROP = b"application/json;drop=metadata.managedFields, application/json"
MANAGED = [
    {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "v1",
        "time": "2026-12-07T08:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:soup": {}}},
    }
]


class Recorded:
    """Exchanges written by the proxy's recorder to `path`, one at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.recorder = Recorder([FileOutput(path, redacted=True, max_body=1 << 20)])
        self.recorder.redactor = Redactor()
        self.clock = 100.0

    def exchange(
        self,
        id: str,
        method: str,
        target: str,
        headers: list[tuple[bytes, bytes]],
        status: int,
        answer_headers: list[tuple[bytes, bytes]],
        body: bytes | None = None,
        answer: bytes | None = None,
        messages: tuple[tuple[bool, bytes], ...] = (),
    ) -> None:
        self.clock += 1
        client: Client = {"address": "127.0.0.1:1"}
        self.recorder.handle(
            RequestSeen(
                id, self.clock, "default", client, "https://127.0.0.1:6443", method, target,
                "HTTP/1.1", [(b"User-Agent", KUBECTL), *headers], body, None,
            )
        )  # fmt: skip
        self.recorder.handle(
            ResponseSeen(id, self.clock + 0.1, status, "", "HTTP/1.1", answer_headers)
        )
        for n, (from_client, data) in enumerate(messages):
            self.recorder.handle(
                Message(id, self.clock + 0.2 + n / 100, "websocket", from_client, data, False)
            )
        self.recorder.handle(End(id, self.clock + 0.5, body=answer))

    def summaries(self) -> Summaries:
        self.recorder.close()
        return Summaries(Analysis.of(load(self.path)))


def _configmap(version: str, managed: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": "menu",
        "namespace": "default",
        "uid": "u1",
        "resourceVersion": version,
    }
    if managed:
        meta["managedFields"] = MANAGED
    return {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta, "data": {"soup": "leek"}}


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


JSON = [(b"Content-Type", b"application/json")]


def test_an_exec_upgraded_to_a_websocket_says_its_protocol_and_exit_code(tmp_path: Path) -> None:
    recorded = Recorded(tmp_path / "exec.jsonl")
    upgrade = [
        (b"Connection", b"Upgrade"),
        (b"Upgrade", b"websocket"),
        (b"Sec-WebSocket-Version", b"13"),
        (b"Sec-WebSocket-Protocol", b"v5.channel.k8s.io"),
        (b"Kubectl-Command", b"kubectl exec"),
    ]
    chosen = [(b"Upgrade", b"websocket"), (b"Sec-WebSocket-Protocol", b"v5.channel.k8s.io")]
    status = b"\x03" + _json(EXIT_3)
    recorded.exchange("1", "GET", EXEC, upgrade, 101, chosen, messages=((False, status),))
    summaries = recorded.summaries()
    (exchange,) = summaries.analysis.exchanges
    said = summaries.explain(exchange)
    assert (exchange.info.verb, said.rule) == ("get", "pod-stream")
    assert said.summary == (
        "kubectl exec: exec to Pod default/web, a stream through its kubelet"
        " over a WebSocket (v5.channel.k8s.io); it ended: exit code 3"
    )


def test_a_spdy_exec_the_server_refused_says_what_was_offered(tmp_path: Path) -> None:
    recorded = Recorded(tmp_path / "spdy.jsonl")
    offered = [
        (b"X-Stream-Protocol-Version", v.encode())
        for v in ("v5.channel.k8s.io", "v4.channel.k8s.io")
    ]
    upgrade = [(b"Connection", b"Upgrade"), (b"Upgrade", b"SPDY/3.1"), *offered]
    refusal = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "error dialing backend: no address", "code": 500}  # fmt: skip
    recorded.exchange("1", "POST", EXEC, upgrade, 500, JSON, answer=_json(refusal))
    summaries = recorded.summaries()
    said = summaries.explain(summaries.analysis.exchanges[0])
    assert said.rule == "server-error"
    assert said.summary.endswith(
        "error dialing backend: no address (a SPDY upgrade offering v5.channel.k8s.io,"
        " v4.channel.k8s.io)"
    )


def test_a_read_without_managed_fields_says_so_and_whether_the_server_obliged(
    tmp_path: Path,
) -> None:
    recorded = Recorded(tmp_path / "drop.jsonl")
    asked = [(b"Accept", DROP)]
    recorded.exchange("1", "GET", CM, asked, 200, JSON, answer=_json(_configmap("10", False)))
    recorded.exchange("2", "GET", CM, asked, 200, JSON, answer=_json(_configmap("10", True)))
    recorded.exchange("3", "GET", CM, [], 200, JSON, answer=_json(_configmap("10", True)))
    summaries = recorded.summaries()
    dropped, ignored, plain = (summaries.explain(e).summary for e in summaries.analysis.exchanges)
    assert dropped == (
        "kubectl: get ConfigMap default/menu (without managedFields, as the client asked:"
        " Accept drop=metadata.managedFields)"
    )
    assert ignored == (
        "kubectl: get ConfigMap default/menu (asked without managedFields, Accept"
        " drop=metadata.managedFields: the server ignored it and sent them, as one without"
        " the ManagedFieldsOptOut gate does)"
    )
    assert plain == "kubectl: get ConfigMap default/menu"


APPLY = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"menu"},"data":{"soup":"leek"}}'
APPLY_HEADERS = [(b"Content-Type", b"application/apply-patch+yaml")]


def test_a_server_side_apply_starts_from_an_object_that_kept_its_managers(tmp_path: Path) -> None:
    recorded = Recorded(tmp_path / "apply.jsonl")
    recorded.exchange("1", "GET", CM, [], 200, JSON, answer=_json(_configmap("10", True)))
    dropped = [(b"Accept", DROP)]
    recorded.exchange("2", "GET", CM, dropped, 200, JSON, answer=_json(_configmap("10", False)))
    patch = f"{CM}?fieldManager=kubectl"
    answer = _json(_configmap("11", True))
    recorded.exchange("3", "PATCH", patch, APPLY_HEADERS, 200, JSON, APPLY, answer)
    summaries = recorded.summaries()
    replay = summaries.analysis.replay(summaries.analysis.exchanges[2])
    assert replay is not None and replay.before_from is not None
    assert (replay.before_from.exchange, replay.matches_server) == ("1", True)


def test_a_server_side_apply_seen_only_without_managers_is_not_replayed(tmp_path: Path) -> None:
    recorded = Recorded(tmp_path / "apply.jsonl")
    dropped = [(b"Accept", DROP)]
    recorded.exchange("1", "GET", CM, dropped, 200, JSON, answer=_json(_configmap("10", False)))
    patch = f"{CM}?fieldManager=kubectl"
    answer = _json(_configmap("11", True))
    recorded.exchange("2", "PATCH", patch, APPLY_HEADERS, 200, JSON, APPLY, answer)
    summaries = recorded.summaries()
    replay = summaries.analysis.replay(summaries.analysis.exchanges[1])
    assert replay is not None
    assert (replay.matches_server, replay.note) == (None, DROPPED)


def _watch_lists() -> tuple[Summaries, list[Any]]:
    summaries = Summaries(Analysis.of(story()))
    lists = [
        e
        for e in summaries.analysis.exchanges
        if e.info.verb == "watch" and e.info.param("sendInitialEvents") == "true"
    ]
    return summaries, lists


def test_an_informer_starts_with_a_watch_list_its_initial_events_and_their_bookmark() -> None:
    """KEP-3157 on the committed recording of the current release: the controller
    manager's Namespace informer asks for the current state and changes in one watch, gets
    each Namespace as ADDED, then the BOOKMARK annotated k8s.io/initial-events-end, then
    changes."""
    summaries, lists = _watch_lists()
    watch = next(
        e
        for e in lists
        if (e.component, e.info.resource) == ("controller-manager/shared-informers", "namespaces")
    )
    assert {k: watch.info.param(k) for k in ("watch", "resourceVersionMatch")} == {
        "watch": "true",
        "resourceVersionMatch": "NotOlderThan",
    }
    assert watch.info.param("allowWatchBookmarks") == "true"
    events = summaries.analysis.events(watch)
    end = [e.phase for e in events].index("initial-end")
    initial, bookmark = events[:end], events[end]
    assert initial and all(
        (e.type, e.kind, e.phase) == ("ADDED", "Namespace", "initial") for e in initial
    )
    assert bookmark.type == "BOOKMARK" and bookmark.object["metadata"] == {
        "resourceVersion": bookmark.resource_version,
        "annotations": {"k8s.io/initial-events-end": "true"},
    }
    assert int(bookmark.resource_version) >= max(int(e.resource_version) for e in initial)
    assert all(e.phase == "change" for e in events[end + 1 :])
    said = summaries.explain(watch)
    assert (said.rule, said.summary) == (
        "informer-watch-list",
        "controller-manager/shared-informers's informer starts: a watch list of every"
        f" Namespace ({len(events)} events)",
    )


def test_a_gzipped_watch_list_decodes_event_by_event() -> None:
    """WatchListCompression (beta and on from its first release): a watch list asked for
    with Accept-Encoding gzip is answered gzipped, and decodes as the plain ones do."""
    summaries, lists = _watch_lists()
    zipped = [e for e in lists if e.response_header("content-encoding") == "gzip"]
    assert zipped and all(e.request_header("accept-encoding") == "gzip" for e in zipped)
    for watch in zipped:
        events = summaries.analysis.events(watch)
        assert [e.error for e in events] == [None] * len(events)
        assert [e.phase for e in events].count("initial-end") == 1
