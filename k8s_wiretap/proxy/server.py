"""Run mitmproxy with the wiretap addons: in the foreground, or in a thread of its own.

Options that matter and why (see the wire notes):
- `connection_strategy=lazy`: open upstream when the first request is known (its
  Authorization decides the upstream client certificate, see upstream.py);
- `upstream_cert=False`: the listener's certificate names the address clients dial
  (127.0.0.1), not the API server's names;
- `keep_host_header=True`: the Host check sees what the client sent; upstream.py then sets
  the Host the API server would get directly;
- upstream TLS verified against the kubeconfig's CA (`ssl_verify_upstream_trusted_ca`),
  skipped only when the kubeconfig says `insecure-skip-tls-verify`.
- `tcp_timeout` (mitmproxy 12.2.1+): connections idle this long are closed; `idle_timeout`
  (one day by default: a quiet watch lives up to an hour when direct).

The recording file is touched last: everything that can fail is checked first (`_prepare`:
the file's folder, an existing file unless `overwrite`, the ports, the credentials), and the
file is created (`O_EXCL` unless `overwrite`) only once every listener is up — a proxy that
does not start leaves an existing recording as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import socket
import sys
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mitmproxy import ctx, options
from mitmproxy.addons import default_addons
from mitmproxy.certs import CertStore
from mitmproxy.master import Master

from k8s_wiretap import __version__
from k8s_wiretap.capture.outputs import FileOutput, recording_problem
from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY, RETRY, Output, Recorder
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.paths import state_dir
from k8s_wiretap.proxy.addon import DEFAULT_IDLE_TIMEOUT, Wiretap
from k8s_wiretap.proxy.clientauth import client_authority, client_context
from k8s_wiretap.proxy.etcd import EtcdWatch
from k8s_wiretap.proxy.guard import HANDSHAKE_TIMEOUT, MAX_CLIENT_CONNECTIONS, Guard
from k8s_wiretap.proxy.limits import HEADER_TIMEOUT, REQUEST_TIMEOUT
from k8s_wiretap.proxy.routes import Route, is_loopback
from k8s_wiretap.proxy.upstream import DEFAULT_ACCEPT_HOSTS, Upstream

__all__ = [
    "ProxyServer",
    "ProxySettings",
    "check_bounds",
    "default_confdir",
    "proxy_ca_pem",
]

START_TIMEOUT = 30.0


def default_confdir() -> Path:
    return state_dir() / "proxy"


def proxy_ca_pem(confdir: Path) -> bytes:
    """The proxy's CA certificate, creating the CA (key 0600, folder 0700) if needed."""
    confdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    confdir.chmod(0o700)
    CertStore.from_store(str(confdir), "mitmproxy", 2048)
    for key_file in confdir.glob("mitmproxy-ca*.p*"):
        if "cert" not in key_file.name:
            key_file.chmod(0o600)
    return (confdir / "mitmproxy-ca-cert.pem").read_bytes()


@dataclass
class ProxySettings:
    routes: list[Route]
    record: Path | None = None
    overwrite: bool = False  # replace an existing `record` (else it is refused)
    redact: bool = True
    max_body: int = DEFAULT_MAX_BODY
    outputs: list[Output] = field(default_factory=list)  # besides the recording: views
    etcd: str | None = None  # the API server's etcd (http URL): record what lands there
    accept_hosts: str = DEFAULT_ACCEPT_HOSTS
    idle_timeout: int = DEFAULT_IDLE_TIMEOUT
    header_timeout: int = HEADER_TIMEOUT  # seconds for a request head, then 408 (limits.py)
    request_timeout: int = REQUEST_TIMEOUT  # seconds for head and body, then 408 (limits.py)
    handshake_timeout: int = HANDSHAKE_TIMEOUT  # seconds for a TLS handshake (guard.py)
    max_client_connections: int = MAX_CLIENT_CONNECTIONS  # open per client address (guard.py)
    # when the recording fails: "resume" (try it again every `record_retry` seconds),
    # "continue" (unrecorded from then on) or "exit" (stop, status 1)
    on_record_error: str = "resume"
    record_retry: float = RETRY
    confdir: Path = field(default_factory=default_confdir)
    header: dict[str, Any] = field(default_factory=dict)  # a part's header fields (workers.py)
    version_check: bool = True  # ask /version once listening (a worker leaves it to its parent)


def check_port_free(host: str, port: int) -> None:
    """Refuse a port something listens on. SO_REUSEADDR as asyncio's own listener sets it
    (POSIX): connections of a proxy stopped a moment ago, in TIME-WAIT, do not count."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        if os.name == "posix":
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise UsageError(f"cannot listen on {host}:{port}: {error.strerror}") from error


def check_bounds(settings: ProxySettings) -> None:
    """The listener's timeouts and limits are positive (a UsageError names the flag)."""
    for flag, value in (
        ("--idle-timeout", settings.idle_timeout),
        ("--request-timeout", settings.request_timeout),
        ("--handshake-timeout", settings.handshake_timeout),
        ("--max-client-connections", settings.max_client_connections),
    ):
        if value <= 0:
            raise UsageError(f"{flag} {value}: must be positive")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class ProxyServer:
    """The wiretap proxy: `start()` in a thread, or `serve()` in the foreground.

    mitmproxy keeps its master and options in module globals (`mitmproxy.ctx`), so one
    process runs one proxy at a time; a second one is refused rather than left to share
    (and silently break) the first one's configuration.
    """

    _active: ProxyServer | None = None
    _active_lock = threading.Lock()

    def __init__(self, settings: ProxySettings) -> None:
        self.settings = settings
        # The recording file joins the outputs once the proxy listens (`_go_live`); the
        # recorder starts after that, so it writes nothing anywhere before.
        outputs: list[Output] = list(settings.outputs)
        self.recorder = Recorder(
            outputs,
            redactor=Redactor() if settings.redact else None,
            max_body=settings.max_body,
            on_failure=self._recording_failed,
            retry=settings.record_retry if settings.on_record_error == "resume" else None,
            on_resumed=self._recording_resumed,
        )
        self._recording: Output | None = None  # the file, once `_go_live` opens it
        self._master: Master | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._version_check: threading.Thread | None = None

    def _options(self) -> dict[str, object]:
        routes = self.settings.routes
        accesses = {(r.access.server, r.access.ca_pem, r.access.insecure) for r in routes}
        if len(accesses) != 1:
            raise UsageError("all routes of one proxy must lead to the same API server")
        access = routes[0].access
        values: dict[str, object] = {
            "mode": [route.mode for route in routes],
            "confdir": str(self.settings.confdir),
            "connection_strategy": "lazy",
            "upstream_cert": False,
            "keep_host_header": True,
            "ssl_insecure": access.insecure,
            "tcp_timeout": self.settings.idle_timeout,
            "wiretap_header_timeout": self.settings.header_timeout,
            "wiretap_request_timeout": self.settings.request_timeout,
            "wiretap_handshake_timeout": self.settings.handshake_timeout,
            "wiretap_max_client_connections": self.settings.max_client_connections,
        }
        if access.ca_pem and not access.insecure:
            values["ssl_verify_upstream_trusted_ca"] = str(self._upstream_ca(access.ca_pem))
        return values

    def _upstream_ca(self, pem: bytes) -> Path:
        path = self.settings.confdir / f"upstream-ca-{hashlib.sha256(pem).hexdigest()[:12]}.pem"
        path.write_bytes(pem)
        return path

    def _claim(self) -> None:
        with ProxyServer._active_lock:
            if ProxyServer._active is not None and ProxyServer._active is not self:
                raise WiretapError("a wiretap proxy already runs in this process")
            ProxyServer._active = self

    def _release(self) -> None:
        with ProxyServer._active_lock:
            if ProxyServer._active is self:
                ProxyServer._active = None

    def _prepare(self) -> None:
        """Everything that can fail with a clear message, before any listener opens and
        before anything is written."""
        check_bounds(self.settings)
        record = self.settings.record
        if record is not None:
            problem = recording_problem(
                record, overwrite=self.settings.overwrite, hint="--overwrite replaces it"
            )
            if problem:
                raise UsageError(f"--record: {problem}")
        for route in self.settings.routes:
            check_port_free(route.host, route.port)
            if route.access.has_credentials:
                route.credentials.current()
        proxy_ca_pem(self.settings.confdir)
        if any(route.remote for route in self.settings.routes):
            client_authority(self.settings.confdir)  # what remote clients' certificates need

    async def _main(self) -> None:
        master = Master(options.Options(), event_loop=asyncio.get_running_loop())
        master.addons.add(*default_addons())
        listeners = {route.mode: route.name for route in self.settings.routes}
        master.addons.add(
            Guard(),
            Upstream(self.settings.routes, self.settings.accept_hosts),
            _Ready(self),  # before Wiretap: the recording is open before the recorder starts
            Wiretap(self.recorder, listeners),
        )
        master.options.update(**self._options())
        self._master = master
        await master.run()

    def _check_listening(self) -> None:
        assert self._master is not None
        servers = self._master.addons.get("proxyserver").servers
        failed = [s for s in servers if not s.is_running]
        if failed:
            raise UsageError(f"cannot listen: {failed[0].last_exception}")

    def _go_live(self) -> None:
        """Every listener is up: now, and only now, create the recording file."""
        self._check_listening()
        record = self.settings.record
        if record is None:
            return
        try:
            output = FileOutput(
                record,
                redacted=self.settings.redact,
                max_body=self.settings.max_body,
                overwrite=self.settings.overwrite,
                header=self.settings.header,
            )
        except FileExistsError as error:  # created since _prepare looked
            raise UsageError(f"--record: {record} exists (--overwrite replaces it)") from error
        except OSError as error:
            raise UsageError(f"--record {record}: {error.strerror}") from error
        self.recorder.outputs.insert(0, output)
        self._recording = output

    def _recording_failed(self, message: str, output: Output | None) -> None:
        """(The recorder's thread.) Say at once that an output stopped; when it is the
        recording (or the recorder itself) and `on_record_error` is "exit", stop the proxy
        with status 1. Traffic never waits for any of it."""
        print(f"k8s-wiretap: {message}", file=sys.stderr, flush=True)
        recording = output is None or output is self._recording
        if not (recording and self.settings.on_record_error == "exit"):
            return
        self._error = WiretapError(f"{message} (--on-record-error exit: the proxy stopped)")
        master = self._master
        if master is not None:
            with contextlib.suppress(RuntimeError):  # its loop has ended: it is stopping
                master.event_loop.call_soon_threadsafe(master.shutdown)

    def _recording_resumed(self, message: str, output: Output) -> None:
        """(The recorder's thread.) Say that a suspended output is written again."""
        print(f"k8s-wiretap: {message}", file=sys.stderr, flush=True)

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # reported to start()
            self._error = error
            self._ready.set()

    def start(self) -> ProxyServer:
        """Listen in a background thread; returns once every listener is up."""
        self._prepare()  # touches no mitmproxy state: fails the same with another proxy up
        self._claim()
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> ProxyServer:
        self._thread = threading.Thread(target=self._thread_main, name="wiretap-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            raise WiretapError("the proxy did not start within 30 s")
        self._raise_start_error()
        if self._version_check is not None:  # done before the caller's clients start
            self._version_check.join(VERSION_TIMEOUT)
        return self

    def _raise_start_error(self) -> None:
        if isinstance(self._error, WiretapError):
            raise self._error
        if self._error is not None:
            raise WiretapError(f"the proxy failed to start: {self._error}")

    @property
    def idle_timeout(self) -> int | None:
        """Seconds mitmproxy lets a connection idle now (its `tcp_timeout`); None if not
        started."""
        return None if self._master is None else int(self._master.options.tcp_timeout)

    def stop(self) -> None:
        if self._master is not None:
            self._master.shutdown()
        if self._thread is not None:
            self._thread.join(30)
        self._release()

    def serve(self) -> None:
        """Run in the foreground until interrupted."""
        self._prepare()
        self._claim()
        try:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(self._serve())
        finally:
            self._release()
        self._raise_start_error()

    async def _serve(self) -> None:
        task = asyncio.create_task(self._main())
        while not self._ready.is_set() and not task.done():
            await asyncio.sleep(0.02)
        if self._ready.is_set() and self._error is None and not task.done():
            # `lab down` and service managers stop the proxy with SIGTERM, a user with
            # Ctrl-C: shut down, so the recording gets what is queued, an end for every open
            # exchange and a note of the signal. Before the announcement: one who reads it
            # may signal at once.
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, self._stop_by, signum)
            self._announce()
        await task

    def _stop_by(self, signum: int) -> None:
        """A signal stops the proxy: the recording says so at its end."""
        self.recorder.stopped_by(signal.Signals(signum).name)
        assert self._master is not None
        self._master.shutdown()

    def _announce(self) -> None:
        announce(self.settings, sys.stderr)


def announce(settings: ProxySettings, out: IO[str], processes: str = "") -> None:
    """Where the proxy listens and records, once it does (`processes`: " (N workers)")."""
    for route in settings.routes:
        print(
            f"k8s-wiretap: {route.name}: listening on http(s)://{route.host}:{route.port}"
            f" -> {route.access.server}{processes}",
            file=out,
        )
    if settings.record:
        print(f"k8s-wiretap: recording to {settings.record}", file=out)
    out.flush()


VERSION_AGENT = f"k8s-wiretap/{__version__} (version check)"
VERSION_TIMEOUT = 10.0
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never $http_proxy


def _loopback(host: str) -> str:
    """How to reach a listener on `host` from this machine (a wildcard means loopback)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if ":" in host:
        return "[::1]" if host == "::" else f"[{host}]"
    return host


def _version_opener(route: Route, confdir: Path) -> tuple[urllib.request.OpenerDirector, str]:
    """How to reach the listener: plain HTTP over loopback, or, where it listens on one
    address other machines reach, TLS with a client certificate of the proxy's client CA."""
    address = _loopback(route.host)
    if is_loopback(address.strip("[]")):
        return DIRECT, f"http://{address}:{route.port}"
    context = client_context(confdir)
    https = urllib.request.HTTPSHandler(context=context)
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), https), (
        f"https://{address}:{route.port}"
    )


def ask_versions(routes: list[Route], confdir: Path | None = None) -> threading.Thread:
    """GET /version once per API server, through the proxy itself, so that every recording
    says which Kubernetes release it came from (decoding and explanations depend on it).
    The request goes through a listener like any client's and is recorded as an exchange of
    `k8s-wiretap`; a server that does not answer is just not asked again."""
    folder = confdir or default_confdir()

    def ask() -> None:
        seen: set[str] = set()
        for route in routes:
            if route.access.server in seen:
                continue
            seen.add(route.access.server)
            with contextlib.suppress(OSError):
                opener, base = _version_opener(route, folder)
                request = urllib.request.Request(
                    f"{base}/version", headers={"User-Agent": VERSION_AGENT}
                )
                opener.open(request, timeout=VERSION_TIMEOUT).close()

    thread = threading.Thread(target=ask, name="k8s-wiretap version", daemon=True)
    thread.start()
    return thread


class _Ready:
    """Tells the ProxyServer that mitmproxy's listeners are set up, after creating the
    recording; if either fails, the proxy shuts down and the ProxyServer raises the error."""

    def __init__(self, server: ProxyServer) -> None:
        self.server = server
        self._etcd: EtcdWatch | None = None

    def done(self) -> None:
        """Before the recorder closes (this addon comes before Wiretap's `done`)."""
        if self._etcd is not None:
            self._etcd.stop()

    def running(self) -> None:
        try:
            self.server._go_live()
        except Exception as error:  # mitmproxy would only log it
            self.server._error = error
            ctx.master.shutdown()
        else:
            if self.server.settings.version_check:
                self.server._version_check = ask_versions(
                    self.server.settings.routes, self.server.settings.confdir
                )
            etcd = self.server.settings.etcd
            if etcd:
                self._etcd = EtcdWatch(etcd, self.server.recorder.put).start()
        finally:
            self.server._ready.set()
