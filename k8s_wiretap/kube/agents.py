"""Which program a request comes from, as the request says it: its User-Agent and its user.

The facts are data, `data/agents.yaml` (each entry names where its agent string is made);
this module reads a User-Agent the way client-go writes one and matches it to them.
client-go's default agent is `<binary>/<version> (<os>/<arch>) kubernetes/<commit>`;
`rest.AddUserAgent` appends `/<name>`, which the controller manager uses for each controller
(`.../deployment-controller`, or `.../system:serviceaccount:kube-system:<controller>` with
service-account credentials) and others for a role (`/leader-election`, `/scheduler`).
Weighing an agent against the user and the listener is the explain layer's (`explain/who.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.controllers import clients

__all__ = [
    "AGENTS_FILE",
    "Agent",
    "Attribution",
    "ParsedAgent",
    "Recognized",
    "UserMatch",
    "agents",
    "attribute",
    "component_of",
    "components",
    "person",
    "person_component",
    "read_agent",
    "recognize",
    "user_component",
    "user_name",
]

AGENTS_FILE = datafiles.path("agents.yaml")
SERVICE_ACCOUNT = "system:serviceaccount:"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:kube-system:"
_AGENT = re.compile(
    r"^(?P<product>[^/\s]+)(?:/(?P<version>\S+))?(?:\s+\((?P<comment>[^)]*)\))?"
    r"(?:\s+kubernetes/(?P<commit>[^/\s]+)(?:/(?P<role>.+))?)?"
)


@dataclass(frozen=True, slots=True)
class Agent:
    """One entry of `data/agents.yaml`: a client and how its agent string looks."""

    component: str
    client: str
    source: str
    product: str = ""
    pattern: re.Pattern[str] | None = None
    weak: bool = False  # an HTTP library's default: says which library, not which program
    note: str = ""


@dataclass(frozen=True, slots=True)
class ParsedAgent:
    """A User-Agent read the way client-go writes one (any other agent: its first word)."""

    raw: str
    product: str = ""  # the first word, before "/"
    version: str = ""
    comment: str = ""  # the first "(...)": `linux/amd64`, or `version check`
    commit: str = ""  # after ` kubernetes/`: client-go's default agent
    role: str = ""  # what rest.AddUserAgent appended, service-account prefix removed
    service_account: bool = False  # the role came as system:serviceaccount:kube-system:<role>

    @property
    def client_go(self) -> bool:
        return bool(self.commit)


@dataclass(frozen=True, slots=True)
class Recognized:
    """A User-Agent and its entry in the table (None: not a client the table knows)."""

    parsed: ParsedAgent
    agent: Agent | None
    version: str

    @property
    def known(self) -> bool:
        return self.agent is not None

    @property
    def weak(self) -> bool:
        return self.agent is not None and self.agent.weak

    @property
    def component(self) -> str:
        """`controller-manager/deployment-controller`; an unknown agent's first word."""
        parsed = self.parsed
        base = self.agent.component if self.agent else parsed.product
        role = parsed.role
        if not role or self.weak or role in (parsed.product, base) or role in _names_of(base):
            return base  # a role that names the component itself (kubemark's hollow-kubelet)
        return f"{base}/{role}"

    @property
    def client(self) -> str:
        """The program and its version: `kubectl v1.32.4`, `kubernetes (Python) 37.0.2`."""
        name = self.agent.client if self.agent else self.parsed.product
        return f"{name} {self.version}".strip() if name else ""


@dataclass(frozen=True, slots=True)
class UserMatch:
    """What a user name says about the program that authenticated as it."""

    component: str
    source: str
    node: str = ""  # system:node:<node>
    service_account: str = ""  # <namespace>/<name>
    pod: bool = False  # a service account that names no component: some pod's

    @property
    def describes(self) -> str:
        if self.node:
            return f"node {self.node}'s kubelet"
        if self.pod:
            return f"a pod's service account {self.service_account}"
        return self.component


def _agent(entry: dict[str, Any]) -> Agent:
    pattern = entry.get("pattern")
    product = str(entry.get("product") or "")
    return Agent(
        component=str(entry["component"]),
        client=str(entry.get("client") or product),
        source=str(entry["source"]),
        product=product,
        pattern=re.compile(str(pattern)) if pattern else None,
        weak=bool(entry.get("weak")),
        note=str(entry.get("note") or ""),
    )


@cache
def _table() -> dict[str, Any]:
    loaded = datafiles.load(AGENTS_FILE.name)
    assert isinstance(loaded, dict)
    return loaded


@cache
def agents() -> tuple[Agent, ...]:
    """Every client of `data/agents.yaml`, in its order."""
    return tuple(_agent(entry) for entry in _table()["agents"])


@cache
def _by_product() -> dict[str, Agent]:
    return {a.product: a for a in agents() if a.product and a.pattern is None}


@cache
def components() -> frozenset[str]:
    """Every component name the tables give (a listener so named is that component's)."""
    names = {a.component for a in agents()} | {str(u["component"]) for u in _table()["users"]}
    return frozenset(names | {c.component for c in clients().values()})


@cache
def _names_of(component: str) -> frozenset[str]:
    """The products the agents table names as `component` (kubelet: kubemark, ...)."""
    return frozenset(a.product for a in agents() if a.component == component and a.product)


def read_agent(agent: str) -> ParsedAgent:
    raw = agent.strip()
    match = _AGENT.match(raw)
    if not match:
        return ParsedAgent(raw)
    role = match.group("role") or ""
    return ParsedAgent(
        raw,
        match.group("product"),
        match.group("version") or "",
        match.group("comment") or "",
        match.group("commit") or "",
        role.removeprefix(SERVICE_ACCOUNT_PREFIX),
        role.startswith(SERVICE_ACCOUNT_PREFIX),
    )


@lru_cache(maxsize=4096)
def recognize(agent: str) -> Recognized:
    """A User-Agent matched to the table: a pattern first, else its first word."""
    parsed = read_agent(agent)
    for entry in agents():
        if entry.pattern is not None:
            found = entry.pattern.search(parsed.raw)
            if found:
                version = found.groupdict().get("version") or ""
                return Recognized(parsed, entry, version)
    known = _by_product().get(parsed.product)
    # a library's version is not its program's
    return Recognized(parsed, known, "" if known is not None and known.weak else parsed.version)


@lru_cache(maxsize=4096)  # a cluster has few identities; every exchange asks
def user_name(user: str) -> str:
    """The user name in an identity as recorded: `system:node:node-1 (system:nodes) [...]`."""
    return re.split(r"\s[(\[]", user.strip(), maxsplit=1)[0]


@cache
def _service_accounts() -> dict[str, tuple[str, str]]:
    found = {
        str(u["service_account"]): (str(u["component"]), str(u["source"]))
        for u in _table()["users"]
        if u.get("service_account")
    }
    for client in clients().values():  # the controller manager's own service accounts
        if client.component == "controller-manager":
            found.setdefault(
                f"kube-system/{client.name}",
                (client.wiretap_name, f"kube/data/controllers.yaml ({client.source})"),
            )
    return found


@cache
def _users() -> tuple[tuple[dict[str, Any], re.Pattern[str] | None], ...]:
    """The users table, each entry with its `pattern` compiled (None: it has none)."""
    return tuple(
        (u, re.compile(str(u["pattern"])) if u.get("pattern") else None) for u in _table()["users"]
    )


def person(name: str) -> bool:
    """Whether a user name is a person's: one of the `persons` table (OpenShift's
    `system:admin`), or any the users table does not know and that is no system identity
    (`system:...`): kubernetes-admin, an email, an IAM ARN, `oidc:...`."""
    name = user_name(name)
    if name in _persons():
        return True
    return bool(name) and not name.startswith("system:") and user_component(name) is None


@cache
def _persons() -> frozenset[str]:
    """The users of the `persons` table: persons, though their names start with `system:`."""
    return frozenset(str(entry["user"]) for entry in _table().get("persons", ()))


def person_component(component: str) -> bool:
    """Whether a component is a person named by its user (`user/<name>`, `person(name)`)."""
    binary, _, name = component.partition("/")
    return binary == "user" and person(name)


@lru_cache(maxsize=4096)
def user_component(user: str) -> UserMatch | None:
    """What a user name says: `system:node:node-1` is node-1's kubelet, a kube-system service
    account named after a controller is that controller, any other service account a pod's."""
    name = user_name(user)
    for entry, pattern in _users():
        if entry.get("user") == name:
            return UserMatch(str(entry["component"]), str(entry["source"]))
        prefix = entry.get("prefix")
        if prefix and name.startswith(prefix) and len(name) > len(prefix):
            return UserMatch(
                str(entry["component"]), str(entry["source"]), node=name[len(prefix) :]
            )
        found = pattern.search(name) if pattern is not None else None
        if found:
            component = str(entry["component"]).format_map(found.groupdict())
            return UserMatch(component, str(entry["source"]))
    if name.startswith(SERVICE_ACCOUNT):
        namespace, _, account = name[len(SERVICE_ACCOUNT) :].partition(":")
        if not namespace or not account:
            return None
        key = f"{namespace}/{account}"
        known = _service_accounts().get(key)
        if known:
            return UserMatch(known[0], known[1], service_account=key)
        source = "the service-account token's subject (system:serviceaccount:<ns>:<name>)"
        return UserMatch(f"serviceaccount/{key}", source, service_account=key, pod=True)
    return None


def component_of(agent: str, listener: str = "", user: str = "", certificate: str = "") -> str:
    """`controller-manager/deployment-controller`, `kubectl`, `kubelet`, ... from the agent,
    and when it says nothing useful (none, or an HTTP library's default) from the user its
    credential names (`attribute`, which `explain.who` tells the evidence of)."""
    return attribute(agent, listener, user, certificate).component


@dataclass(frozen=True, slots=True)
class Attribution:
    """Which component sent a request, and on what evidence (`how`, `why`)."""

    component: str
    how: str
    why: str
    agent: Recognized
    user: UserMatch | None


def _from_agent(agent: Recognized, user: UserMatch | None) -> tuple[str, str, str]:
    """(component, how, why) of an agent the table knows, or one it does not."""
    parsed = agent.parsed
    if agent.agent is None:
        why = f"the User-Agent names {parsed.product}, not a client the table knows"
        return agent.component, "user agent", why
    why = f"the User-Agent names {agent.agent.client}"
    if parsed.role and agent.component != agent.agent.component:
        account = ", also its service account's name" if parsed.service_account else ""
        why += f" ({parsed.role}{account})"
    if parsed.comment and not parsed.client_go and "/" not in parsed.comment:
        why += f" ({parsed.comment})"
    if agent.agent.note:
        why += f": {agent.agent.note}"
    if agent.component == "kubelet" and user is not None and user.node:
        why += f"; authenticates as system:node:{user.node}, so it is {user.describes}"
        return "kubelet", "behaviour", why
    return agent.component, "user agent", why


def _without_agent(
    agent: Recognized, user: UserMatch | None, listener: str
) -> tuple[str, str, str]:
    """(component, how, why) when the agent says nothing useful ("" when only the user's
    name is left to say it: `attribute` names it)."""
    said = f"{agent.parsed.raw} is {agent.agent.note}" if agent.agent else "no User-Agent"
    if user is not None and not user.pod:
        return user.component, "identity", f"{said}; authenticates as {user.describes}"
    if listener in components():
        return listener, "listener", f"{said}; came through the {listener} listener"
    if agent.agent is not None:
        if user is not None:
            said += f"; authenticates as {user.describes}"
        return agent.component, "user agent", said
    if user is not None:
        return user.component, "identity", f"{said}; authenticates as {user.describes}"
    return "", "", said


@lru_cache(maxsize=4096)  # what decides is the same for every request of a client
def attribute(agent: str, listener: str = "", user: str = "", certificate: str = "") -> Attribution:
    """Which component sent a request, from its User-Agent, the user its credential names
    (or its client certificate's), and the proxy listener it came through.

    An agent the table knows decides (the kubelet's, authenticating as a node, is that
    node's kubelet); else the user: a control-plane or distribution identity, a pod's
    service account, and any other user is that user (`user/<name>`: a person, or a system
    identity the table does not know); else a listener named after a component. `unknown`
    only when there is none of these."""
    recognized = recognize(agent)
    name = user_name(user)
    match = next(
        (found for n in (name, certificate) if n and (found := user_component(n)) is not None),
        None,
    )
    if recognized.parsed.product and not recognized.weak:
        component, how, why = _from_agent(recognized, match)
    else:
        component, how, why = _without_agent(recognized, match, listener)
    if not component:
        if name:
            kind = "a person" if person(name) else "a system identity the tables do not know"
            component, how = f"user/{name}", "identity"
            why = f"{why}; authenticates as {name} ({kind})"
        elif listener and listener != "default":
            component, how = listener, "listener"
            why = f"{why}; came through the {listener} listener"
        else:
            component, how = "unknown", "nothing"
    return Attribution(component, how, why, recognized, match)
