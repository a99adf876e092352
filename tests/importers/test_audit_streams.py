"""`import audit --jobs N` on a stream: standard input and gzip files of lines, read and
cut into chunks by the command's own process (`partition.Stream`), each chunk a partition
run by a real worker process, give the recording and the reports one job gives, byte for
byte, through real pipes and real gzip, bad input too (a broken or cut gzip, lines that are
no JSON, lines past `--max-line`, blank lines and a BOM at the cuts).

The pool the stitch is given here is a real `ProcessPoolExecutor` that keeps the partitions
it was given (`_Seen`), so that a test also sees that the stream was split (and how: its
chunks spooled to 0600 files of the parts folder, or carried by the partition, as Dask's
are); one job is `import_audit`, the same key given to both.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import multiprocessing
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_wiretap.importers import limits, partition
from k8s_wiretap.importers.audit import import_audit
from k8s_wiretap.importers.partition import Part, Stitch, plan
from k8s_wiretap.importers.sink import Sink
from k8s_wiretap.paths import RECORDINGS
from tests.importers.test_audit_jobs import DATA, KEY, _run, _workers, _written, logs

WIDE = RECORDINGS / "wide-session.audit.log.gz"
SAMPLE = DATA / "api-server/falco-v1beta1.jsonl"


class _Seen(ProcessPoolExecutor):
    """A real pool that keeps each partition it is given (and its spool file's mode)."""

    def __init__(self) -> None:
        super().__init__(2, mp_context=multiprocessing.get_context("forkserver"))
        self.parts: list[Part] = []
        self.modes: list[int] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        part = args[0]
        self.parts.append(part)
        if part.spool is not None:
            self.modes.append(stat.S_IMODE(Path(part.spool).stat().st_mode))
        return super().submit(fn, *args, **kwargs)


@pytest.fixture(scope="module")
def pool() -> Iterator[_Seen]:
    with _Seen() as executor:
        yield executor


def _imported(
    tmp_path: Path,
    paths: list[Path],
    pool: _Seen | None,
    size: int,
    bounds: limits.Limits = limits.DEFAULT,
    *,
    spooled: bool = True,
) -> tuple[bytes, Any]:
    """The recording and reports of `paths` by one job (pool None) or by `pool`, each
    stream cut in chunks of `size` bytes (spooled, or carried)."""
    out = tmp_path / ("one.jsonl" if pool is None else "jobs.jsonl")
    out.unlink(missing_ok=True)
    with Sink(out, source="audit log", key=KEY) as sink:
        if pool is None:
            importer = import_audit(paths, sink, bounds)
        else:
            folder = tmp_path / "parts"
            folder.mkdir(exist_ok=True)
            stitch = Stitch(sink, bounds, None)
            where = str(folder) if spooled else None
            importer = stitch.run(plan(paths, bounds, size, 2), pool, 3, where)
            assert list(folder.iterdir()) == []  # chunks and records removed once put in
    said = [
        (r.path, r.framing, r.shape, r.events, r.values, r.skips, r.closest, r.outside)
        for r in importer.files
    ]
    counts = (sink.exchanges, sink.skipped, importer.events, importer.ignored, importer.evicted)
    return _written(out.read_bytes(), numbered=False), (said, counts)


def _messy(wide: bytes) -> bytes:
    """The wide session's lines with a BOM, CRLF line ends, blank lines, white space, lines
    that are no JSON and lines longer than 5,000 bytes between them."""
    out = [b"\xef\xbb\xbf"]
    for n, line in enumerate(wide.splitlines()[:1500]):
        out.append(line + (b"\r\n" if n % 7 == 0 else b"\n"))
        out += [b"\n"] if n % 97 == 0 else []
        out += [b"  \t \n\n  \n"] if n % 131 == 0 else []
        out += [b"not json\n"] if n % 211 == 0 else []
        out += [b"{" + b"x" * 5000 + b"\n"] if n % 500 == 0 else []
    return b"".join(out)


def _gzip_cases(tmp_path: Path) -> dict[str, Path]:
    wide = gzip.decompress(WIDE.read_bytes())
    packed = gzip.compress(wide, 1)
    broken = bytearray(packed)
    for at in range(len(broken) // 2, len(broken) // 2 + 40):
        broken[at] ^= 0x55
    cases = {
        "wide": packed,
        "messy": gzip.compress(_messy(wide), 1),
        "cut": packed[: len(packed) * 2 // 3],
        "broken": bytes(broken),
    }
    paths = {}
    for name, data in cases.items():
        paths[name] = tmp_path / f"{name}.log.gz"
        paths[name].write_bytes(data)
    return paths


@pytest.mark.parametrize("spooled", [True, False], ids=["spooled", "carried"])
def test_gzip_files_cut_into_chunks(tmp_path: Path, pool: _Seen, spooled: bool) -> None:
    """Each gzip file of lines is read and inflated by the stitch's process and cut into
    chunks run by the workers, spooled to 0600 files of the parts folder (a local pool's)
    or carried by the partition (Dask's); a broken or cut gzip ends as one job's does."""
    for name, path in _gzip_cases(tmp_path).items():
        for bounds in (limits.DEFAULT, limits.Limits(max_line=3000)):
            expected = _imported(tmp_path, [path], None, 0, bounds)
            pool.parts.clear()
            pool.modes.clear()
            got = _imported(tmp_path, [path], pool, 40_000, bounds, spooled=spooled)
            assert got == expected, (name, bounds)
            chunks = [part for part in pool.parts if part.path == path]
            assert len(chunks) > 3, (name, bounds)
            assert all(part.end is not None for part in chunks)
            if spooled:
                assert all(part.spool and part.data is None for part in chunks)
                assert pool.modes and set(pool.modes) == {0o600}
            else:
                assert all(part.data is not None and not part.spool for part in chunks)


def test_gzip_files_between_plain_files(tmp_path: Path, pool: _Seen) -> None:
    """Streams and files in one import, in order, the same file twice."""
    cases = _gzip_cases(tmp_path)
    paths = [SAMPLE, cases["wide"], SAMPLE, cases["messy"], cases["wide"], cases["cut"]]
    assert _imported(tmp_path, paths, pool, 30_000) == _imported(tmp_path, paths, None, 0)
    planned = plan(paths, limits.DEFAULT, 30_000)
    assert sum(isinstance(item, partition.Stream) for item in planned) == 4


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=logs(), size=st.integers(1, 3000))
def test_built_gzip_logs_cut_anywhere(
    tmp_path: Path, pool: _Seen, lines: list[bytes], size: int
) -> None:
    log = tmp_path / "audit.log.gz"
    log.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    for spooled in (True, False):
        assert _imported(tmp_path, [log], pool, size, spooled=spooled) == _imported(
            tmp_path, [log], None, size
        )


# -- standard input: a real pipe into a process of its own --------------------------------
STDIN_IMPORT = """
import json, multiprocessing, sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from k8s_wiretap.importers import limits
from k8s_wiretap.importers.audit import STDIN, import_audit
from k8s_wiretap.importers.partition import Stitch, plan
from k8s_wiretap.importers.sink import Sink

out, size, max_line, folder = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
bounds = limits.Limits(max_line=max_line)
parts = []

class Seen(ProcessPoolExecutor):
    def submit(self, fn, /, *args, **kwargs):
        parts.append(args[0])
        return super().submit(fn, *args, **kwargs)

with Sink(out, source="audit log", key=b"k" * 32) as sink:
    if size == 0:
        importer = import_audit([STDIN], sink, bounds)
    else:
        with Seen(2, mp_context=multiprocessing.get_context("forkserver")) as pool:
            planned = plan([STDIN], bounds, size, 2)
            importer = Stitch(sink, bounds, None).run(planned, pool, 3, folder)
said = [
    (str(r.path), r.framing, r.shape, r.events, r.values, sorted(r.skips.items()), r.outside)
    for r in importer.files
]
counts = (sink.exchanges, sink.skipped, importer.events, importer.ignored)
print(json.dumps({"said": said, "counts": counts, "parts": len(parts),
                  "spooled": all(p.spool and p.data is None for p in parts)}))
"""


def _from_stdin(tmp_path: Path, data: bytes, size: int, max_line: int) -> tuple[bytes, Any]:
    out, folder = tmp_path / f"stdin-{size}.jsonl", tmp_path / "parts"
    folder.mkdir(exist_ok=True)
    out.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", STDIN_IMPORT, str(out), str(size), str(max_line), str(folder)],
        input=data,
        capture_output=True,
        timeout=600,
        check=True,
    )
    assert list(folder.iterdir()) == []
    return _written(out.read_bytes(), numbered=False), json.loads(done.stdout)


def test_standard_input_cut_into_chunks(tmp_path: Path) -> None:
    """Standard input (a pipe) of plain or gzip lines is cut into chunks spooled to the
    workers; what it gives is one job's, and so is a stream of JSON documents, read whole
    in the command's process, and an empty one."""
    wide = gzip.decompress(WIDE.read_bytes())
    cases = [
        (wide, 60_000, limits.MAX_LINE, True),
        (gzip.compress(wide, 1), 60_000, limits.MAX_LINE, True),
        (_messy(wide), 20_000, limits.MAX_LINE, True),
        (gzip.compress(_messy(wide)), 20_000, 3000, True),  # the rest from a long line here
        (gzip.compress(wide, 1)[:300_000], 30_000, limits.MAX_LINE, True),  # cut short
        ((DATA / "gke-audit.gcloud.json").read_bytes(), 500, limits.MAX_LINE, False),
        (b"", 500, limits.MAX_LINE, False),
    ]
    for data, size, max_line, split in cases:
        recording, one = _from_stdin(tmp_path, data, 0, max_line)
        got_recording, got = _from_stdin(tmp_path, data, size, max_line)
        assert got_recording == recording
        assert (got["said"], got["counts"]) == (one["said"], one["counts"])
        assert (got["parts"] > 3 and got["spooled"]) if split else got["parts"] == 0


def _cpu(pid: int) -> float:
    """The CPU seconds the process `pid` has taken (its user and system time)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _workers_cpu(tmp_path: Path, data: bytes) -> float:
    """The command `--jobs 2` on `data` piped in: the CPU its pool's workers were last seen
    to have taken (each looked at every 10 ms until the command ends)."""
    out = tmp_path / "watched.jsonl"
    command = [sys.executable, "-m", "k8s_wiretap", "import", "audit", "-", "-o", str(out)]
    command += ["--overwrite", "--jobs", "2", "--partition-size", "100k"]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None
    feeding = threading.Thread(target=process.stdin.write, args=(data,))
    feeding.start()
    seen: dict[int, float] = {}
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            for worker in _workers(process.pid):
                with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                    seen[worker] = _cpu(worker)
        if not feeding.is_alive() and not process.stdin.closed:
            process.stdin.close()
        time.sleep(0.01)
    feeding.join()
    if not process.stdin.closed:
        process.stdin.close()
    assert process.wait(timeout=300) == 0
    return sum(seen.values())


def test_standard_input_and_gzip_through_the_command(tmp_path: Path) -> None:
    """The command with `--jobs 2` and `--jobs 3` on standard input and gzip files (each
    gzip sample, the wide session) says and writes what `--jobs 1` does, and its pool's
    workers do the importing of a pipe."""
    cases = _gzip_cases(tmp_path)
    wide = gzip.decompress(WIDE.read_bytes())
    for data in (WIDE.read_bytes(), wide, cases["broken"].read_bytes()):
        one = _run("-", "-o", str(tmp_path / "one.jsonl"), "--overwrite", "--jobs", "1", data=data)
        for n, size in ((2, "50k"), (3, "7000")):
            out = tmp_path / f"jobs{n}.jsonl"
            got = _run(
                "-", "-o", str(out), "--overwrite", "--jobs", str(n),
                "--partition-size", size, data=data,
            )  # fmt: skip
            assert got.returncode == one.returncode == 0, got.stderr
            assert got.stderr.replace(bytes(out), bytes(tmp_path / "one.jsonl")) == one.stderr
            assert _written(out.read_bytes(), numbered=True) == _written(
                (tmp_path / "one.jsonl").read_bytes(), numbered=True
            )
    logs = [*sorted(DATA.rglob("*.gz")), cases["cut"], cases["messy"]]
    names = [str(log) for log in logs]
    one = _run(*names, "-o", str(tmp_path / "one.jsonl"), "--overwrite", "--jobs", "1")
    out = tmp_path / "jobs.jsonl"
    got = _run(*names, "-o", str(out), "--overwrite", "--jobs", "2", "--partition-size", "3000")
    assert got.returncode == one.returncode, got.stderr
    assert got.stderr.replace(bytes(out), bytes(tmp_path / "one.jsonl")) == one.stderr
    assert _written(out.read_bytes(), numbered=True) == _written(
        (tmp_path / "one.jsonl").read_bytes(), numbered=True
    )
    # and the workers imported it (the wide session four times: some 1.5 s of CPU)
    assert _workers_cpu(tmp_path, wide * 4) > 0.3


def _executed(address: str) -> int:
    """The tasks the Dask workers of the scheduler at `address` have run, in all."""
    distributed: Any = pytest.importorskip("distributed")
    with distributed.Client(address, timeout=10, set_as_default=False) as client:
        counts = client.run(lambda dask_worker: dask_worker.state.executed_count)
    return sum(counts.values())


def test_dask_reads_standard_input_in_chunks(tmp_path: Path, dask_cluster: str) -> None:
    """On Dask the chunks travel with their partitions (the workers could not read this
    process's standard input, nor a file of its own): standard input (gzip) and a gzip
    file give one job's recording, in many partitions run by the workers."""
    data = WIDE.read_bytes()
    one = _run("-", str(WIDE), "-o", str(tmp_path / "one.jsonl"), "--jobs", "1", data=data)
    out = tmp_path / "dask.jsonl"
    before = _executed(dask_cluster)
    got = _run(
        "-", str(WIDE), "-o", str(out), "--dask", dask_cluster, "--partition-size", "200k",
        data=data,
    )  # fmt: skip
    assert got.returncode == one.returncode == 0, got.stderr
    assert got.stderr.replace(bytes(out), bytes(tmp_path / "one.jsonl")) == one.stderr
    assert _written(out.read_bytes(), numbered=True) == _written(
        (tmp_path / "one.jsonl").read_bytes(), numbered=True
    )
    assert _executed(dask_cluster) - before >= 2 * 6  # 6 MB each: 200 kB chunks, and more


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.sampled_from([b"", b" ", b"\t \r", b"x", b"{}", b" y "]), max_size=6),
    bom=st.booleans(),
    longest=st.integers(0, 6),
    cuts=st.lists(st.integers(0, 40), max_size=4),
)
def test_a_chunks_last_line_told_blank_as_a_files(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[bytes],
    bom: bool,
    longest: int,
    cuts: list[int],
) -> None:
    """Whether a chunk ends with a blank line (which makes the next chunk's partition read
    past the white space it begins with) is told from the blocks it was read in, as the
    line before a file's range is told from the file (`_after_blank`)."""
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(line + b"\n" for line in lines)
    if not lines:
        return
    log = tmp_path_factory.mktemp("blank") / "audit.log"
    log.write_bytes(data + b"X\n")
    at = sorted({min(cut, len(data)) for cut in cuts} | {0, len(data)})
    blocks = [data[a:b] for a, b in itertools.pairwise(at) if b > a]
    expected = partition._after_blank(log, len(data), longest)
    assert partition._ends_blank(blocks, True, longest) is expected
