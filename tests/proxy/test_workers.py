"""`proxy --workers 2` in front of the lab: both workers serve, one recording in parts,
read back whole; a worker killed is restarted while the other serves; SIGTERM ends all."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from k8s_wiretap.capture import parts
from k8s_wiretap.capture.reader import file_records, load
from k8s_wiretap.cli import build_parser
from k8s_wiretap.commands.live import child_argv
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.server import free_port
from k8s_wiretap.proxy.workers import (
    CRASHES,
    STACKS,
    STOP_TIMEOUT_ENV,
    SUPERVISOR_ENV,
    WORKER_DIED,
    worker_argv,
)
from k8s_wiretap.views.tui import ReplayApp
from tests.conftest import Kubectl, cli, wait_until
from tests.proxy.conftest import ProxyProcess, spawn_proxy
from tests.views.tui.pilot import until

LAB = 60  # seconds for what the lab and the proxy must do: generous, never a speed
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def workers_of(proxy: ProxyProcess) -> list[int]:
    pid = proxy.process.pid
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def get(proxy: ProxyProcess, path: str) -> int:
    """One GET on a connection of its own (urllib opens one a request)."""
    with DIRECT.open(f"{proxy.url}{path}", timeout=LAB) as response:
        response.read()
        return int(response.status)


def many_gets(proxy: ProxyProcess, count: int, path: str) -> list[int]:
    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(lambda _: get(proxy, path), range(count)))


def ids_in_order(path: Path) -> list[str]:
    return [str(r["id"]) for r in file_records(path, []) if r["record"] == "request"]


def ids_in(path: Path) -> set[str]:
    return {str(r["id"]) for r in file_records(path, []) if r["record"] == "request"}


def requests_in(path: Path) -> int:
    return sum(r["record"] == "request" for r in file_records(path, []))


def test_two_workers_serve_one_listener_and_record_one_recording(
    lab: LabState, tmp_path: Path
) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    try:
        assert len(workers_of(proxy)) == 2
        kubectl = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
        clients = [kubectl.popen("get", "configmaps", "-A") for _ in range(6)]
        path = "/api/v1/namespaces/default/configmaps"
        assert many_gets(proxy, 96, path) == [200] * 96
        for client in clients:
            assert client.wait(LAB) == 0, client.stderr.read() if client.stderr else ""
        first, second = proxy.record, parts.part_path(proxy.record, 1)
        wait_until(lambda: requests_in(first) + requests_in(second) >= 97, LAB, "all recorded")
        assert requests_in(first) > 0 and requests_in(second) > 0  # both workers served
    finally:
        proxy.stop()
    said = proxy.log.read_text()
    assert said.count("listening on") == 1 and "(2 workers)" in said
    assert said.count("recording to") == 1
    # both workers print to one stdout: each exchange's line whole, on a line of its own
    printed = [line for line in said.splitlines() if f"{path} " in line]
    assert len(printed) == 96
    assert all(re.match(r"\d\d:\d\d:\d\d\.\d{3} ", line) for line in printed), printed
    recording = load(proxy.record)
    assert not recording.warnings
    assert not {"recording", "part", "workers"} & set(recording.header)  # one file: merged
    assert sum(e.path == path for e in recording.exchanges) == 96
    assert sum(e.user_agent.startswith("kubectl") for e in recording.exchanges) >= 6
    versions = [
        e for e in recording.exchanges if e.path == "/version" and "version check" in e.user_agent
    ]
    assert len(versions) == 1  # asked once, by the supervisor, not by each worker
    assert len({e.id for e in recording.exchanges}) == len(recording.exchanges)
    assert all(e.end is not None for e in recording.exchanges)  # SIGTERM: all ended cleanly
    assert proxy.process.returncode == 0

    explained = cli("explain", "--format", "json", str(proxy.record))
    assert explained.returncode == 0, explained.stderr
    objects = [json.loads(line) for line in explained.stdout.splitlines() if line.strip()]
    assert sum(path in json.dumps(o) for o in objects) >= 96
    lines = cli("explain", "--format", "lines", "--all", str(proxy.record))
    assert lines.returncode == 0 and lines.stdout.count(path) >= 96


def get_with_token(proxy: ProxyProcess, path: str, token: str) -> int:
    """One GET that brings its own bearer token (the proxy forwards it; the lab refuses it)."""
    request = urllib.request.Request(f"{proxy.url}{path}", headers={"Authorization": token})
    try:
        with DIRECT.open(request, timeout=LAB) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        error.read()
        return int(error.code)


def plain_records(path: Path) -> list[dict[str, object]]:
    """The file's lines as a script reads them: plain json, line by line, nothing else."""
    with path.open() as lines:
        return [json.loads(line) for line in lines]


def test_the_file_named_holds_every_exchange_once_the_proxy_stops(
    lab: LabState, tmp_path: Path
) -> None:
    """`--record FILE` with 2 workers: while the proxy runs the parts are said at the start;
    once it stops, FILE alone, read with plain json (as grep, jq or a script read it),
    holds every exchange, redacted: a check for a leaked token on it checks them all."""
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    secret = f"Bearer leak-check-{os.getpid()}"
    paths = [f"/api/v1/namespaces/default/configmaps?limit={n}" for n in range(1, 65)]
    try:
        with ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(lambda p: get_with_token(proxy, p, f"{secret}-{p}"), paths))
        assert statuses == [401] * 64  # the lab does not know the token: still recorded
        first, second = proxy.record, parts.part_path(proxy.record, 1)
        wait_until(lambda: requests_in(first) + requests_in(second) >= 65, LAB, "all recorded")
        assert requests_in(first) > 0 and requests_in(second) > 0  # both workers served
    finally:
        proxy.stop()
    assert proxy.process.returncode == 0
    said = proxy.log.read_text()
    assert (
        "2 workers record in parts while the proxy runs: recording.jsonl and "
        "recording.jsonl.part-1 beside it, merged into recording.jsonl when the proxy stops"
    ) in said
    assert f"merged the recording's 2 parts into {proxy.record}" in said
    assert sorted(p.name for p in tmp_path.glob("recording.jsonl*")) == ["recording.jsonl"]

    records = plain_records(proxy.record)
    header, rest = records[0], records[1:]
    assert header["record"] == "header" and header["redacted"] is True
    assert not {"recording", "part", "workers"} & set(header)
    requests = {str(r["id"]): r for r in rest if r["record"] == "request"}
    assert sorted(str(r["path"]) for r in requests.values() if r["path"] in paths) == sorted(paths)
    ended = {str(r["id"]) for r in rest if r["record"] == "end"}
    assert set(requests) <= ended  # every exchange whole, its end too
    assert "leak-check" not in proxy.record.read_text()  # redacted in every part
    assert load(proxy.record).warnings == []


def test_parts_a_killed_supervisor_leaves_read_as_one_by_the_name(
    lab: LabState, tmp_path: Path
) -> None:
    """The supervisor killed (no merge): its workers stop by themselves, each part ends,
    and the readers find every part from the file named."""
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    path = "/api/v1/namespaces/default/configmaps"
    try:
        assert many_gets(proxy, 32, path) == [200] * 32
        first, second = proxy.record, parts.part_path(proxy.record, 1)
        wait_until(lambda: requests_in(first) + requests_in(second) >= 33, LAB, "all recorded")
        assert requests_in(first) > 0 and requests_in(second) > 0
        children = workers_of(proxy)
        os.kill(proxy.process.pid, signal.SIGKILL)
        proxy.process.wait(LAB)
        wait_until(
            lambda: not any(Path(f"/proc/{pid}").exists() for pid in children), LAB, "workers"
        )
    finally:
        if proxy.process.poll() is None:
            proxy.stop()
    assert parts.all_parts(proxy.record) == [first, second]  # left as they were
    recording = load(proxy.record)
    assert sum(e.path == path for e in recording.exchanges) == 32
    assert all(e.end is not None for e in recording.exchanges)  # each worker stopped cleanly
    explained = cli("explain", "--format", "lines", "--all", str(proxy.record))
    assert explained.returncode == 0 and explained.stdout.count(path) >= 32
    exported = cli("export", "--har", "-", str(proxy.record))
    assert exported.returncode == 0, exported.stderr
    entries = json.loads(exported.stdout)["log"]["entries"]
    assert sum(entry["request"]["url"].endswith(path) for entry in entries) == 32


def test_a_worker_killed_is_restarted_while_the_other_serves(lab: LabState, tmp_path: Path) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    path = "/api/v1/namespaces/default/configmaps"
    # 16 watches left open, on connections of their own: each worker holds some (all 16
    # on one worker: 1 in 32,768), so the killed one leaves exchanges open
    watches = [DIRECT.open(f"{proxy.url}{path}?watch=1", timeout=LAB) for _ in range(16)]
    try:
        assert many_gets(proxy, 16, path) == [200] * 16
        victim, survivor = workers_of(proxy)
        os.kill(victim, signal.SIGKILL)
        # once the supervisor has reaped it, its sockets are closed: new connections go to
        # the survivor (what was in flight on the killed worker is lost, as with one proxy)
        wait_until(lambda: f"(pid {victim}) died" in proxy.log.read_text(), LAB, "its death")
        # the listener stays up: the survivor takes every connection meanwhile
        assert many_gets(proxy, 32, path) == [200] * 32
        wait_until(lambda: "restarted" in proxy.log.read_text(), LAB, "the restart")
        said = proxy.log.read_text()
        assert f"worker 1 (pid {victim}) died (signal 9;" in said or (
            f"worker 0 (pid {victim}) died (signal 9;" in said
        )
        assert "restarting it, recording to recording.jsonl.part-2" in said
        now = workers_of(proxy)
        assert survivor in now and victim not in now and len(now) == 2
        assert many_gets(proxy, 32, path) == [200] * 32
        every = [parts.part_path(proxy.record, n) for n in range(3)]
        assert parts.all_parts(proxy.record) == every
        # the dead worker's exchanges were ended in its part when it was restarted
        ended = [{str(r["id"]) for r in file_records(p, []) if r["record"] == "end"} for p in every]
    finally:
        for watch in watches:
            watch.close()
        proxy.stop()
    assert proxy.process.returncode == 0
    assert parts.all_parts(proxy.record) == [proxy.record]  # merged, the restarted's part too
    assert "merged the recording's 3 parts into" in proxy.log.read_text()
    recording = load(proxy.record)
    assert sum(e.path == path for e in recording.exchanges) == 80
    assert all(e.end is not None for e in recording.exchanges)  # every exchange has an end
    # the killed worker's open watches (and any exchange whose end it had not written yet,
    # ~20 ms of them) end "proxy worker died", in its part
    died = {e.id for e in recording.exchanges if e.end and e.end.error == WORKER_DIED}
    watches_died = [e for e in recording.exchanges if e.id in died and "watch=1" in e.path]
    assert watches_died and all(
        e.path.startswith(path) for e in recording.exchanges if e.id in died
    )
    victims = [ids for ids in ended if died & ids]
    assert len(victims) == 1 and died <= victims[0]


def test_the_live_tui_follows_every_workers_part(lab: LabState, tmp_path: Path) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    path = "/api/v1/namespaces/default/configmaps"

    async def main() -> None:
        # as `proxy` on a terminal opens it (commands/live.py): the TUI on the recording
        app = ReplayApp(proxy.record, writer=lambda: proxy.process.poll() is None)
        async with app.run_test(size=(160, 40)) as pilot:
            rows = app.index.rows
            await until(pilot, lambda: app.follow_mode.active, "following", LAB)
            assert await asyncio.to_thread(many_gets, proxy, 48, path) == [200] * 48

            def listed() -> int:
                return sum(r.path == path for r in rows)

            await until(pilot, lambda: listed() == 48, "every GET as a row", LAB)
            first, second = proxy.record, parts.part_path(proxy.record, 1)
            assert requests_in(first) > 0 and requests_in(second) > 0  # from both parts
            merged = [r.id for r in rows]
            every = [ids_in_order(p) for p in parts.all_parts(proxy.record)]
            assert not app.index.warnings
            # stopping merges the parts into the file the TUI was opened on: it reads on
            proxy.stop()
            await until(pilot, lambda: app.index.done, "the end once the proxy stopped", LAB)
            assert all(r.ended is not None for r in rows)
            assert not app.index.warnings
            # every exchange of every part, each part's in the order it recorded them
            assert sorted(merged) == sorted(i for part in every for i in part)
            for part in every:
                assert [i for i in merged if i in set(part)] == part
            assert sorted(r.id for r in rows) == sorted(ids_in(proxy.record))

    try:
        asyncio.run(main())
    finally:
        proxy.stop()


def test_a_worker_that_exits_by_itself_stops_the_proxy(lab: LabState, tmp_path: Path) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    try:
        wait_until(lambda: "recording to" in proxy.log.read_text(), LAB, "both listening")
        first, second = workers_of(proxy)
        os.kill(first, signal.SIGTERM)  # it stops cleanly, as --on-record-error exit does
        assert proxy.process.wait(LAB) == 0
    finally:
        proxy.stop()
    assert "exited (status 0): stopping every worker" in proxy.log.read_text()
    assert not Path(f"/proc/{second}").exists()  # stopped and reaped before the exit
    assert all(e.end is not None for e in load(proxy.record).exchanges)


def test_a_worker_that_does_not_stop_is_killed_and_said(lab: LabState, tmp_path: Path) -> None:
    """A worker that does not stop once signalled (here: stopped, SIGSTOP) is killed after
    the stop timeout, said with its pid; the others stop, the parts are merged."""
    env = {STOP_TIMEOUT_ENV: "2"}
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2", env=env)
    try:
        wait_until(lambda: "recording to" in proxy.log.read_text(), LAB, "both listening")
        assert get(proxy, "/api/v1/namespaces/default/configmaps") == 200
        hung, other = workers_of(proxy)
        os.kill(hung, signal.SIGSTOP)
        proxy.process.terminate()
        assert proxy.process.wait(LAB) == 0
    finally:
        proxy.stop()
    log = proxy.log.read_text()
    assert re.search(rf"worker \d \(pid {hung}\) did not stop within 2 s of SIGTERM: killed", log)
    assert "did not stop" not in log.replace(f"(pid {hung}) did not stop", "")  # only it
    assert not Path(f"/proc/{hung}").exists() and not Path(f"/proc/{other}").exists()
    assert all(e.end is not None for e in load(proxy.record).exchanges)
    assert not parts.part_path(proxy.record, 1).exists()  # merged


def test_a_worker_says_where_its_threads_are_and_serves_on(lab: LabState, tmp_path: Path) -> None:
    """SIGUSR1 to a worker: its threads' stacks on the supervisor's stderr (what a stop
    that hangs prints before the kill), and it serves on."""
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    try:
        wait_until(lambda: "recording to" in proxy.log.read_text(), LAB, "both listening")
        for pid in workers_of(proxy):
            os.kill(pid, STACKS)
        stacks = re.compile(r"Thread 0x[0-9a-f]+ \(most recent call first\):\n  File ")
        wait_until(lambda: len(stacks.findall(proxy.log.read_text())) >= 2, LAB, "stacks")
        # each worker's thread that watches for its supervisor's end, in its loop
        watching = re.findall(r'proxy/workers\.py", line \d+ in watch', proxy.log.read_text())
        assert len(watching) >= 2
        codes = many_gets(proxy, 8, "/api/v1/namespaces/default/configmaps")
        assert codes == [200] * 8 and proxy.process.poll() is None
    finally:
        proxy.stop()
    assert proxy.process.returncode == 0


def test_a_worker_that_keeps_dying_is_not_restarted_for_ever(lab: LabState, tmp_path: Path) -> None:
    """A worker that dies soon after it listened, again and again (a request that kills it
    each time), is restarted CRASHES - 1 times, then left dead; the other goes on serving."""
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--workers", "2")
    path = "/api/v1/namespaces/default/configmaps"
    try:
        wait_until(lambda: "recording to" in proxy.log.read_text(), LAB, "both listening")
        survivor = workers_of(proxy)[0]
        for death in range(1, CRASHES + 1):
            (victim,) = [pid for pid in workers_of(proxy) if pid != survivor]
            os.kill(victim, signal.SIGKILL)
            if death < CRASHES:

                def restarted(n: int = death) -> bool:
                    return proxy.log.read_text().count("restarted (pid") == n

                wait_until(restarted, LAB, f"restart {death}")
        wait_until(lambda: "not restarted" in proxy.log.read_text(), LAB, "given up")
        assert workers_of(proxy) == [survivor]
        assert many_gets(proxy, 16, path) == [200] * 16  # the listener is still served
        assert proxy.process.poll() is None
    finally:
        proxy.stop()
    said = proxy.log.read_text()
    said_of_it = f"died {CRASHES} times within 30 s of starting: not restarted; 1 worker still"
    assert said_of_it + " serving" in said


def test_a_worker_whose_supervisor_is_gone_before_it_looks_stops(
    lab: LabState, tmp_path: Path
) -> None:
    """A worker started by a supervisor that died before the worker looked at its parent
    (its parent is then another process from the start) stops by itself."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    port = free_port()
    argv = [
        *(sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", lab.kubeconfig),
        *("--listen", f"127.0.0.1:{port}", "--quiet", "--confdir", str(tmp_path / "ca")),
        *("--workers", "2", "--worker", "0:orphan", "--record", str(tmp_path / "rec.jsonl")),
    ]
    env = {**os.environ, SUPERVISOR_ENV: str(gone.pid)}
    worker = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE)
    try:
        # SIGTERM to itself: a clean stop once it listens, the signal's own end before
        assert worker.wait(LAB) in (0, -signal.SIGTERM)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def test_the_supervisor_refuses_a_part_that_exists(lab: LabState, tmp_path: Path) -> None:
    (tmp_path / "rec.jsonl.part-1").write_text("an earlier run's part\n")
    result = cli(
        *["proxy", "--kubeconfig", lab.kubeconfig, "--workers", "2", "--no-tui"],
        *["--record", str(tmp_path / "rec.jsonl"), "--confdir", str(tmp_path / "ca")],
        timeout=LAB,
    )
    assert result.returncode == 2
    part = tmp_path / "rec.jsonl.part-1"
    assert f"--record: {part} exists (--overwrite replaces it)" in result.stderr
    assert part.read_text() == "an earlier run's part\n"
    assert not (tmp_path / "rec.jsonl").exists()


def proxy_args(*argv: str) -> argparse.Namespace:
    return build_parser(["proxy"]).parse_args(["proxy", *argv])


def test_workers_get_every_option_given_but_what_the_supervisor_decides() -> None:
    given = ["--kubeconfig", "/k", "--listen", "127.0.0.1:9", "--no-tui", "--no-redact"]
    given += ["--max-body", "1m", "--idle-timeout", "60", "--accept-hosts", "^h$"]
    args = proxy_args(*given, "--workers", "3", "--record", "r.jsonl", "--etcd", "http://e")
    argv = worker_argv(args.proxy_parser, args)
    assert sorted(argv) == sorted(given)
    assert "--workers" not in argv and "--record" not in argv and "--etcd" not in argv
    assert worker_argv(args.proxy_parser, proxy_args()) == []  # defaults are not repeated


def test_the_live_tuis_proxy_gets_the_workers_count(tmp_path: Path) -> None:
    args = proxy_args("--workers", "3")
    assert "--workers 3" in " ".join(child_argv(args, tmp_path / "r.jsonl"))
