"""`import audit --jobs N`: the import split into partitions run by real worker processes
(`importers.partition`) writes the recording one job writes, byte for byte, and says the
same on stderr.

Two runs of the command make two redaction keys and write at two times: the command's
recordings are compared with the header's `created` and the notes' `time` set aside and
each placeholder numbered by its first place (equal values must still have equal
placeholders, different values different ones). In this process the two imports are given
one key, and only the times of writing are set aside. Ranges are made small
(`--partition-size`, `plan`'s size) so that the small logs here are cut many times:
between the stages of an exchange, inside a watch, between repeated events of an auditID.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_wiretap.importers import limits, partition
from k8s_wiretap.importers.audit import Event, import_audit
from k8s_wiretap.importers.partition import SEARCH, Stitch, plan, request_of
from k8s_wiretap.importers.sink import Sink
from k8s_wiretap.importers.timerange import TimeRange
from k8s_wiretap.paths import RECORDINGS

DATA = Path(__file__).parent / "data"
LOGS = sorted(
    path
    for path in DATA.rglob("*")
    if path.is_file() and path.name not in ("README.md", "samples.json")
)
WIDE = RECORDINGS / "wide-session.audit.log.gz"
PLACEHOLDER = re.compile(rb"redacted:[0-9a-f]{16}")
CREATED = re.compile(rb'"created":"[^"]*"')
NOTE_TIME = re.compile(rb'(\{"record":"note","time":)[0-9.e+-]+')
KEY = b"k" * 32


def _written(data: bytes, *, numbered: bool) -> bytes:
    """A recording without the times it was written at (and, `numbered`, its key)."""
    data = NOTE_TIME.sub(rb"\g<1>0", CREATED.sub(b'"created":""', data))
    if numbered:
        numbers: dict[bytes, bytes] = {}
        data = PLACEHOLDER.sub(
            lambda found: numbers.setdefault(found[0], b"redacted:%d" % len(numbers)), data
        )
    return data


def _run(*args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "import", "audit", *args],
        input=data,
        capture_output=True,
        timeout=600,
        check=False,
    )


def _same_as_one_job(
    tmp_path: Path, logs: list[Path], *more: str, jobs: tuple[int, ...] = (2, 3), size: int = 300
) -> None:
    """The command with `--jobs` N, for each N, against `--jobs 1`: the same exit status,
    stderr (OUT's name aside) and recording."""
    names = [str(log) for log in logs]
    one = tmp_path / "one.jsonl"
    expected = _run(*names, *more, "-o", str(one), "--overwrite", "--jobs", "1")
    assert expected.returncode in (0, 1), expected.stderr
    for n in jobs:
        out = tmp_path / f"jobs{n}.jsonl"
        got = _run(
            *names,
            *more,
            "-o",
            str(out),
            "--overwrite",
            "--jobs",
            str(n),
            "--partition-size",
            str(size),
        )
        assert got.returncode == expected.returncode, got.stderr
        assert got.stderr.replace(bytes(out), bytes(one)) == expected.stderr
        assert _written(out.read_bytes(), numbered=True) == _written(
            one.read_bytes(), numbered=True
        )
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".parts")] == []


def test_every_sample_log_in_one_import(tmp_path: Path) -> None:
    """Every log of tests/importers/data, given in order to one import: each cut into
    ranges of about 300 bytes (gzip files and JSON documents are one partition each)."""
    _same_as_one_job(tmp_path, LOGS)


@pytest.mark.parametrize("log", LOGS, ids=lambda path: str(path.relative_to(DATA)))
def test_each_sample_log(log: Path, tmp_path: Path) -> None:
    _same_as_one_job(tmp_path, [log], jobs=(2,), size=200)


def test_the_wide_session_log(tmp_path: Path) -> None:
    log = tmp_path / "wide.log"
    log.write_bytes(gzip.decompress(WIDE.read_bytes()))
    _same_as_one_job(tmp_path, [log], jobs=(2, 3), size=64 * 1024)
    _same_as_one_job(tmp_path, [log], jobs=(3,), size=2000)


def test_a_time_range_and_bounds(tmp_path: Path) -> None:
    log = tmp_path / "wide.log"
    log.write_bytes(gzip.decompress(WIDE.read_bytes()))
    times = sorted(json.loads(line)["requestReceivedTimestamp"] for line in log.open("rb"))
    since, until = times[len(times) // 4], times[3 * len(times) // 4]
    _same_as_one_job(tmp_path, [log], "--since", since, "--until", until, size=50_000)
    _same_as_one_job(tmp_path, [log], "--max-open", "5", jobs=(2,), size=50_000)


def test_standard_input_between_files(tmp_path: Path) -> None:
    """Standard input is read by the command's own process, in its place."""
    first, second = DATA / "api-server/falco-v1beta1.jsonl", DATA / "shippers/loki-logcli.jsonl"
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    data = second.read_bytes()
    expected = _run(str(first), "-", str(first), "-o", str(one), "--jobs", "1", data=data)
    assert expected.returncode == 0, expected.stderr
    got = _run(
        str(first),
        "-",
        str(first),
        "-o",
        str(two),
        "--jobs",
        "2",
        "--partition-size",
        "500",
        data=data,
    )
    assert got.returncode == 0, got.stderr
    assert got.stderr.replace(bytes(two), bytes(one)) == expected.stderr
    assert _written(two.read_bytes(), numbered=True) == _written(one.read_bytes(), numbered=True)


# -- logs built to be cut: exchanges across the cuts, repeated and late events -------------
USERS = ("alice", "system:serviceaccount:kube-system:job", "bob")


def _stage(
    audit_id: str, stage: str, verb: str, uri: str, second: int, *, code: int | None, user: str
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "RequestResponse",
        "auditID": audit_id,
        "stage": stage,
        "requestURI": uri,
        "verb": verb,
        "user": {"username": user, "extra": {"token-id": [f"t-{user}"]}},
        "sourceIPs": ["10.0.0.1"],
        "userAgent": "kubectl/v1.33.2",
        "requestReceivedTimestamp": f"2026-12-03T13:46:{second:02d}.000000Z",
        "stageTimestamp": f"2026-12-03T13:46:{second:02d}.500000Z",
    }
    if verb == "create" and stage != "RequestReceived":
        event["objectRef"] = {"resource": "secrets", "namespace": "default", "apiVersion": "v1"}
        event["requestObject"] = {"kind": "Secret", "data": {"key": f"c2VjcmV0{second:02d}"}}
    if code is not None and stage in ("ResponseStarted", "ResponseComplete"):
        event["responseStatus"] = {"metadata": {}, "code": code}
        if code >= 400:
            event["responseStatus"]["message"] = f"refused c2VjcmV0{second:02d}"
    return event


@st.composite
def logs(draw: st.DrawFn) -> list[bytes]:
    """A log of exchanges whose events interleave: watches (ResponseStarted, then much later
    ResponseComplete), requests with and without RequestReceived, Secrets created (whose
    refusals quote the value), auditIDs shared, events repeated and sent again late,
    unreadable lines."""
    exchanges = draw(st.integers(1, 25))
    streams: list[list[dict[str, Any]]] = []
    for n in range(exchanges):
        audit_id = draw(st.sampled_from([f"id-{n}", f"id-{n}", "shared"]))
        verb = draw(st.sampled_from(["get", "watch", "create", "list"]))
        uri = "/api/v1/namespaces/default/" + ("secrets" if verb == "create" else "pods")
        code = draw(st.sampled_from([200, 201, 403, 422, None]))
        user = draw(st.sampled_from(USERS))
        second = draw(st.integers(0, 59))
        stages = ["ResponseComplete"]
        if verb == "watch":
            stages = ["ResponseStarted", "ResponseComplete"]
        if draw(st.booleans()):
            stages = ["RequestReceived", *stages]
        if draw(st.integers(0, 9)) == 0:
            stages = stages[:-1]  # the log does not finish it
        events = [
            _stage(audit_id, stage, verb, uri, second, code=code, user=user) for stage in stages
        ]
        if events and draw(st.integers(0, 5)) == 0:
            events.append(events[draw(st.integers(0, len(events) - 1))])  # repeated, or late
        streams.append(events)
    order = draw(st.permutations([i for i, events in enumerate(streams) for _ in events]))
    lines, at = [], [0] * len(streams)
    for i in order:
        lines.append(json.dumps(streams[i][at[i]]).encode())
        at[i] += 1
        if draw(st.integers(0, 30)) == 0:
            lines.append(draw(st.sampled_from([b"not json", b"", b"{}", b"[1, 2]"])))
    return lines


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as executor:
        yield executor


def _in_process(
    tmp_path: Path,
    paths: list[Path],
    pool: ProcessPoolExecutor | None,
    size: int,
    bounds: limits.Limits = limits.DEFAULT,
    span: TimeRange | None = None,
) -> tuple[bytes, Any]:
    """The recording of `paths` by one job (pool None) or by `pool` in ranges of `size`."""
    out = tmp_path / ("one.jsonl" if pool is None else "jobs.jsonl")
    out.unlink(missing_ok=True)
    with Sink(out, source="audit log", key=KEY) as sink:
        if pool is None:
            importer = import_audit(paths, sink, bounds, span)
        else:
            stitch = Stitch(sink, bounds, span)
            folder = tmp_path / "parts"
            folder.mkdir(exist_ok=True)
            importer = stitch.run(plan(paths, bounds, size), pool, 3, str(folder))
            assert list(folder.iterdir()) == []  # each part's file removed once copied
    said = [
        (r.path, r.framing, r.shape, r.events, r.values, r.skips, r.closest, r.outside)
        for r in importer.files
    ]
    counts = (sink.exchanges, sink.skipped, importer.events, importer.ignored, importer.evicted)
    return _written(out.read_bytes(), numbered=False), (said, counts)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lines=logs(),
    size=st.integers(1, 3000),
    max_open=st.sampled_from([limits.MAX_OPEN, 3]),
)
def test_built_logs_cut_anywhere(
    tmp_path: Path, pool: ProcessPoolExecutor, lines: list[bytes], size: int, max_open: int
) -> None:
    log = tmp_path / "audit.log"
    log.write_bytes(b"\n".join(lines) + b"\n")
    bounds = limits.Limits(max_open=max_open)
    expected = _in_process(tmp_path, [log], None, size, bounds)
    assert _in_process(tmp_path, [log], pool, size, bounds) == expected
    # the same log twice in one import: every exchange of the second a repeat of the first's
    assert _in_process(tmp_path, [log, log], pool, size, bounds) == _in_process(
        tmp_path, [log, log], None, size, bounds
    )


def test_a_worker_that_hashes_as_the_stitch_gives_keys(tmp_path: Path) -> None:
    """A partition run where str hashes as in the stitch's process (here: this process,
    as in a worker forked from it) gives its requests' keys, one run elsewhere (another
    `Part.salt`) what the keys are the hashes of; both are put in place as one job's."""
    log = tmp_path / "wide.log"
    log.write_bytes(gzip.decompress(WIDE.read_bytes()))
    expected = _in_process(tmp_path, [log], None, 0)
    for elsewhere in (False, True):
        out = tmp_path / "jobs.jsonl"
        out.unlink(missing_ok=True)
        with Sink(out, source="audit log", key=KEY) as sink:
            stitch = Stitch(sink, limits.DEFAULT, None)
            parts = stitch.parts(plan([log], limits.DEFAULT, 64 * 1024), None)
            for part in parts:
                assert isinstance(part, partition.Part)
                result = partition.run(part)
                assert len(result.keys) == len(result.ids) and not result.requests
                if elsewhere:  # as a worker whose str hashes differ gives it
                    result = partition.run(dataclasses.replace(part, salt=None))
                    assert len(result.requests) == len(result.ids) and not result.keys
                stitch.add(part, result)
            stitch.importer.finish()
        assert stitch.repaired > 0
        assert _written(out.read_bytes(), numbered=False) == expected[0]


def test_a_request_is_told_alike_in_every_process() -> None:
    """What a partition says of each request it began (`request_of`) hashes, in the
    stitch's process, to the key the import tells that request by."""
    lines = gzip.decompress(WIDE.read_bytes()).splitlines()
    for line in lines:
        event = Event.of(json.loads(line))
        assert hash(request_of(event)) == event.key


# -- a worker that fails --------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        found += [int(child) for child in children]
    return found


def _workers(pid: int) -> list[int]:
    """The pool's workers of the command `pid`: its children forked from it (its own
    command line; not the resource tracker, which multiprocessing starts afresh)."""
    mine = Path(f"/proc/{pid}/cmdline").read_bytes()
    found = []
    for child in _children(pid):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes() == mine:
                found.append(child)
        except FileNotFoundError:  # ended meanwhile
            continue
    return found


def test_a_worker_killed_is_one_line_exit_1_and_no_recording(tmp_path: Path) -> None:
    """A worker that dies (the kernel's OOM killer, a node lost): one line, exit 1, no
    OUT and no partition files left beside it."""
    wide = gzip.decompress(WIDE.read_bytes())
    log = tmp_path / "big.log"
    with log.open("wb") as out:
        for copy in range(12):  # each copy's auditIDs its own
            out.write(wide.replace(b'"auditID":"', f'"auditID":"c{copy}-'.encode()))
    out_path = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "k8s_wiretap", "import", "audit", str(log)]
    command += ["-o", str(out_path), "--jobs", "2", "--partition-size", "256k"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):  # the command ended meanwhile
            workers = _workers(process.pid)
            if workers:
                killed = workers[0]
                os.kill(killed, signal.SIGKILL)
        time.sleep(0.01)
    _, stderr = process.communicate(timeout=300)
    assert killed is not None, "the import ended before a worker was seen"
    assert process.returncode == 1, stderr
    lines = stderr.decode().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("k8s-wiretap: import audit: a partition failed on 2 jobs: ")
    assert lines[0].endswith(f"({out_path} not written)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.log"]


@pytest.mark.parametrize("prefix", [b"", b"2026-12-03T13:46:00Z "])
def test_events_across_a_cut_read_again_from_their_line(
    tmp_path: Path, pool: ProcessPoolExecutor, prefix: bytes
) -> None:
    """The events of exchanges begun before a cut are read again by the stitch from where
    their partition began reading their value: past blank lines and the white space
    before a line (which the framing's prefix must not keep), and a line longer than the
    stitch reads at once (SEARCH bytes)."""
    lines = []
    for n in range(12):  # watches begun, each a cut before its end
        lines.append(
            _stage(f"w{n}", "ResponseStarted", "watch", "/api/v1/pods", n, code=200, user="bob")
        )
    for n in range(12):
        ended = _stage(
            f"w{n}", "ResponseComplete", "watch", "/api/v1/pods", n, code=200, user="bob"
        )
        if n % 2 == 0:  # after each kind of white space
            ended["annotations"] = {"note": "x" * (SEARCH + 1000 * n)}
        lines.append(ended)
    log = tmp_path / "audit.log"
    with log.open("wb") as written:
        for n, event in enumerate(lines):
            before = [b"", b"\n", b"  \n \t\n   "][n % 3]  # the line's white space too
            written.write(before + prefix + json.dumps(event).encode() + b"\n")
    expected = _in_process(tmp_path, [log], None, 0)
    for size in range(200, 4000, 150):  # cuts everywhere: after each kind of line
        out = tmp_path / "jobs.jsonl"
        out.unlink(missing_ok=True)
        with Sink(out, source="audit log", key=KEY) as sink:
            stitch = Stitch(sink, limits.DEFAULT, None)
            stitch.run(plan([log], limits.DEFAULT, size), pool, 3)
        assert stitch.redone == 0
        assert stitch.repaired >= 1
        assert _written(out.read_bytes(), numbered=False) == expected[0]


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    ("data", "longest", "blank"),
    [
        (b"abc\n  \n", 100, True),
        (b"abc\n", 100, False),
        (b"\n", 100, True),
        (BOM + b" \t\n", 100, True),  # a BOM is not the first line's
        (BOM + b"x\n \n", 100, True),
        (b"a\n" + b" " * 50 + b"\n", 50, True),
        (b"a\n" + b" " * 50 + b"\n", 49, False),  # too long to read: not blank
        (BOM + b" " * 50 + b"\n", 50, True),
        (b"x" + b" " * 50 + b"\n", 100, False),
    ],
)
@pytest.mark.parametrize("search", [1, 2, 4, 64])
def test_the_line_before_a_range_told_blank(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
    longest: int,
    blank: bool,
    search: int,
) -> None:
    """Whether the line before a range's first byte is blank (which makes one job read
    past the white space its range begins with), read back a chunk at a time."""
    monkeypatch.setattr(partition, "SEARCH", search)
    log = tmp_path / "audit.log"
    log.write_bytes(data + b"X\n")
    assert partition._after_blank(log, len(data), longest) is blank


def test_the_cuts_are_repaired_not_imported_again(
    tmp_path: Path, pool: ProcessPoolExecutor
) -> None:
    """On a log of one session's requests (watches open across every cut), each range is
    put in place as its partition gave it, the exchanges across the cuts fed again: no
    range is imported again in the stitch's process."""
    log = tmp_path / "wide.log"
    log.write_bytes(gzip.decompress(WIDE.read_bytes()))
    expected = _in_process(tmp_path, [log], None, 0)
    out = tmp_path / "jobs.jsonl"
    with Sink(out, source="audit log", key=KEY) as sink:
        stitch = Stitch(sink, limits.DEFAULT, None)
        stitch.run(plan([log], limits.DEFAULT, 256 * 1024), pool, 3)  # records given back
    assert stitch.redone == 0
    assert stitch.repaired > 20  # watches that ResponseStarted before a cut, ended after
    assert _written(out.read_bytes(), numbered=False) == expected[0]


# -- Dask -----------------------------------------------------------------------------------
def test_dask_gives_one_jobs_recording(tmp_path: Path, dask_cluster: str) -> None:
    """Every sample log and the wide session, relative paths (read by the workers in the
    command's working folder), cut small and run on two Dask workers."""
    wide = tmp_path / "wide.log"
    wide.write_bytes(gzip.decompress(WIDE.read_bytes()))
    logs = [
        path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path for path in LOGS
    ]
    for run in ([*logs, wide], [wide]):
        one, out = tmp_path / "one.jsonl", tmp_path / "dask.jsonl"
        names = [str(log) for log in run]
        expected = _run(*names, "-o", str(one), "--overwrite", "--jobs", "1")
        got = _run(
            *names,
            "-o",
            str(out),
            "--overwrite",
            "--dask",
            dask_cluster,
            "--partition-size",
            "2000",
        )
        assert got.returncode == expected.returncode, got.stderr
        assert got.stderr.replace(bytes(out), bytes(one)) == expected.stderr
        assert _written(out.read_bytes(), numbered=True) == _written(
            one.read_bytes(), numbered=True
        )
