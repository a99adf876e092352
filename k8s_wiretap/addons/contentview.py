"""The Kubernetes contentview as a plain mitmproxy script.

    mitmproxy -s "$(k8s-wiretap addon --path contentview)"
    mitmweb -s "$(k8s-wiretap addon --path contentview)"
    mitmdump -n -r flows.mitm -s "$(k8s-wiretap addon --path contentview)" --flow-detail 3

(`-s addons/contentview.py` in a checkout.)

Kubernetes protobuf, CBOR, JSON and watch streams show as the JSON the API server would send,
redacted as recordings are (Secret data, tokens). The view is "Kubernetes" in mitmproxy's
view list and is picked automatically for Kubernetes bodies. It can be loaded beside
the recording addon, wiretap.py (two `-s`).
"""

from mitmproxy import contentviews

from k8s_wiretap.views.contentview import KubernetesContentview

contentviews.add(KubernetesContentview)
