"""What lands in etcd: a watch on the API server's etcd prefix, recorded beside the traffic.

With `--etcd URL` (the lab passes its etcd), the proxy watches etcd itself through its JSON
gateway (`POST /v3/watch`, etcd's grpc-gateway, one JSON message per line) from the revision
current when it starts, and records every change — key, revision, the stored bytes — as an
`etcd` record. The explanation of a write can then show the record that landed, checked
against its key and its new resourceVersion (which is the etcd revision), instead of
predicting it. Values are redacted by the recorder as API bodies are.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from k8s_wiretap.capture.events import Note, ProxyEvent, Stored

__all__ = ["EtcdWatch"]

PREFIX = "/registry/"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _prefix_end(prefix: str) -> str:
    """etcd's range end for every key that starts with `prefix`."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class EtcdWatch:
    """A thread that puts every etcd change under `prefix` on `put`, until stopped."""

    def __init__(self, url: str, put: Callable[[ProxyEvent], None], prefix: str = PREFIX):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 2379
        self.put = put
        self.prefix = prefix
        self._connection: http.client.HTTPConnection | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="k8s-wiretap etcd", daemon=True)

    def start(self) -> EtcdWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.close()
        self._thread.join(5)

    def _post(self, path: str, body: dict[str, Any]) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=None)
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        self._connection = connection
        return connection.getresponse()

    def _revision(self) -> int:
        """The revision etcd is at now."""
        query = {"key": _b64(self.prefix), "range_end": _b64(_prefix_end(self.prefix))}
        answer = json.loads(self._post("/v3/kv/range", {**query, "count_only": True}).read())
        return int(answer["header"]["revision"])

    def _run(self) -> None:
        try:
            start = self._revision() + 1
            watch = {
                "key": _b64(self.prefix),
                "range_end": _b64(_prefix_end(self.prefix)),
                "start_revision": start,
            }
            response = self._post("/v3/watch", {"create_request": watch})
            while not self._stopped.is_set():
                line = response.readline()
                if not line:
                    break
                for stored in _changes(json.loads(line)):
                    self.put(stored)
        except (OSError, ValueError, KeyError, http.client.HTTPException) as error:
            if not self._stopped.is_set():
                message = f"etcd watch on {self.host}:{self.port} ended: {error}"
                self.put(Note(time.time(), "error", message))


def _changes(message: dict[str, Any]) -> list[Stored]:
    now = time.time()
    found = []
    for event in (message.get("result") or {}).get("events") or []:
        kv = event.get("kv") or {}
        found.append(
            Stored(
                now,
                base64.b64decode(kv.get("key", "")).decode("utf-8", "replace"),
                int(kv.get("mod_revision", 0)),
                event.get("type") == "DELETE",
                base64.b64decode(kv.get("value", "")),
            )
        )
    return found
