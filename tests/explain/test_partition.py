"""`explain --format json --jobs N` / `--dask`: a recording explained in partitions that run
at once, their lines one job's byte for byte wherever the splits fall
(`explain/partition.py`)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench import audit_import
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.explain import partition, stream
from k8s_wiretap.explain.partition import Part, explain_part, plan, shares
from k8s_wiretap.kube.verbs import WRITES
from k8s_wiretap.views import json as json_view
from k8s_wiretap.views.json import write_json
from tests.conftest import cli
from tests.recorded import RECORDINGS

BUNDLED = sorted(RECORDINGS.glob("*.jsonl*"))
ROOT = Path(__file__).resolve().parents[2]


def one_job(path: Path) -> bytes:
    out = io.BytesIO()
    write_json(iter_records(path, []), out)
    return out.getvalue()


def in_parts(path: Path, times: list[float]) -> bytes:
    """The partitions split at `times` (in order), run here one after another."""
    bounds: list[float | None] = [None, *times, None]
    parts = [
        Part(str(path), index, len(bounds) - 1, bounds[index], bounds[index + 1])
        for index in range(len(bounds) - 1)
    ]
    return stitched(explain_part(p, json_view.line, json_view.skim) for p in parts)


def stitched(done: Iterable[partition.Done]) -> bytes:
    """The partitions' lines put together as the command does (`partition.Stitch`)."""
    stitch = partition.Stitch()
    lines = b"".join(stitch.add(d) for d in done)
    assert stitch.open == 0
    return lines


def awkward_splits(path: Path) -> list[float]:
    """Split times where a partition starts with state one job built before it: right
    after a write (its watchers' reactions come next), inside a watch (open across the
    split, explained when it ends), and right after a PATCH (replayed on the object as
    the history had it)."""
    exchanges = sorted(load(path).exchanges, key=lambda e: e.time)
    writes = [e for e in exchanges if e.info.verb in WRITES and e.status == 200]
    patches = [e for e in writes if e.info.verb == "patch"]
    watches = [e for e in exchanges if e.end is not None and e.end.time - e.time > 1.0]
    picked = [
        *(w.time + 1e-6 for w in writes[len(writes) // 3 :: max(1, len(writes) // 3)][:2]),
        *(p.time + 1e-6 for p in patches[len(patches) // 2 :][:1]),
        *((w.time + w.end.time) / 2 for w in watches[len(watches) // 2 :][:2] if w.end),
    ]
    return sorted(set(picked))


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name.split(".")[0] for p in BUNDLED])
def test_partitions_split_anywhere_write_one_jobs_lines(path: Path) -> None:
    splits = awkward_splits(path)
    assert len(splits) >= 3, "the recording has writes and watches to split at"
    assert in_parts(path, splits) == one_job(path)


def boundary_splits(path: Path) -> list[float]:
    """Split times on an exchange's own request time: a write's (the write is the first
    line of the partition after, the lines of the same time before it the partition
    before's), just after an informer's first LIST or WATCH (what it hands on is the
    next partition's cause: `Summaries.saw`, the chains' LISTED hops, an audit log's
    `began`), and just after the first /version answer's request (the release the
    bodies are decoded as)."""
    exchanges = sorted(load(path).exchanges, key=lambda e: e.time)
    writes = [e for e in exchanges if e.info.verb in WRITES and e.status == 200]
    starts: dict[tuple[str, str, str], float] = {}
    for e in exchanges:
        if e.info.verb in ("list", "watch") and e.info.is_resource_request:
            starts.setdefault((e.component, e.info.group, e.info.resource), e.time)
    informers = sorted(starts.values())
    version = [e for e in exchanges if e.path.split("?")[0] == "/version"]
    picked = [
        *(w.time for w in writes[len(writes) // 4 :: max(1, len(writes) // 4)][:3]),
        *(t + 1e-6 for t in informers[len(informers) // 2 :][:2]),
        *(v.time + 1e-6 for v in version[:1]),
    ]
    return sorted(set(picked))


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name.split(".")[0] for p in BUNDLED])
def test_partitions_split_on_an_exchanges_own_time_write_one_jobs_lines(path: Path) -> None:
    splits = boundary_splits(path)
    assert len(splits) >= 4, "the recording has writes and informers to split at"
    assert in_parts(path, splits) == one_job(path)


def dense_splits(path: Path, count: int) -> list[float]:
    """`count` split times at exchanges evenly spread over the recording (by index)."""
    times = sorted(e.time for e in load(path).exchanges)
    return sorted({times[len(times) * k // (count + 1)] for k in range(1, count + 1)})


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name.split(".")[0] for p in BUNDLED])
def test_a_partition_every_few_dozen_exchanges_writes_one_jobs_lines(path: Path) -> None:
    """Twenty partitions, each a few dozen lines, each after a skim of the rest: every
    line's state is one job's wherever it falls (a watch spans several partitions,
    a chain runs through them)."""
    splits = dense_splits(path, 20)
    assert len(splits) >= 15
    assert in_parts(path, splits) == one_job(path)


def test_without_the_skim_the_partitions_would_say_something_else() -> None:
    """What `skim` asks is needed: a partition that only reads the records before its
    range (no line's questions) writes other lines (causes, chains) than one job."""
    path = RECORDINGS / "wide-session.jsonl.gz"
    splits = awkward_splits(path)
    bounds: list[float | None] = [None, *splits, None]
    parts = [
        Part(str(path), i, len(splits) + 1, bounds[i], bounds[i + 1])
        for i in range(len(bounds) - 1)
    ]
    nothing = stitched(explain_part(p, json_view.line, lambda _e, _x: None) for p in parts)
    assert nothing != one_job(path)
    assert len(nothing.splitlines()) == len(one_job(path).splitlines())


def test_the_partition_before_a_split_leaves_the_watches_open_at_it_to_the_next() -> None:
    """A watch open across a split is explained when it ends: the partition before the
    split leaves its line (a hole) and stops reading there; the one after makes it."""
    path = RECORDINGS / "kubelet-life.jsonl.gz"
    records = list(iter_records(path, []))
    exchanges = sorted(load(path).exchanges, key=lambda e: e.time)
    watches = [e for e in exchanges if e.end is not None and e.end.time - e.time > 60.0]
    watch = watches[len(watches) // 2]
    assert watch.end is not None
    split = (watch.time + watch.end.time) / 2
    ended = next(
        i for i, r in enumerate(records) if r.get("id") == watch.id and r["record"] == "end"
    )
    read = 0

    def counted() -> Iterator[dict[str, Any]]:
        nonlocal read
        for record in records:
            read += 1
            yield record

    before, after = (
        stream.Gate(None, split, json_view.skim),
        stream.Gate(split, None, json_view.skim),
    )
    left: list[bytes | None] = []
    stream.explained(counted(), json_view.line, left.append, gate=before)
    assert read < ended, "it stopped before the watch it owns ended"
    assert before.handed >= 1 and left.count(stream.HOLE) == before.handed
    taken: list[bytes | None] = []
    stream.explained(iter(records), json_view.line, taken.append, gate=after)
    assert after.inherited == before.handed
    assert stream.HOLE not in taken
    whole = one_job(path).splitlines(keepends=True)
    assert [line for line in left if line is not stream.HOLE] + taken != whole
    holes = iter(taken[: after.inherited])
    assert [next(holes) if line is stream.HOLE else line for line in left] + taken[
        after.inherited :
    ] == whole


def test_a_release_that_comes_late_makes_the_skimming_partitions_make_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first /version answer after the records the stream waits for changes the release
    the bodies are decoded as: a partition that skimmed before it runs again, its skims
    whole lines (`Gate.unsure`), and writes one job's lines all the same."""
    monkeypatch.setattr(stream, "PRELUDE", 50)
    records = list(iter_records(RECORDINGS / "kubelet-life.jsonl.gz", []))
    version = {
        r["id"]
        for r in records
        if r.get("record") == "request" and r["path"].split("?")[0] == "/version"
    }
    assert version
    moved = [r for r in records if r.get("id") in version]
    rest = [r for r in records if r.get("id") not in version]
    late = tmp_path / "late.jsonl"
    late.write_bytes(
        b"".join(orjson.dumps(r) + b"\n" for r in [*rest[:1500], *moved, *rest[1500:]])
    )
    splits = awkward_splits(late)
    bounds: list[float | None] = [None, *splits, None]
    parts = [
        Part(str(late), i, len(bounds) - 1, bounds[i], bounds[i + 1])
        for i in range(len(bounds) - 1)
    ]
    done = [explain_part(p, json_view.line, json_view.skim) for p in parts]
    assert stitched(done) == one_job(late)
    assert not done[0].thorough and any(d.thorough for d in done)


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
def test_the_shares_give_every_partition_the_same_cost(workers: int) -> None:
    """Partition k costs SKIM_COST of what is before it and all of its range."""
    bounds = [0.0, *shares(workers), 1.0]
    assert bounds == sorted(bounds)
    costs = [partition.SKIM_COST * bounds[k] + bounds[k + 1] - bounds[k] for k in range(workers)]
    assert max(costs) - min(costs) < 1e-9
    if workers == 2:
        assert costs[0] == pytest.approx(1 / (2 - partition.SKIM_COST))


def test_a_small_recording_is_one_job_and_a_large_one_is_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(partition.PART_BYTES_ENV, raising=False)
    small = RECORDINGS / "history-session.jsonl.gz"
    assert not partition.worth(small)
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * partition.MIN_BYTES)
    assert partition.worth(big)
    monkeypatch.setenv(partition.PART_BYTES_ENV, "100000")
    assert partition.worth(small)
    parts = plan(small, 2)
    assert len(parts) > 10
    starts = [p.start for p in parts[1:] if p.start is not None]
    assert len(starts) == len(parts) - 1 and starts == sorted(set(starts))
    assert [p.end for p in parts[:-1]] == starts


def explain(
    path: Path, *options: str, part_bytes: int | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    if part_bytes is not None:
        environment[partition.PART_BYTES_ENV] = str(part_bytes)
    return cli("explain", str(path), "--format", "json", *options, env=environment)


def stdout_bytes(path: Path, *options: str, part_bytes: int | None = None) -> bytes:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    if part_bytes is not None:
        environment[partition.PART_BYTES_ENV] = str(part_bytes)
    done = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "explain", str(path), "--format", "json", *options],
        capture_output=True,
        env=environment,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name.split(".")[0] for p in BUNDLED])
def test_jobs_1_2_and_3_write_the_same_bytes(path: Path) -> None:
    one = stdout_bytes(path, "--jobs", "1")
    assert one == one_job(path)
    assert stdout_bytes(path, "--jobs", "2", part_bytes=1_500_000) == one
    assert stdout_bytes(path, "--jobs", "3", part_bytes=1_100_000) == one


@pytest.fixture(scope="module")
def audit_20000(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark's 20,290-event audit log (`bench/audit_import.py`), imported."""
    folder = tmp_path_factory.mktemp("audit")
    sample = audit_import.load(RECORDINGS / "wide-session.audit.log.gz")
    log, recording = folder / "audit.log", folder / "audit.jsonl"
    audit_import.write(sample, 10, log, zipped=False)
    done = cli("import", "audit", str(log), "-o", str(recording))
    assert done.returncode == 0, done.stderr
    return recording


def test_jobs_1_2_and_3_write_the_same_bytes_of_an_audit_log(audit_20000: Path) -> None:
    one = stdout_bytes(audit_20000, "--jobs", "1")
    assert len(one.splitlines()) == 18_830
    assert stdout_bytes(audit_20000, "--jobs", "2", part_bytes=17_000_000) == one
    assert stdout_bytes(audit_20000, "--jobs", "3", part_bytes=29_000_000) == one


def test_a_worker_that_dies_is_one_line_exit_1() -> None:
    path = RECORDINGS / "kubelet-life.jsonl.gz"
    done = explain(path, "--jobs", "2", part_bytes=1_500_000, **{partition.FAIL_ENV: "1"})
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    # the pool is broken: the first partition in order still waiting on it says so
    assert re.fullmatch(
        r"k8s-wiretap: explain: partition [12] of 4 failed: .*terminated.*", lines[0]
    )
    assert done.stdout == "" or one_job(path).decode().startswith(done.stdout)


def test_the_formats_made_of_the_whole_recording_refuse_jobs() -> None:
    path = RECORDINGS / "kubelet-life.jsonl.gz"
    done = cli("explain", str(path), "--format", "story", "--jobs", "2")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "k8s-wiretap: --jobs and --dask split --format json only; --format story is made "
        "of the whole recording, in one job"
    ]
    assert cli("explain", str(path), "--format", "lines", "--jobs", "1").returncode == 0


def test_dask_writes_one_jobs_bytes(dask_cluster: str) -> None:
    path = RECORDINGS / "wide-session.jsonl.gz"
    one = stdout_bytes(path, "--jobs", "1")
    assert stdout_bytes(path, "--dask", dask_cluster, part_bytes=1_500_000) == one
