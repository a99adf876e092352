"""The scripts plain mitmproxy loads with `-s`: `wiretap.py` records as `k8s-wiretap proxy`
does, `contentview.py` shows Kubernetes bodies decoded. `k8s-wiretap addon --path` prints
where each is installed."""
