"""Malformed requests against the real proxy in front of the real lab, sent as raw bytes.

What the API server's Go HTTP server refuses, the proxy refuses too (400, as a Kubernetes
Status, the connection closed) without passing it upstream, and records: an exchange with
the response the client got when the request line could be read, else a note.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any

import pytest

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording
from tests.proxy.conftest import Wiretap


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    closed: bool  # the proxy closed the connection after it

    def status_object(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.body)
        return document


def exchange(
    port: int, data: bytes, *, timeout: float = 15, chunk: int = 1 << 16, then: bytes = b""
) -> Reply:
    """Send `data` (as much of it as the proxy reads), and `then` a moment later (once the
    proxy has seen `data`); then read its answer to the end."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        try:
            if then:
                conn.sendall(data)
                time.sleep(0.5)
                data = then
            for start in range(0, len(data), chunk):
                conn.sendall(data[start : start + chunk])
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused while sending: the answer is still there to read
        return read_reply(conn)


def read_reply(conn: socket.socket, *, to_close: bool = True) -> Reply:
    """The response on `conn`, read to the connection's close (`to_close`), or to the end
    of its Content-Length."""
    received = b""
    closed = False
    while not (not to_close and _complete(received)):
        try:
            data = conn.recv(1 << 16)
        except TimeoutError:
            break
        if not data:
            closed = True
            break
        received += data
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/1."), f"no HTTP response: {received[:200]!r}"
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return Reply(int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body, closed)


def _complete(received: bytes) -> bool:
    head, end, body = received.partition(b"\r\n\r\n")
    if not end:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def assert_status(reply: Reply, code: int, words: str) -> None:
    """A Kubernetes Status failure with `code`, whose message says `words`; then closed."""
    assert reply.status == code
    assert reply.headers["content-type"] == "application/json"
    status = reply.status_object()
    assert (status["kind"], status["apiVersion"], status["code"]) == ("Status", "v1", code)
    assert words in status["message"]
    assert reply.closed


def recorded(wiretap: Wiretap, path: str) -> Exchange:
    """The exchange of `path` once it has ended in the recording."""

    def ended(recording: Recording) -> bool:
        return any(e.path == path and e.end is not None for e in recording.exchanges)

    recording = wiretap.wait_for(path, ended)
    return next(e for e in recording.exchanges if e.path == path)


def noted(wiretap: Wiretap, words: str) -> dict[str, Any]:
    def found(recording: Recording) -> bool:
        return any(words in note["message"] for note in recording.notes)

    recording = wiretap.wait_for(f"a note saying {words!r}", found)
    return next(note for note in recording.notes if words in note["message"])


BAD_HEADS = {
    "header-name": (b"Bad Name: x\r\n", "invalid header name 'Bad Name'"),
    "header-nul": (b"X-Test: a\x00b\r\n", "control character in the value of header"),
    "header-no-colon": (b"NoColonHere\r\n", "invalid header name"),
    "line-folding": (b"X-Test: a\r\n continued\r\n", "obsolete line folding"),
    "content-length": (b"Content-Length: ten\r\n", "invalid content-length header"),
}


@pytest.mark.parametrize("case", sorted(BAD_HEADS))
def test_bad_headers_are_refused_with_a_status_and_recorded(wiretap: Wiretap, case: str) -> None:
    header, words = BAD_HEADS[case]
    path = f"/version?malformed={case}"
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + header + b"\r\n"
    reply = exchange(wiretap.port, head)
    assert_status(reply, 400, words)

    refused = recorded(wiretap, path)
    assert refused.status == 400
    assert refused.response_body is not None
    assert json.loads(refused.response_body.data)["code"] == 400
    assert refused.error is not None and words in refused.error
    assert refused.request_header("host") == "127.0.0.1"  # the request as far as it was read


@pytest.mark.parametrize("version", ["HTTP/9.9", "HTTP/2.0", "HTTP/0.9", "HTTP/1.2"])
def test_http_versions_other_than_1_0_and_1_1_are_refused(wiretap: Wiretap, version: str) -> None:
    path = f"/version?version={version}"
    reply = exchange(wiretap.port, f"GET {path} {version}\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert_status(reply, 400, f"HTTP version '{version}' is not supported")
    refused = recorded(wiretap, path)
    assert (refused.status, refused.request.http_version) == (400, version)


def test_http_1_0_still_passes(wiretap: Wiretap) -> None:
    reply = exchange(wiretap.port, b"GET /version?v=1.0 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    assert reply.status == 200
    assert "gitVersion" in json.loads(reply.body)


def test_a_bad_chunk_size_is_answered_400_and_recorded(wiretap: Wiretap) -> None:
    path = "/api/v1/namespaces/default/configmaps?malformed=chunk"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    reply = exchange(wiretap.port, head, then=b'5\r\n{"a":\r\nzz\r\nnot a chunk\r\n')
    assert_status(reply, 400, "protocol error")
    refused = recorded(wiretap, path)
    assert refused.status == 400
    assert refused.request_body is not None and refused.request_body.data == b'{"a":'


def test_the_pri_preface_of_http2_without_alpn_is_refused(wiretap: Wiretap) -> None:
    reply = exchange(wiretap.port, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    assert_status(reply, 400, "HTTP version 'HTTP/2.0' is not supported")
    recorded(wiretap, "*")


def test_bytes_that_are_not_http_are_refused_and_noted(wiretap: Wiretap) -> None:
    reply = exchange(wiretap.port, b"\x00\x01\x02 hello there\r\n\r\n")
    assert_status(reply, 400, "malformed request line")
    note = noted(wiretap, "malformed request line '\\x00\\x01\\x02 hello there'")
    assert note["message"].startswith("refused 127.0.0.1:")


def test_tls_garbage_is_noted(wiretap: Wiretap) -> None:
    """Bytes that start like a TLS record and are not one: the handshake fails, a note says
    from whom."""
    with socket.create_connection(("127.0.0.1", wiretap.port), timeout=10) as conn:
        port = conn.getsockname()[1]
        conn.sendall(b"\x16\x03\x01\x00\x08" + b"\x01\x00\x00\x04" + b"\xde\xad\xbe\xef")
        conn.recv(1024)  # closed (or an alert)
    note = noted(wiretap, f"TLS handshake with 127.0.0.1:{port} failed")
    assert note["level"] == "warning"


def test_a_client_that_distrusts_the_proxy_ca_is_noted(wiretap: Wiretap) -> None:
    context = ssl.create_default_context()  # the system's CAs: not the proxy's
    with socket.create_connection(("127.0.0.1", wiretap.port), timeout=10) as conn:
        port = conn.getsockname()[1]
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(conn, server_hostname="127.0.0.1")
    noted(wiretap, f"TLS handshake with 127.0.0.1:{port} failed")
