"""The wiretap addon's hooks on mitmproxy's own test flows: which records each one makes.

No lab and no listener: mitmproxy's `tflow` builds the flows its proxy would hand the hooks,
`taddons` provides the context (`ctx.options`, `ctx.master`) the option hooks need. The
recorder records synchronously here, so each hook's records can be read right after it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions, hooks, http, tcp, tls
from mitmproxy.options import Options
from mitmproxy.proxy.context import Context
from mitmproxy.test import taddons, tflow

from k8s_wiretap.capture.events import ProxyEvent
from k8s_wiretap.capture.format import body_bytes
from k8s_wiretap.capture.reader import load
from k8s_wiretap.capture.recorder import Recorder
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.proxy import limits
from k8s_wiretap.proxy.addon import DEFAULT_IDLE_TIMEOUT, Wiretap
from k8s_wiretap.proxy.status import status_response
from k8s_wiretap.proxy.upstream import INJECTED

OLD = '{"record":"header","format":"k8s-wiretap-recording","version":1}\n'


class Records:
    """An output that keeps the records."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.closed = False

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def of(self, exchange: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("id") == exchange]

    def kinds(self, exchange: str) -> list[str]:
        return [r["record"] for r in self.of(exchange)]


class Immediate(Recorder):
    """Records each event as it is put, in the caller's thread."""

    def put(self, event: ProxyEvent) -> None:
        self.handle(event)


@pytest.fixture
def out() -> Records:
    return Records()


@pytest.fixture
def wiretap(out: Records) -> Wiretap:
    return Wiretap(Immediate([out], redactor=Redactor()), {"regular": "kubelet"})


def api_request(
    method: str = "GET",
    path: str = "/api/v1/namespaces/default/pods",
    body: bytes = b"",
    **headers: str,
) -> http.HTTPFlow:
    flow = tflow.tflow()
    fields = [(name.encode(), value.encode()) for name, value in headers.items()]
    request = http.Request.make(method, f"https://127.0.0.1:6443{path}", body, fields)
    request.timestamp_start = 1000.0
    flow.request = request
    return flow


def api_response(flow: http.HTTPFlow, status: int = 200, body: bytes = b"") -> None:
    flow.response = http.Response.make(status, body, {"Content-Type": "application/json"})
    flow.response.timestamp_start = 1001.0


# -- HTTP exchanges ---------------------------------------------------------------------------
def test_a_streamed_exchange_is_a_request_a_response_and_an_end_with_the_body(
    wiretap: Wiretap, out: Records
) -> None:
    flow = api_request("POST", body=b'{"kind":"Pod"}', **{"Content-Type": "application/json"})
    flow.metadata[INJECTED] = "kubernetes-admin (system:masters) [client certificate]"
    wiretap.request(flow)
    api_response(flow, 201)
    wiretap.responseheaders(flow)
    assert flow.response is not None and callable(flow.response.stream)
    tee = flow.response.stream
    assert tee(b'{"kind":') == b'{"kind":' and tee(b'"Pod"}') == b'"Pod"}'  # passed on as is
    flow.response.content = None  # streamed: mitmproxy keeps no content
    wiretap.response(flow)

    request, response, end = out.of(flow.id)
    assert [request["record"], response["record"], end["record"]] == ["request", "response", "end"]
    assert request["method"] == "POST" and request["path"] == "/api/v1/namespaces/default/pods"
    assert request["server"] == "https://127.0.0.1:6443" and request["time"] == 1000.0
    assert request["listener"] == "kubelet"  # the listener named for the client's proxy mode
    assert request["client"] == {"address": "127.0.0.1:22", "tls": False, "alpn": "http/1.1"}
    assert request["identity"] == {
        "credential": "added by proxy",
        "user": "kubernetes-admin (system:masters) [client certificate]",
    }
    assert ["Content-Type", "application/json"] in request["headers"]
    assert body_bytes(request["body"]) == b'{"kind":"Pod"}'
    assert (response["status"], response["time"]) == (201, 1001.0)
    assert body_bytes(end["body"]) == b'{"kind":"Pod"}' and "error" not in end


def test_a_response_the_proxy_made_is_recorded_with_its_body(
    wiretap: Wiretap, out: Records
) -> None:
    """The 403 and 503 Statuses are set by an addon, never streamed: their body is the
    response's content."""
    flow = api_request()
    wiretap.request(flow)
    flow.response = status_response(503, "k8s-wiretap: API server is unreachable")
    wiretap.responseheaders(flow)
    wiretap.response(flow)
    end = out.of(flow.id)[-1]
    status = json.loads(body_bytes(end["body"]))
    assert status["kind"] == "Status" and status["code"] == 503
    assert out.of(flow.id)[1]["status"] == 503


def test_an_error_after_the_request_ends_its_exchange(wiretap: Wiretap, out: Records) -> None:
    flow = api_request()
    wiretap.request(flow)
    flow.error = tflow.terr("Client disconnected.")
    wiretap.error(flow)
    assert out.kinds(flow.id) == ["request", "end"]  # one request record, not a second one
    assert out.of(flow.id)[-1]["error"] == "Client disconnected."


def test_a_request_that_broke_before_its_body_is_recorded_at_its_error(
    wiretap: Wiretap, out: Records
) -> None:
    """mitmproxy calls `requestheaders`, then `error` — never `request` — for a request it
    rejects or whose body breaks: the error still gets a request record to end."""
    flow = api_request("PUT", "/api/v1/namespaces/default/configmaps/c")
    flow.request.content = None  # the body never arrived
    flow.request.headers["Content-Length"] = "x"
    flow.error = tflow.terr("HTTP/1 protocol error: bad Content-Length")
    wiretap.error(flow)
    request, end = out.of(flow.id)
    assert request["record"] == "request" and end["record"] == "end"
    assert (
        request["method"] == "PUT" and request["path"] == "/api/v1/namespaces/default/configmaps/c"
    )
    assert ["content-length", "x"] in [[k.lower(), v] for k, v in request["headers"]]
    assert "body" not in request
    assert request["identity"] == {"credential": "none"}  # nothing was added: never forwarded
    assert end["error"] == "HTTP/1 protocol error: bad Content-Length"


def test_a_streamed_request_body_is_recorded_up_to_max_body_once_it_is_in(out: Records) -> None:
    """The request hook comes before a streamed body (`limits`): the request record waits
    for the body's end (the tee's empty call), keeping `max_body` bytes and the size."""
    wiretap = Wiretap(Immediate([out], max_body=4), {"regular": "kubelet"})
    flow = api_request("POST")
    flow.request.data.content = None  # streamed: mitmproxy has no content
    flow.metadata[limits.EARLY] = True
    wiretap.requestheaders(flow)
    wiretap.request(flow)
    tee = flow.request.stream
    assert callable(tee)
    assert out.of(flow.id) == []  # not before its body
    assert tee(b'{"kind"') == b'{"kind"' and tee(b':"Pod"}') == b':"Pod"}'  # passed on whole
    tee(b"")
    (request,) = out.of(flow.id)
    assert body_bytes(request["body"]) == b'{"ki'
    assert (request["body"]["size"], request["body"]["truncated"]) == (14, True)


def test_a_request_body_cut_by_the_response_is_recorded_as_far_as_it_came(
    wiretap: Wiretap, out: Records
) -> None:
    """The API server answers 413 before the body is in: the request is written first."""
    flow = api_request("POST")
    flow.request.data.content = None
    flow.metadata[limits.EARLY] = True
    wiretap.requestheaders(flow)
    wiretap.request(flow)
    assert callable(flow.request.stream)
    flow.request.stream(b"x" * 10)
    api_response(flow, 413)
    wiretap.responseheaders(flow)
    request, response = out.of(flow.id)
    assert (request["record"], request["body"]["size"], response["status"]) == ("request", 10, 413)


def test_a_request_the_proxy_refused_is_recorded_with_the_status_it_got(
    wiretap: Wiretap, out: Records
) -> None:
    flow = api_request()
    limits._replies[flow.client_conn.id] = (400, "k8s-wiretap: invalid header name 'Bad Name'")
    flow.error = tflow.terr("Received invalid header name")  # mitmproxy's words
    wiretap.error(flow)
    request, response, end = out.of(flow.id)
    assert request["record"] == "request" and response["status"] == 400
    assert json.loads(body_bytes(end["body"]))["reason"] == "BadRequest"
    assert end["error"] == "k8s-wiretap: invalid header name 'Bad Name'"  # what the client got


def test_a_failed_tls_handshake_is_a_note(wiretap: Wiretap, out: Records) -> None:
    flow = tflow.tflow()
    conn = flow.client_conn
    conn.error = "Cannot parse ClientHello: " + "ab" * 1000
    wiretap.tls_failed_client(tls.TlsData(conn, Context(conn, Options())))
    (note,) = out.records
    assert note["record"] == "note" and note["level"] == "warning"
    assert note["message"].startswith("TLS handshake with 127.0.0.1:22 failed: Cannot parse")
    assert len(note["message"]) < 400


def test_headers_are_redacted(wiretap: Wiretap, out: Records) -> None:
    flow = api_request(Authorization="Bearer abc.def.ghi")
    wiretap.request(flow)
    request = out.of(flow.id)[0]
    assert request["identity"] == {"credential": "bearer token"}
    authorization = next(v for k, v in request["headers"] if k == "Authorization")
    assert authorization.startswith("Bearer redacted:") and "abc" not in authorization


# -- upgraded connections ---------------------------------------------------------------------
def test_websocket_messages_are_events_and_not_kept_in_memory(
    wiretap: Wiretap, out: Records
) -> None:
    flow = tflow.twebsocketflow()
    wiretap.request(flow)
    wiretap.responseheaders(flow)
    assert flow.response is not None and flow.response.stream is False  # 101: not teed
    wiretap.response(flow)
    assert out.kinds(flow.id) == ["request", "response"]  # a 101 is not the end
    assert flow.websocket is not None
    wiretap.websocket_message(flow)  # the last message is the new one
    assert len(flow.websocket.messages) == 1
    event = out.of(flow.id)[-1]
    assert event["record"] == "event" and event["transport"] == "websocket"
    assert event["from_client"] is False and body_bytes(event["data"]) == b"it's me"
    wiretap.websocket_end(flow)
    end = out.of(flow.id)[-1]
    assert end["record"] == "end" and "error" not in end  # 1000: a normal close

    broken = tflow.twebsocketflow(err=True)
    wiretap.request(broken)
    wiretap.websocket_end(broken)
    assert out.of(broken.id)[-1]["error"] == "websocket closed (1006)"


def test_other_upgrades_are_recorded_as_tcp_chunks_of_their_exchange(
    wiretap: Wiretap, out: Records
) -> None:
    """SPDY (kubectl exec before 1.31) upgrades to raw TCP: mitmproxy's TCP flow on the same
    client connection carries the exchange on."""
    flow = api_request("POST", "/api/v1/namespaces/default/pods/p/exec?command=ls")
    wiretap.request(flow)
    flow.response = http.Response.make(101, b"", {"Upgrade": "SPDY/3.1"})
    wiretap.responseheaders(flow)
    wiretap.response(flow)
    stream = tflow.ttcpflow(client_conn=flow.client_conn)
    stream.messages = [tcp.TCPMessage(True, b"\x80\x03\x00\x01", 5.0)]
    wiretap.tcp_message(stream)
    stream.messages.append(tcp.TCPMessage(False, b"\x80\x03\x00\x02", 6.0))
    wiretap.tcp_message(stream)
    assert len(stream.messages) == 1
    wiretap.tcp_end(stream)
    records = out.of(flow.id)
    assert [r["record"] for r in records] == ["request", "response", "event", "event", "end"]
    assert [(r["kind"], r["from_client"]) for r in records[2:4]] == [("tcp", True), ("tcp", False)]
    assert [r["time"] for r in records[2:4]] == [5.0, 6.0]
    other = tflow.ttcpflow()  # a TCP flow of no recorded upgrade
    wiretap.tcp_message(other)
    wiretap.tcp_end(other)
    assert all(r.get("id") in (flow.id, None) for r in out.records)


# -- options (mitmdump -s addons/wiretap.py --set ...) ----------------------------------------
ROOT = Path(__file__).resolve().parents[2]


def test_loading_the_script_raises_mitmproxys_idle_timeout_to_a_day() -> None:
    """mitmproxy closes connections idle for `tcp_timeout` (600 s by default); a quiet watch
    lives up to an hour when direct."""
    with taddons.context() as context:
        assert context.options.tcp_timeout == 600  # mitmproxy's own
        context.script(str(ROOT / "addons" / "wiretap.py"))
        assert context.options.tcp_timeout == DEFAULT_IDLE_TIMEOUT >= 3600


def test_an_idle_timeout_set_before_loading_stands() -> None:
    """`mitmdump --set tcp_timeout=5 -s addons/wiretap.py`: mitmproxy applies `--set` before
    it loads scripts, and the user's choice is kept."""
    addon = Wiretap()
    with taddons.context(options=Options(tcp_timeout=5)) as context:
        context.master.addons.add(addon)
        assert context.options.tcp_timeout == 5
        context.configure(addon, tcp_timeout=7)
        assert context.options.tcp_timeout == 7
        with pytest.raises(exceptions.OptionsError, match="tcp_timeout must be positive"):
            context.configure(addon, tcp_timeout=0)
        assert context.options.tcp_timeout == 7  # rolled back
        with pytest.raises(exceptions.OptionsError, match="wiretap_max_body"):
            context.configure(addon, wiretap_max_body="lots")


def loaded_as_script(context: taddons.context, addon: Wiretap) -> None:
    """What mitmproxy does when it loads a script: configure every option."""
    context.master.addons.invoke_addon_sync(addon, hooks.ConfigureHook(set(context.options.keys())))


def running(context: taddons.context, addon: Wiretap) -> None:
    """mitmproxy's `running` hook (its listeners are up), then what it scheduled."""
    context.master.addons.invoke_addon_sync(addon, hooks.RunningHook())
    context.master.event_loop.run_until_complete(asyncio.sleep(0))


def test_wiretap_record_refuses_an_existing_file_unless_overwrite(tmp_path: Path) -> None:
    record = tmp_path / "trace.jsonl"
    record.write_text(OLD)
    addon = Wiretap()
    with taddons.context(addon) as context:
        loaded_as_script(context, addon)
        with pytest.raises(exceptions.OptionsError, match=r"exists \(set wiretap_overwrite"):
            context.configure(addon, wiretap_record=str(record))
        with pytest.raises(exceptions.OptionsError, match="does not exist"):
            context.configure(addon, wiretap_record=str(tmp_path / "no" / "trace.jsonl"))
        assert addon.recorder is None and record.read_text() == OLD
        context.configure(addon, wiretap_record=str(record), wiretap_overwrite=True)
        assert record.read_text() == OLD  # configured, not running yet: untouched
        running(context, addon)
        try:
            assert addon.recorder is not None and addon.recorder.started
            flow = api_request()
            addon.request(flow)
            addon.error(flow)
        finally:
            addon.done()
    recording = load(record)
    assert recording.header["redacted"] is True and not recording.warnings
    assert [e.path for e in recording.exchanges] == ["/api/v1/namespaces/default/pods"]


def test_wiretap_record_is_created_only_when_running(tmp_path: Path) -> None:
    record = tmp_path / "trace.jsonl"
    addon = Wiretap()
    with taddons.context(addon) as context:
        loaded_as_script(context, addon)
        context.configure(addon, wiretap_record=str(record), wiretap_redact=False)
        assert not record.exists()
        record.write_text(OLD)  # appeared after the check: O_EXCL refuses to replace it
        running(context, addon)
        assert context.master.should_exit.is_set()  # the proxy shuts down instead
        addon.done()
    assert record.read_text() == OLD


@pytest.mark.parametrize("max_body", [1 << 20, 16])
def test_a_body_in_one_byte_chunks_costs_the_queue_its_bytes_not_an_event_each(
    out: Records, max_body: int
) -> None:
    """300,000 one-byte chunks (1.8 MB on the wire, chunked): the tee gathers what it keeps
    into pieces and counts the rest, so the recorder's queue (not consumed here: a recorder
    that fell behind) holds about the body, not 300,000 events of 512 bytes each, which
    would pass its budget and drop other clients' records."""
    recorder = Recorder([out], max_body=max_body, budget=4 << 20)  # never started
    wiretap = Wiretap(recorder, {"regular": "default"})
    flow = api_request("POST")
    flow.request.data.content = None
    flow.metadata[limits.EARLY] = True
    wiretap.requestheaders(flow)
    wiretap.request(flow)
    tee = flow.request.stream
    assert callable(tee)
    for _ in range(300_000):
        tee(b"x")
    tee(b"")
    assert recorder.dropped == 0
    assert recorder.queued_bytes < min(max_body, 300_000) + 64 * 1024
    recorder.start().close()  # it catches up: what was queued is recorded
    request = out.of(flow.id)[0]
    assert request["body"]["size"] == 300_000
    assert len(body_bytes(request["body"])) == min(max_body, 300_000)
