"""`import audit --dask ADDRESS` and `explain --format json --dask ADDRESS` write what one
job writes, with the partitions run on a real Dask cluster (the session's `dask_cluster`:
a scheduler and two one-thread workers on this machine): explain's JSON byte for byte,
import's recording byte for byte but for what each import makes afresh, its header's time
and its redaction key (`bench.audit_import.same_recording`).

The inputs: the bundled wide session's audit log (2,029 events) and its recording, both
gunzipped, and a log of 20,290 events built from that one as the audit benchmark builds
its own (bench/audit_import.py: ten copies, each with fresh auditIDs, later times and
resourceVersions; 61 MB), big enough to be split at the commands' default partition size,
and its recording. Each run is checked to have sent work to the cluster: the scheduler's
count of task transitions moves."""

from __future__ import annotations

import gzip
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import audit_import
from k8s_wiretap.explain.partition import PART_BYTES_ENV
from k8s_wiretap.paths import RECORDINGS

WIDE_LOG = RECORDINGS / "wide-session.audit.log.gz"
WIDE_RECORDING = RECORDINGS / "wide-session.jsonl.gz"
COPIES = 10  # of the wide session's 2,029 events: 20,290

# How each input is split: the wide session's, too small for the commands' default
# partitions, into ranges of 1 MB of log (import audit's own `--partition-size`) and 2 MB
# of recording (explain's, from its environment: `explain.partition.PART_BYTES_ENV`); the
# 20,290 events' (61 MB of log, 82 MB of recording) at the commands' defaults.
IMPORT_OPTIONS = {"wide-session": ["--partition-size", "1m"], "20k": []}
EXPLAIN_ENV = {
    "bundled wide-session": {PART_BYTES_ENV: "2000000"},
    "wide-session": {PART_BYTES_ENV: "2000000"},
    "20k": {},
}


def _gunzipped(source: Path, target: Path) -> Path:
    with gzip.open(source, "rb") as packed, target.open("wb") as plain:
        shutil.copyfileobj(packed, plain)
    return target


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("logs")
    built = folder / "audit-20290.log"
    audit_import.write(audit_import.load(WIDE_LOG), COPIES, built, zipped=False)
    return {"wide-session": _gunzipped(WIDE_LOG, folder / "wide-session.audit.log"), "20k": built}


def _k8s_wiretap(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, (args, result.stderr[-3000:])
    return result


def _transitions(address: str) -> int:
    """How many task transitions the scheduler at `address` has made so far."""
    distributed: Any = importlib.import_module("distributed")  # untyped
    client = distributed.Client(address, timeout=30, set_as_default=False)
    try:
        return int(client.run_on_scheduler(_counter))
    finally:
        client.close()


def _counter(dask_scheduler: Any) -> int:
    return int(dask_scheduler.transition_counter)


def _through_dask(
    address: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`k8s-wiretap ARGS --dask ADDRESS`, checked to have run tasks on the cluster."""
    before = _transitions(address)
    done = _k8s_wiretap(*args, "--dask", address, env=env)
    assert _transitions(address) > before, "nothing ran on the Dask cluster"
    return done


def _count(stderr: bytes) -> str:
    """The import's last line but the file's name: its counts."""
    return stderr.decode().strip().splitlines()[-1].split(": ", 1)[1]


@pytest.fixture(scope="module")
def one_job(logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each log imported with --jobs 1: its recording and the import's counts."""
    folder = tmp_path_factory.mktemp("one-job")
    done: dict[str, Any] = {}
    for name, log in logs.items():
        out = folder / f"{name}.jsonl"
        said = _k8s_wiretap("import", "audit", str(log), "-o", str(out), "--jobs", "1")
        done[name] = (out, _count(said.stderr))
    return done


@pytest.mark.parametrize("name", ["wide-session", "20k"])
def test_import_through_dask_writes_one_jobs_recording(
    name: str,
    logs: dict[str, Path],
    one_job: dict[str, Any],
    dask_cluster: str,
    tmp_path: Path,
) -> None:
    expected, counts = one_job[name]
    out = tmp_path / f"{name}.jsonl"
    args = ["import", "audit", str(logs[name]), "-o", str(out), *IMPORT_OPTIONS[name]]
    said = _through_dask(dask_cluster, *args)
    assert _count(said.stderr) == counts
    assert audit_import.same_recording(out, expected)


@pytest.mark.parametrize("name", ["bundled wide-session", "wide-session", "20k"])
def test_explain_through_dask_writes_one_jobs_json(
    name: str, one_job: dict[str, Any], dask_cluster: str, tmp_path: Path
) -> None:
    if name == "bundled wide-session":
        recording = _gunzipped(WIDE_RECORDING, tmp_path / "wide-session.jsonl")
    else:
        recording = one_job[name][0]
    args = ["explain", str(recording), "--format", "json"]
    expected = _k8s_wiretap(*args, "--jobs", "1").stdout
    assert expected.count(b"\n") > 1_000  # an exchange a line, and there are thousands
    assert _through_dask(dask_cluster, *args, env=EXPLAIN_ENV[name]).stdout == expected
