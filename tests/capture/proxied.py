"""One exchange written by the proxy's recorder, as the proxy writes it (for tests that
check what a recording holds of a request and its answer)."""

from __future__ import annotations

import time
from pathlib import Path

from k8s_wiretap.capture.events import End, RequestSeen, ResponseSeen
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.recorder import Recorder
from k8s_wiretap.capture.redact import Redactor


def record_exchange(
    path: Path,
    redactor: Redactor,
    request: tuple[str, str, list[tuple[bytes, bytes]], bytes],
    code: int,
    content_type: str,
    answer: bytes,
) -> None:
    """`request` (method, target, headers, body) and its answer (`code`, a body of
    `content_type`) as exchange x1 of a redacted recording at `path`."""
    method, target, headers, body = request
    recorder = Recorder([FileOutput(path, redacted=True, max_body=1 << 20)], redactor=redactor)
    now = time.time()
    seen = RequestSeen(
        "x1",
        now,
        "default",
        {"address": "127.0.0.1:1"},
        "https://127.0.0.1:6443",
        method,
        target,
        "HTTP/2.0",
        headers,
        body,
        None,
    )
    recorder.handle(seen)
    response = [(b"Content-Type", content_type.encode()), (b"Audit-Id", b"a1")]
    recorder.handle(ResponseSeen("x1", now + 0.01, code, "", "HTTP/2.0", response))
    recorder.handle(End("x1", now + 0.02, body=answer))
    recorder.close()
