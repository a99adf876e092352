"""k8s-wiretap as a plain mitmproxy script.

    mitmdump -s "$(k8s-wiretap addon --path)" --mode reverse:https://127.0.0.1:6443 \\
        --set wiretap_record=recording.jsonl [--set wiretap_redact=false] \\
        [--set wiretap_max_body=16m] [--set wiretap_console=true]

(`-s addons/wiretap.py` in a checkout.) Run the mitmdump installed beside k8s-wiretap: the
script imports it.

Records exactly what `k8s-wiretap proxy` records. Upstream credentials and TLS are then
mitmproxy's own business (`client_certs`, `ssl_verify_upstream_trusted_ca`, ...). Idle
connections are closed after mitmproxy's `tcp_timeout`, which loading this script raises
from 600 s to one day unless it was set (`--set tcp_timeout=N`).
"""

from k8s_wiretap.proxy.addon import Wiretap
from k8s_wiretap.proxy.guard import Guard
from k8s_wiretap.views.console import ConsoleOutput

addons = [Guard(), Wiretap(console=ConsoleOutput)]
