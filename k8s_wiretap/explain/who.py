"""Who sent an exchange: a component for every exchange, from everything on the wire.

The evidence, strongest first (`Who.how` says which decided; `kube/agents.attribute` weighs
it, for `Exchange.component` too):

- **user agent**: a program the table knows (`kube/data/agents.yaml`) by its User-Agent:
  kubectl, each controller of the controller manager, the scheduler, Helm, the Python and
  JavaScript clients, ... An agent the table does not know is shown as it names itself (its
  first word), never guessed.
- **behaviour**: what the program does says more than its name: the lab's hollow kubelet
  calls itself `kubemark` but authenticates as `system:node:<node>`, so it is that node's
  kubelet; the `kubectl-dispatcher` asks `/version` on the connection its kubectl then uses,
  so that kubectl's command is the dispatcher's too.
- **identity**: when the agent says nothing useful (none, or an HTTP library's default such
  as `Go-http-client`), the user its credential names: `system:node:<node>` is that node's
  kubelet, `system:kube-scheduler` the scheduler, a kube-system service account named after
  a controller that controller, a distribution's own user its component (`eks:…`,
  `system:gke-…`, OpenShift's operators), any other service account a pod's, and any other
  user that user (`user/<name>`: a person, unless a `system:` identity).
- **listener**: a proxy listener named after a component (the lab's `kubelet` listener).

`unknown` only when nothing at all is known.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from k8s_wiretap.capture.exchange import Exchange, Identity
from k8s_wiretap.kube.agents import attribute, recognize

__all__ = ["Who", "who_in", "who_of"]

DISPATCHER = "kubectl-dispatcher"
DISPATCH_WINDOW = 10.0  # seconds from the dispatcher's /version to its kubectl's first request
DISPATCH_LOOKAHEAD = 200  # exchanges looked at after it


@dataclass(frozen=True, slots=True)  # shared: who_of remembers its answers
class Who:
    """Who sent one exchange, and what on the wire says so."""

    component: str  # `kubectl`, `controller-manager/deployment-controller`, `kubelet`, ...
    client: str = ""  # the program, with its version when known: `kubectl v1.32.4`
    version: str = ""
    command: str = ""  # kubectl's Kubectl-Command: `kubectl apply`
    session: str = ""  # kubectl's Kubectl-Session (one per kubectl run)
    identity: str = ""  # the credential's user (and client certificate) the proxy saw
    node: str = ""  # a kubelet's node
    how: str = "nothing"  # which evidence decided: user agent, behaviour, identity, listener
    why: str = ""  # the evidence, in words

    def to_json(self) -> dict[str, str]:
        return {
            "component": self.component,
            "client": self.client,
            "version": self.version,
            "command": self.command,
            "session": self.session,
            "identity": self.identity,
            "node": self.node,
            "how": self.how,
            "why": self.why,
        }


def _identity(identity: Identity, certificate: str) -> str:
    parts = []
    if identity.credential == "added by proxy":
        parts.append(f"{identity.user or 'a kubeconfig identity'}, added by the proxy")
    elif identity.credential != "none":
        parts.append(f"{identity.user} [{identity.credential}]".strip())
    if certificate:
        parts.append(f"client certificate CN={certificate}")
    return "; ".join(parts)


def who_of(exchange: Exchange) -> Who:
    """Who sent `exchange`, from the exchange alone."""
    request = exchange.request
    return _who(
        exchange.user_agent,
        request.identity,
        request.client.certificate,
        request.listener,
        exchange.request_header("kubectl-command"),
        exchange.request_header("kubectl-session"),
    )


@lru_cache(maxsize=4096)  # what decides is the same for every request of a client
def _who(
    user_agent: str,
    identity: Identity,
    certificate: str,
    listener: str,
    command: str,
    session: str,
) -> Who:
    found = attribute(user_agent, listener, identity.user, certificate)
    agent, user, component = found.agent, found.user, found.component
    return Who(
        component=component,
        client=agent.client,
        version=agent.version,
        command=command,
        session=session,
        identity=_identity(identity, certificate),
        node=user.node if user is not None and component == "kubelet" else "",
        how=found.how,
        why=found.why,
    )


def _dispatched(exchanges: Sequence[Exchange], exchange: Exchange) -> Exchange | None:
    """The first request of the kubectl that the dispatcher's `exchange` ran: the next
    kubectl request on the same client connection."""
    address = exchange.request.client.address
    if not address:
        return None
    start = bisect.bisect_right(exchanges, exchange.time, key=lambda e: e.time)
    for later in exchanges[start : start + DISPATCH_LOOKAHEAD]:
        if later.time - exchange.time > DISPATCH_WINDOW:
            return None
        if later.request.client.address == address and later.request_header("kubectl-command"):
            return later
    return None


def who_in(exchanges: Sequence[Exchange], exchange: Exchange) -> Who:
    """Who sent `exchange`, one of `exchanges` (in time order): what it does among them too."""
    who = who_of(exchange)
    if recognize(exchange.user_agent).parsed.product != DISPATCHER or who.command:
        return who
    run = _dispatched(exchanges, exchange)
    if run is None:
        return who
    command = run.request_header("kubectl-command")
    gap = (run.time - exchange.time) * 1000
    why = f"{who.why}; then `{command}` on the same connection {gap:.0f} ms later"
    return Who(
        component=who.component,
        client=who.client,
        version=who.version,
        command=command,
        session=run.request_header("kubectl-session"),
        identity=who.identity,
        node=who.node,
        how=who.how,
        why=why,
    )
