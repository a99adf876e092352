"""Who sent each exchange: the rules on made-up exchanges, the committed recording, and the
real Python and JavaScript clients run against the lab through the proxy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from k8s_wiretap.capture.exchange import Client, Exchange, Identity, Request
from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.who import Who, who_in, who_of
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.paths import cache_dir
from k8s_wiretap.views.json import exchange_record
from tests.conftest import cli
from tests.proxy.conftest import ProxyProcess, spawn_proxy
from tests.recorded import STORY, STORY_1_20, story

CM = "kube-controller-manager/v1.20.2 (linux/amd64) kubernetes/faecb19"
ADMIN = Identity("added by proxy", "kubernetes-admin (system:masters) [client certificate]")
NODE = Identity("added by proxy", "system:node:node-7 (system:nodes) [client certificate]")
NOBODY = Identity()


def exchange(
    agent: str = "",
    *,
    identity: Identity = NOBODY,
    listener: str = "default",
    time: float = 1.0,
    address: str = "127.0.0.1:40000",
    certificate: str = "",
    headers: tuple[tuple[str, str], ...] = (),
    path: str = "/api/v1/namespaces/default/pods",
) -> Exchange:
    sent = (("User-Agent", agent),) if agent else ()
    request = Request(
        time,
        "GET",
        path,
        sent + headers,
        listener=listener,
        client=Client(address, certificate=certificate),
        identity=identity,
    )
    return Exchange(str(uuid.uuid4()), request)


# -- the rules --------------------------------------------------------------------------------


def test_kubectl_says_its_command_and_session() -> None:
    sent = exchange(
        "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07",
        identity=ADMIN,
        headers=(("Kubectl-Command", "kubectl apply"), ("Kubectl-Session", "s-1")),
    )
    who = who_of(sent)
    assert (who.component, who.client, who.version) == ("kubectl", "kubectl v1.32.4", "v1.32.4")
    assert (who.command, who.session, who.how) == ("kubectl apply", "s-1", "user agent")
    assert (
        who.identity == "kubernetes-admin (system:masters) [client certificate], added by the proxy"
    )


def test_the_dispatcher_is_kubectl_and_its_command_is_the_kubectl_it_runs() -> None:
    dispatcher = exchange("kubectl-dispatcher/v1.0 (linux/amd64)", path="/version?timeout=5s")
    other = exchange(
        "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07",
        time=1.01,
        address="127.0.0.1:40001",
        headers=(("Kubectl-Command", "kubectl get"), ("Kubectl-Session", "other")),
    )
    run = exchange(
        "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07",
        time=1.03,
        headers=(("Kubectl-Command", "kubectl apply"), ("Kubectl-Session", "mine")),
    )
    alone = who_of(dispatcher)
    assert (alone.component, alone.client, alone.command) == (
        "kubectl",
        "kubectl-dispatcher v1.0",
        "",
    )
    assert "dispatcher" in alone.why
    who = who_in([dispatcher, other, run], dispatcher)
    assert (who.component, who.command, who.session) == ("kubectl", "kubectl apply", "mine")
    assert "same connection 30 ms later" in who.why
    # too late, or on another connection: nothing is made up
    late = exchange(
        "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07",
        time=20.0,
        headers=(("Kubectl-Command", "kubectl apply"),),
    )
    assert who_in([dispatcher, other, late], dispatcher).command == ""


def test_each_controller_by_its_suffix_and_its_service_account() -> None:
    who = who_of(exchange(f"{CM}/deployment-controller"))
    assert who.component == "controller-manager/deployment-controller"
    assert who.client == "kube-controller-manager v1.20.2" and who.how == "user agent"
    account = Identity("bearer token", "system:serviceaccount:kube-system:job-controller")
    who = who_of(
        exchange(f"{CM}/system:serviceaccount:kube-system:job-controller", identity=account)
    )
    assert who.component == "controller-manager/job-controller"
    assert who.identity == "system:serviceaccount:kube-system:job-controller [bearer token]"
    assert "service account" in who.why


def test_the_hollow_kubelet_is_its_nodes_kubelet() -> None:
    who = who_of(exchange("kubemark/v1.20.2 (linux/amd64) kubernetes/faecb19", identity=NODE))
    assert (who.component, who.node, who.how) == ("kubelet", "node-7", "behaviour")
    assert who.client == "kubemark v1.20.2" and "node-7's kubelet" in who.why
    # without the node's identity it is still the kubelet, by its agent
    who = who_of(exchange("kubemark/v1.20.2 (linux/amd64) kubernetes/faecb19"))
    assert (who.component, who.node, who.how) == ("kubelet", "", "user agent")


@pytest.mark.parametrize(
    ("user", "component", "node"),
    [
        (NODE, "kubelet", "node-7"),
        (Identity("added by proxy", "system:kube-scheduler [client certificate]"), "scheduler", ""),
        (
            Identity("added by proxy", "system:kube-controller-manager [client certificate]"),
            "controller-manager",
            "",
        ),
        (
            Identity("bearer token", "system:serviceaccount:kube-system:namespace-controller"),
            "controller-manager/namespace-controller",
            "",
        ),
        (
            Identity("bearer token", "system:serviceaccount:kube-system:coredns"),
            "coredns",
            "",
        ),
    ],
)
@pytest.mark.parametrize("agent", ["", "Go-http-client/2.0", "node-fetch/1.0", "undici"])
def test_the_identity_decides_when_the_agent_says_nothing_useful(
    agent: str, user: Identity, component: str, node: str
) -> None:
    who = who_of(exchange(agent, identity=user, listener="admin"))
    assert (who.component, who.node, who.how) == (component, node, "identity")


def test_a_client_certificate_names_the_user_too() -> None:
    who = who_of(exchange("", certificate="system:node:node-2"))
    assert (who.component, who.node, who.how) == ("kubelet", "node-2", "identity")
    assert who.identity == "client certificate CN=system:node:node-2"


def test_a_pods_service_account() -> None:
    pod = Identity("bearer token", "system:serviceaccount:shop:checkout")
    who = who_of(exchange("", identity=pod))
    assert (who.component, who.how) == ("serviceaccount/shop/checkout", "identity")
    assert "a pod's service account shop/checkout" in who.why
    # a library's agent says more than "some pod": which client library the pod runs
    who = who_of(exchange("node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", identity=pod))
    assert (who.component, who.how) == ("javascript-client", "user agent")
    assert "shop/checkout" in who.why


def test_a_known_agent_outweighs_the_identity() -> None:
    """kubectl run with a node's credentials is still kubectl."""
    who = who_of(exchange("kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", identity=NODE))
    assert (who.component, who.node, who.how) == ("kubectl", "", "user agent")


def test_the_listener_decides_after_the_identity() -> None:
    who = who_of(exchange("Go-http-client/2.0", listener="kubelet"))
    assert (who.component, who.how, who.client) == ("kubelet", "listener", "a Go program")
    assert (
        who_of(exchange("Go-http-client/2.0", listener="kubelet", identity=NODE)).how == "identity"
    )
    # a listener that names no component does not decide; the library's agent does
    who = who_of(exchange("Go-http-client/2.0", listener="admin"))
    assert (who.component, who.how) == ("client-go", "user agent")


def test_unknown_clients_are_shown_as_what_they_are() -> None:
    who = who_of(exchange("curl/8.5.0", identity=NODE))
    assert (who.component, who.client, who.version, who.how) == (
        "curl",
        "curl 8.5.0",
        "8.5.0",
        "user agent",
    )
    assert who_of(exchange("my-operator/v0.3.1 (linux/arm64) kubernetes/unknown")).component == (
        "my-operator"
    )


def test_unknown_only_when_nothing_at_all_is_known() -> None:
    assert who_of(exchange()) == Who("unknown", why="no User-Agent")
    who = who_of(exchange(identity=ADMIN))
    assert (who.component, who.how) == ("user/kubernetes-admin", "identity")
    assert who_of(exchange(listener="admin")).component == "admin"


def test_the_wiretap_itself() -> None:
    who = who_of(exchange("k8s-wiretap/0.1.0 (version check)", path="/version"))
    assert (who.component, who.client, who.how) == (
        "k8s-wiretap",
        "k8s-wiretap 0.1.0",
        "user agent",
    )
    assert "(version check)" in who.why


# -- the committed recording ---------------------------------------------------------------


@pytest.mark.parametrize("recording", [STORY, STORY_1_20], ids=["default", "1.20"])
def test_every_exchange_of_the_recording_has_a_component(recording: Path) -> None:
    analysis = Analysis.of(load(recording))
    hows: dict[str, int] = {}
    for sent in analysis.exchanges:
        who = analysis.who(sent)
        assert who.component != "unknown", sent.user_agent
        assert who.component == sent.component  # today's names, kept
        assert who.identity, sent.id  # the proxy saw a credential on each
        hows[who.how] = hows.get(who.how, 0) + 1
    assert set(hows) == {"user agent", "behaviour"}  # behaviour: the hollow kubelet
    kubelet = [e for e in analysis.exchanges if e.component == "kubelet"]
    assert {analysis.who(e).node for e in kubelet} == {"node-1"}
    kubectl = [analysis.who(e) for e in analysis.exchanges if e.component.startswith("kubectl")]
    assert kubectl and all(w.command.startswith("kubectl ") and w.session for w in kubectl)


def test_the_machines_kubectl_dispatcher_is_kubectl() -> None:
    """The 1.20 story ran the machine's kubectl (google-cloud-sdk's dispatcher in front of it),
    the default release's one the release's own: the dispatcher's `/version` is kubectl's
    too."""
    analysis = Analysis.of(load(STORY_1_20))
    dispatched = [
        analysis.who(e)
        for e in analysis.exchanges
        if e.user_agent.startswith("kubectl-dispatcher/")
    ]
    assert dispatched and all(w.command.startswith("kubectl ") and w.session for w in dispatched)
    assert not any(e.user_agent.startswith("kubectl-dispatcher/") for e in story().exchanges)


def test_the_json_view_says_who() -> None:
    analysis = Analysis.of(story())
    sent = next(e for e in analysis.exchanges if e.request_header("kubectl-command"))
    record = exchange_record(analysis, sent)
    assert record["component"] == record["who"]["component"] == "kubectl"
    assert record["who"]["command"] == sent.request_header("kubectl-command")
    assert set(record["who"]) == {
        "component",
        "client",
        "version",
        "command",
        "session",
        "identity",
        "node",
        "how",
        "why",
    }


# -- the real clients, through the proxy ---------------------------------------------------

PYTHON_CLIENT = """
import json, sys
import kubernetes
from kubernetes import client, config, watch

kubeconfig, name = sys.argv[1:]
config.load_kube_config(kubeconfig)
core = client.CoreV1Api()
core.list_namespace()
core.create_namespaced_config_map("default", {"metadata": {"name": name}, "data": {"a": "1"}})
for _ in watch.Watch().stream(
    core.list_namespaced_config_map,
    "default",
    field_selector=f"metadata.name={name}",
    timeout_seconds=1,
):
    pass
core.delete_namespaced_config_map(name, "default")
print(json.dumps({"version": kubernetes.__version__}))
"""

JAVASCRIPT_CLIENT = """
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';

const [kubeconfig, name] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
await core.listNamespace();
await core.createNamespacedConfigMap({
  namespace: 'default', body: { metadata: { name }, data: { a: '1' } },
});
await new Promise((resolve, reject) => {
  new k8s.Watch(kc)
    .watch('/api/v1/namespaces/default/configmaps',
      { fieldSelector: `metadata.name=${name}`, timeoutSeconds: 1 },
      () => {}, (err) => (err ? reject(err) : resolve()))
    .catch(reject);
});
await core.deleteNamespacedConfigMap({ name, namespace: 'default' });
const installed = new URL('./node_modules/@kubernetes/client-node/package.json', import.meta.url);
console.log(JSON.stringify({ version: JSON.parse(readFileSync(installed)).version }));
"""


def _run(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert result.returncode == 0, f"{' '.join(argv)}: {result.stderr}{result.stdout}"
    return result.stdout


@dataclass(frozen=True)
class Program:
    """A real client, and how to run its script against a kubeconfig."""

    argv: tuple[str, ...]
    env: dict[str, str]

    def run(self, kubeconfig: Path, name: str) -> str:
        output = _run([*self.argv, str(kubeconfig), name], 120, env=self.env)
        return str(json.loads(output.strip().splitlines()[-1])["version"])


@pytest.fixture(scope="session")
def python_client(tmp_path_factory: pytest.TempPathFactory) -> Program:
    """The official Python client: the project's own (a dev dependency, its version locked in
    constraints.txt), run as a program of its own."""
    script = tmp_path_factory.mktemp("python-client") / "client.py"
    script.write_text(PYTHON_CLIENT)
    return Program((sys.executable, str(script)), dict(os.environ))


# The JavaScript clients' versions, pinned as constraints.txt pins the Python ones: each set
# is installed once into the cache (`<cache>/clients/npm-<packages>`) and reused by later runs.
CLIENT_NODE = "@kubernetes/client-node@2.0.1"
CLIENT_NODE_1 = "@kubernetes/client-node@1.3.0"
NODE_22 = "node@22.23.3"


def _npm(*packages: str) -> Path:
    """The folder `npm install PACKAGES` made: from the cache, else installed beside it and
    renamed into place (a racing install's copy is as good)."""
    name = "npm-" + "+".join(packages).replace("/", "_").replace("@", "")
    folder = cache_dir() / "clients" / name
    if (folder / "node_modules").is_dir():
        return folder
    work = folder.with_name(f"{name}.{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    npm = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"]
    _run([*npm, str(work), *packages], 600)
    try:
        work.rename(folder)
    except OSError:  # another run put its copy in place first
        shutil.rmtree(work, ignore_errors=True)
    return folder


def _javascript(modules: Path, node: str, tmp_path_factory: pytest.TempPathFactory) -> Program:
    """The client script in a folder of its own whose `node_modules` links to the cached one
    (where Node finds its imports), so the cached folder stays as npm left it."""
    folder = tmp_path_factory.mktemp("javascript-client")
    (folder / "node_modules").symlink_to(modules / "node_modules")
    script = folder / "client.mjs"
    script.write_text(JAVASCRIPT_CLIENT)
    return Program((node, str(script)), dict(os.environ))


@pytest.fixture(scope="session")
def javascript_client(tmp_path_factory: pytest.TempPathFactory) -> Program:
    """@kubernetes/client-node 2. It fetches with undici 8, which wants Node 22.19 or later:
    the machine's Node is 20, so Node 22 comes from npm's `node` package."""
    modules = _npm(CLIENT_NODE, NODE_22)
    node = str(modules / "node_modules" / ".bin" / "node")
    return _javascript(modules, node, tmp_path_factory)


@pytest.fixture(scope="session")
def javascript_client_1(tmp_path_factory: pytest.TempPathFactory) -> Program:
    """@kubernetes/client-node 1.x (node-fetch), the last to run on the machine's Node 20."""
    return _javascript(_npm(CLIENT_NODE_1), "node", tmp_path_factory)


@dataclass
class Proxied:
    proxy: ProxyProcess
    kubeconfig: Path


@pytest.fixture(scope="module")
def proxied(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    """`k8s-wiretap proxy` in front of the lab, and the kubeconfig a user makes for it
    (`k8s-wiretap kubeconfig`: TLS with the proxy's CA, no credentials of its own)."""
    folder = tmp_path_factory.mktemp("who")
    proxy = spawn_proxy(lab.kubeconfig, folder)
    kubeconfig = folder / "via-proxy.kubeconfig"
    made = cli(
        "kubeconfig",
        "--kubeconfig",
        lab.kubeconfig,
        "--proxy",
        f"127.0.0.1:{proxy.port}",
        "--confdir",
        str(folder / "ca"),
        "-o",
        str(kubeconfig),
    )
    assert made.returncode == 0, made.stderr
    yield Proxied(proxy, kubeconfig)
    proxy.stop()


def _ran(proxied: Proxied, program: Program) -> tuple[str, list[Exchange], Analysis]:
    """Run the client; its exchanges that name the ConfigMap (in the path or the body), once
    all have ended; and the analysis of the whole recording."""
    name = f"who-{uuid.uuid4().hex[:8]}"
    version = program.run(proxied.kubeconfig, name)

    def mentions(sent: Exchange) -> bool:
        body = sent.request_body.data if sent.request_body else b""
        return name in sent.path or name.encode() in body

    def done(recording: Recording) -> bool:
        mine = [e for e in recording.exchanges if mentions(e)]
        return len(mine) >= 3 and all(e.end is not None for e in mine)

    recording = proxied.proxy.wait_for(f"{name}'s exchanges", done, timeout=30)
    return version, [e for e in recording.exchanges if mentions(e)], Analysis.of(recording)


def _listed(analysis: Analysis, agent: str) -> list[Who]:
    return [
        analysis.who(e)
        for e in analysis.exchanges
        if e.path.startswith("/api/v1/namespaces?") or e.path == "/api/v1/namespaces"
        if e.user_agent == agent
    ]


def test_the_python_client(proxied: Proxied, python_client: Program) -> None:
    version, mine, analysis = _ran(proxied, python_client)
    agent = f"OpenAPI-Generator/{version}/python"
    assert {e.info.verb for e in mine} >= {"create", "watch", "delete"}
    assert {e.user_agent for e in mine} == {agent}
    for who in [analysis.who(e) for e in mine] + _listed(analysis, agent):
        assert (who.component, who.client, who.version, who.how) == (
            "python-client",
            f"kubernetes (Python) {version}",
            version,
            "user agent",
        )
        assert who.identity.endswith("added by the proxy")
    assert _listed(analysis, agent)


def test_the_javascript_client(proxied: Proxied, javascript_client: Program) -> None:
    version, mine, analysis = _ran(proxied, javascript_client)
    agent = f"kubernetes-client-javascript/{version}"
    calls = [e for e in mine if e.info.verb != "watch"]
    (watch,) = [e for e in mine if e.info.verb == "watch"]
    assert {e.info.verb for e in calls} == {"create", "delete"}
    assert {e.user_agent for e in calls} == {agent}
    for who in [analysis.who(e) for e in calls] + _listed(analysis, agent):
        assert (who.component, who.client, who.version, who.how) == (
            "javascript-client",
            f"@kubernetes/client-node {version}",
            version,
            "user agent",
        )
    assert _listed(analysis, agent)
    # its Watch fetches with undici and sets no agent: undici's own, which names no version
    assert watch.user_agent == "undici"
    who = analysis.who(watch)
    assert (who.component, who.client, who.version) == (
        "javascript-client",
        "@kubernetes/client-node",
        "",
    )
    assert "undici" in who.why


def test_the_javascript_client_1(proxied: Proxied, javascript_client_1: Program) -> None:
    version, mine, analysis = _ran(proxied, javascript_client_1)
    assert version.startswith("1.")
    agent = "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)"
    assert {e.info.verb for e in mine} == {"create", "watch", "delete"}
    assert {e.user_agent for e in mine} == {agent}
    for who in [analysis.who(e) for e in mine] + _listed(analysis, agent):
        assert (who.component, who.client, who.version, who.how) == (
            "javascript-client",
            "@kubernetes/client-node",
            "",
            "user agent",
        )
        assert "node-fetch" in who.why
    assert _listed(analysis, agent)
