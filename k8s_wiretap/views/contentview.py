"""A mitmproxy contentview for Kubernetes bodies (mitmproxy 12's Contentview API).

    mitmproxy -s "$(k8s-wiretap addon --path contentview)"   # or mitmweb, or mitmdump

People who live in mitmproxy see Kubernetes protobuf, CBOR, JSON and watch streams as the
JSON the API server would send, redacted as recordings are (views/kubetext.py does the work;
this module only tells it what mitmproxy knows of the message). The view names itself
"Kubernetes" and picks itself (`render_priority` 2, above mitmproxy's JSON and protobuf views
at 1) for Kubernetes media types, `k8s\\0` bodies and bodies on an API server's paths.
"""

from __future__ import annotations

from mitmproxy import contentviews, http

from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.views.kubetext import Message, is_kubernetes, render

__all__ = ["PRIORITY", "KubernetesContentview", "message_of"]

PRIORITY = 2.0  # mitmproxy's own views say 1 for what they read, raw 0.1


class KubernetesContentview(contentviews.Contentview):
    """Kubernetes bodies decoded and redacted. One redaction key per view (per mitmproxy
    process): equal secret values show equal placeholders, nothing can be recovered."""

    def __init__(self) -> None:
        self._redactor = Redactor()

    @property
    def name(self) -> str:
        return "Kubernetes"

    @property
    def syntax_highlight(self) -> contentviews.SyntaxHighlight:
        return "yaml"  # JSON is YAML: mitmproxy's JSON view highlights the same way

    def prettify(self, data: bytes, metadata: contentviews.Metadata) -> str:
        return render(message_of(metadata), data, self._redactor)

    def render_priority(self, data: bytes, metadata: contentviews.Metadata) -> float:
        if not data:
            return 0
        return PRIORITY if is_kubernetes(message_of(metadata), data) else 0


def message_of(metadata: contentviews.Metadata) -> Message:
    """What the view needs to know of the message mitmproxy shows."""
    flow = metadata.flow
    request = flow.request if isinstance(flow, http.HTTPFlow) else None
    message = metadata.http_message
    if isinstance(message, http.Request):
        return Message(message.method, message.path, message.headers.get("content-type", ""))
    if isinstance(message, http.Response) and request is not None:
        return Message(
            request.method,
            request.path,
            message.headers.get("content-type", ""),
            accept=request.headers.get("accept", ""),
            status=message.status_code,
        )
    websocket = metadata.websocket_message
    if websocket is not None and request is not None:
        return Message(
            request.method,
            request.path,
            websocket_text=websocket.is_text,
            from_client=websocket.from_client,
        )
    return Message("GET", "/", metadata.content_type or "")
