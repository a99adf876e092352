"""A proxy listening where other machines reach it (`--allow-remote`): only clients with a
certificate of the proxy's client CA get the kubeconfig's credentials.

The proxy runs as users run it, on this machine's own non-loopback address (or the wildcard
address, reached through it), so that every client here connects from a non-loopback
address, as one on another machine would. Clients are the real kubectl and Python's `ssl`.
"""

from __future__ import annotations

import base64
import datetime as dt
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import load
from k8s_wiretap.kube.kubeconfig import write_kubeconfig
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.clientauth import client_authority
from k8s_wiretap.proxy.server import free_port
from k8s_wiretap.tls import new_authority
from tests.conftest import cli, wait_until

NEEDS_CERT = "only with a client certificate of the proxy's client CA"


def own_address() -> str:
    """An IPv4 address of this machine that is not loopback."""
    result = subprocess.run(
        ["ip", "-4", "-o", "addr", "show", "scope", "global"],
        capture_output=True,
        text=True,
        check=False,
    )
    for line in result.stdout.splitlines():
        fields = line.split()
        if "inet" in fields:
            return fields[fields.index("inet") + 1].split("/")[0]
    pytest.skip("this machine has no non-loopback IPv4 address to listen on")


class RemoteProxy:
    """`k8s-wiretap proxy --allow-remote` listening on `listen`, reached at `address`."""

    def __init__(self, lab: LabState, folder: Path, listen: str, address: str) -> None:
        self.port = free_port(address)
        self.address = address
        self.folder = folder
        # The default confdir (in a state folder of the test's own), as most users have it.
        self.env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
        self.confdir = folder / "state" / "k8s-wiretap" / "proxy"
        self.record = folder / "recording.jsonl"
        self.log = folder / "proxy.log"
        argv = [
            *(sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", lab.kubeconfig),
            *("--listen", f"{listen}:{self.port}", "--allow-remote"),
            *("--record", str(self.record), "--no-tui"),
        ]
        with self.log.open("w") as output:
            self.process = subprocess.Popen(
                argv, stdout=output, stderr=subprocess.STDOUT, env=self.env
            )
        wait_until(self._listening, 30, "the remote proxy to listen and record")

    def _listening(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"proxy exited: {self.log.read_text()}")
        with socket.socket() as probe:
            return probe.connect_ex((self.address, self.port)) == 0 and self.record.exists()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)

    def get(
        self, path: str, *, tls: ssl.SSLContext | None = None, host: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        """GET `path` from this machine's non-loopback address; the status and JSON body."""
        connection: http.client.HTTPConnection
        if tls is None:
            connection = http.client.HTTPConnection(self.address, self.port, timeout=30)
        else:
            connection = http.client.HTTPSConnection(
                self.address, self.port, timeout=30, context=tls
            )
        headers = {"Host": host} if host else {}
        headers["User-Agent"] = "remote-test"
        try:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    def context(self, identity_files: tuple[Path, Path] | None = None) -> ssl.SSLContext:
        """TLS that trusts the proxy's listener, presenting a client certificate if given."""
        context = ssl.create_default_context(cafile=str(self.confdir / "mitmproxy-ca-cert.pem"))
        if identity_files:
            context.load_cert_chain(*identity_files)
        return context

    def kubectl(self, kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        env["KUBECACHEDIR"] = str(self.folder / f"cache-{kubeconfig.stem}")
        return subprocess.run(
            ["kubectl", *args], capture_output=True, text=True, env=env, timeout=120, check=False
        )

    def exchanges(
        self, agent: str, path: str, count: int = 1, since: float = 0.0
    ) -> list[Exchange]:
        """The recorded exchanges of `path` by clients whose User-Agent holds `agent`, sent
        at or after `since`, once there are `count` with responses (records are written
        asynchronously, so earlier tests' exchanges must not count as the awaited ones)."""
        found: list[Exchange] = []

        def enough() -> bool:
            found[:] = [
                e
                for e in load(self.record).exchanges
                if agent in e.user_agent and e.path.startswith(path) and e.status
                if e.request.time >= since
            ]
            return len(found) >= count

        wait_until(enough, 10, f"{count} exchanges of {agent} for {path} in the recording")
        return found


@pytest.fixture(scope="module")
def remote(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteProxy]:
    address = own_address()
    proxy = RemoteProxy(lab, tmp_path_factory.mktemp("remote"), address, address)
    yield proxy
    proxy.stop()


@pytest.fixture(scope="module")
def wildcard(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteProxy]:
    proxy = RemoteProxy(lab, tmp_path_factory.mktemp("wildcard"), "0.0.0.0", own_address())
    yield proxy
    proxy.stop()


def write_proxy_kubeconfig(lab: LabState, proxy: RemoteProxy, name: str) -> Path:
    path = proxy.folder / f"{name}.kubeconfig"
    result = cli(
        "kubeconfig",
        *("--kubeconfig", lab.kubeconfig, "--proxy", f"{proxy.address}:{proxy.port}"),
        *("-o", str(path)),
        env=proxy.env,
    )
    assert result.returncode == 0, result.stderr
    return path


def test_the_start_says_loudly_what_is_exposed(remote: RemoteProxy) -> None:
    said = remote.log.read_text()
    assert f"k8s-wiretap: warning: default: {remote.address}:{remote.port} is reachable" in said
    assert f"certificate of the client CA {remote.confdir / 'client-ca.crt'}" in said
    assert "other remote clients get 403 and nothing is forwarded" in said


def test_kubectl_with_the_proxy_kubeconfig_is_the_admin(lab: LabState, remote: RemoteProxy) -> None:
    """`kubeconfig --proxy` writes a real client certificate: kubectl works out of the box,
    and the API server sees the kubeconfig's admin, added by the proxy."""
    kubeconfig = write_proxy_kubeconfig(lab, remote, "issued")
    assert kubeconfig.stat().st_mode & 0o777 == 0o600
    whoami = remote.kubectl(kubeconfig, "auth", "whoami", "-o", "json")
    assert whoami.returncode == 0, whoami.stderr
    assert "system:masters" in json.loads(whoami.stdout)["status"]["userInfo"]["groups"]
    started = time.time()
    secrets = remote.kubectl(kubeconfig, "get", "secrets", "-A", "-o", "name")
    assert secrets.returncode == 0, secrets.stderr
    (listed,) = remote.exchanges("kubectl", "/api/v1/secrets", since=started)
    assert listed.status == 200
    assert listed.request.identity.credential == "added by proxy"
    assert "system:masters" in listed.request.identity.user


def test_a_client_without_a_certificate_of_the_client_ca_gets_403_and_no_credentials(
    lab: LabState, remote: RemoteProxy
) -> None:
    """Plain HTTP (even with `Host: 127.0.0.1`, the first defect's way in), TLS without a
    certificate, with a certificate of another CA, and with one of the client CA that is not
    for client authentication: a 403 Status each time, the API server never asked, no
    credential added."""
    stranger = new_authority("not the proxy's").issue("mallory", ["system:masters"])
    stranger.write(remote.folder / "stranger.crt", remote.folder / "stranger.key")
    serving = client_authority(remote.confdir).issue("server", hosts=["a.example"], client=False)
    serving.write(remote.folder / "serving.crt", remote.folder / "serving.key")
    started = time.time()
    attempts = [
        remote.get("/api/v1/secrets"),
        remote.get("/api/v1/secrets", host="127.0.0.1"),
        remote.get("/api/v1/secrets", tls=remote.context()),
        remote.get(
            "/api/v1/secrets",
            tls=remote.context((remote.folder / "stranger.crt", remote.folder / "stranger.key")),
        ),
        remote.get(
            "/api/v1/secrets",
            tls=remote.context((remote.folder / "serving.crt", remote.folder / "serving.key")),
        ),
    ]
    for status, body in attempts:
        assert status == 403
        assert body["kind"] == "Status" and body["reason"] == "Forbidden"
        assert NEEDS_CERT in str(body["message"])
    refused = remote.exchanges("remote-test", "/api/v1/secrets", len(attempts), since=started)
    assert len(refused) == len(attempts)
    assert {e.request.identity.credential for e in refused} == {"none"}
    assert {e.status for e in refused} == {403}

    config = remote.folder / "stranger.kubeconfig"
    ca_pem = (remote.confdir / "mitmproxy-ca-cert.pem").read_bytes()
    server = f"https://{remote.address}:{remote.port}"
    write_kubeconfig(config, server=server, ca_pem=ca_pem, client=stranger, name="stranger")
    started = time.time()  # kubectl of the test before is in the recording too
    kubectl = remote.kubectl(config, "get", "secrets", "-A")
    assert kubectl.returncode == 1
    assert "Error from server (Forbidden)" in kubectl.stderr  # discovery hides the message
    strangers = remote.exchanges("kubectl", "/api", since=started)
    assert strangers
    assert {(e.status, e.request.identity.credential) for e in strangers} == {(403, "none")}


def unparseable_certificate(folder: Path) -> tuple[bytes, Path]:
    """A self-signed certificate OpenSSL takes and `cryptography` does not (its critical
    flag the byte 01, not FF), and the key of it, which the client holds."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mallory")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(0x1234)
        .not_valid_before(dt.datetime(2020, 1, 1))
        .not_valid_after(dt.datetime(2040, 1, 1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    der = certificate.public_bytes(serialization.Encoding.DER)
    flag = der.find(bytes.fromhex("0101ff"))
    der = der[:flag] + bytes.fromhex("010101") + der[flag + 3 :]
    pem = ssl.DER_cert_to_PEM_cert(der).encode()
    key_file = folder / "mallory.key"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return pem, key_file


def test_someone_elses_certificate_behind_an_unparseable_one_gets_403(
    lab: LabState, remote: RemoteProxy
) -> None:
    """The handshake proves the key of the first certificate only. A client that sends its
    own certificate, which `cryptography` cannot parse, and behind it an issued certificate
    it holds no key for (certificates are public: every kubeconfig of `kubeconfig --proxy`
    carries one) is judged by the first, as OpenSSL authenticated it: 403, no credentials."""
    pem, key_file = unparseable_certificate(remote.folder)
    issued = client_authority(remote.confdir).issue("k8s-wiretap-client")
    chain = remote.folder / "mallory-chain.pem"
    chain.write_bytes(pem + issued.cert_pem)
    tls = remote.context()
    tls.load_cert_chain(chain, key_file)
    status, body = remote.get("/api/v1/secrets?mallory=1", tls=tls)
    assert status == 403 and NEEDS_CERT in str(body["message"])
    (refused,) = remote.exchanges("remote-test", "/api/v1/secrets?mallory=1")
    assert refused.request.identity.credential == "none"


def test_a_certificate_of_the_client_ca_from_python(lab: LabState, remote: RemoteProxy) -> None:
    """Any TLS client with an issued certificate, not just kubectl; Host names the proxy's
    address, as it does from another machine, and is accepted for it."""
    kubeconfig = write_proxy_kubeconfig(lab, remote, "python")
    user = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]
    cert, key = remote.folder / "issued.crt", remote.folder / "issued.key"
    cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
    key.write_bytes(base64.b64decode(user["client-key-data"]))
    status, body = remote.get("/api/v1/namespaces/kube-system", tls=remote.context((cert, key)))
    assert status == 200 and body["metadata"]["name"] == "kube-system"


def test_the_version_check_authenticates_too(remote: RemoteProxy) -> None:
    """The proxy asks /version through its own listener; on a non-loopback address that
    takes a certificate of the client CA as well."""
    checks = remote.exchanges("(version check)", "/version")
    assert checks and checks[0].status == 200
    assert checks[0].request.identity.credential == "added by proxy"


def test_loopback_clients_of_a_wildcard_listener_keep_the_host_check(
    lab: LabState, wildcard: RemoteProxy
) -> None:
    """From 127.0.0.1 a wildcard listener is a loopback one: no certificate asked, and a Host
    that is not loopback (DNS rebinding) refused; from the machine's own address, 403."""
    local = http.client.HTTPConnection("127.0.0.1", wildcard.port, timeout=30)
    try:
        local.request("GET", "/api/v1/namespaces/default", headers={"Host": "evil.example"})
        rebound = local.getresponse()
        assert rebound.status == 403 and b"is not accepted" in rebound.read()
        local.request("GET", "/api/v1/namespaces/default")
        assert local.getresponse().status == 200
    finally:
        local.close()
    status, body = wildcard.get("/api/v1/namespaces/default")
    assert status == 403 and NEEDS_CERT in str(body["message"])
    kubeconfig = write_proxy_kubeconfig(lab, wildcard, "wildcard")
    ok = wildcard.kubectl(kubeconfig, "get", "namespace", "default", "-o", "name")
    assert ok.returncode == 0 and ok.stdout.strip() == "namespace/default", ok.stderr
