"""An exchange that ends with no answer at all — its client gave up, its connection was
cut — is recorded with how it ended and explained as such, against the real proxy in front
of the real lab: a POST whose client closes the connection halfway through its body."""

from __future__ import annotations

import json
import socket
import time

from k8s_wiretap.capture.exchange import Exchange
from tests.conftest import cli
from tests.proxy.conftest import Wiretap
from tests.proxy.test_malformed import recorded

PATH = "/api/v1/namespaces/default/configmaps?unanswered="


def give_up(wiretap: Wiretap) -> Exchange:
    """POST 20 bytes of the 1,000 promised, then close; the exchange once recorded ended.
    The proxy must have read the request before the close (else it saw no request, only a
    closed connection): a busy machine gets a few tries, each waiting longer."""
    for attempt in range(1, 4):
        path = f"{PATH}{attempt}"
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "User-Agent: kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef0\r\n"
            "Content-Length: 1000\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", wiretap.port), timeout=15) as conn:
            conn.sendall(head + b'{"kind": "ConfigMap"')
            time.sleep(0.5 * attempt)
        try:
            return recorded(wiretap, path)
        except AssertionError:
            continue
    raise AssertionError("the proxy never recorded the request")


def test_a_post_its_client_gives_up_on_says_it_got_no_answer(wiretap: Wiretap) -> None:
    ended = give_up(wiretap)
    assert ended.status is None
    assert ended.error

    result = cli("explain", str(wiretap.record), "--format", "json")
    assert result.returncode == 0, result.stderr
    (line,) = [json.loads(text) for text in result.stdout.splitlines() if ended.id in text[:200]]
    error = ended.error.rstrip(".").lower()
    assert line["rule"] == "no-answer"
    assert line["summary"] == f"kubectl: create configmaps in default: no answer ({error})"
    assert "the client gave up first" in line["why"]
