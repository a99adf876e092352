"""The Kubernetes contentview as a plain mitmproxy script.

    mitmproxy -s addons/contentview.py
    mitmweb -s addons/contentview.py
    mitmdump -n -r flows.mitm -s addons/contentview.py --flow-detail 3

Kubernetes protobuf, CBOR, JSON and watch streams show as the JSON the API server would send,
redacted as recordings are (Secret data, tokens). The view is "Kubernetes" in mitmproxy's
view list and is picked automatically for Kubernetes bodies. It can be loaded beside
addons/wiretap.py (two `-s`).
"""

from mitmproxy import contentviews

from k8s_wiretap.views.contentview import KubernetesContentview

contentviews.add(KubernetesContentview)
