"""`export --json OUT --jobs N` / `--dask ADDRESS`: the JSON lines written in partitions
run at once (`writers.json_lines_in_parts`, as `explain --format json --jobs`), byte for
byte one job's, by the one rule of OUT (0600, whole or not at all); the other formats
refuse to be split. The partitions are made small (`explain.partition.PART_BYTES_ENV`)
so that the bundled recordings are cut many times.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from k8s_wiretap.explain import partition
from k8s_wiretap.paths import RECORDINGS

BUNDLED = sorted(RECORDINGS.glob("*.jsonl.gz"))


def _export(
    *args: str, part_bytes: int | None = None, **env: str
) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, **env}
    if part_bytes is not None:
        environment[partition.PART_BYTES_ENV] = str(part_bytes)
    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "export", *args],
        capture_output=True,
        env=environment,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name.split(".")[0] for p in BUNDLED])
def test_jobs_2_and_3_write_one_jobs_bytes(path: Path, tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    done = _export(str(path), "--json", str(one))
    assert done.returncode == 0, done.stderr
    for jobs, part_bytes in (("2", 1_500_000), ("3", 700_000)):
        out = tmp_path / f"jobs{jobs}.json"
        got = _export(str(path), "--json", str(out), "--jobs", jobs, part_bytes=part_bytes)
        assert got.returncode == 0, got.stderr
        assert got.stderr.replace(bytes(out), bytes(one)) == done.stderr
        assert out.read_bytes() == one.read_bytes()
        assert out.stat().st_mode & 0o777 == 0o600
    # to stdout, and beside a format made in one job
    har, har_one = tmp_path / "jobs.har", tmp_path / "one.har"
    assert _export(str(path), "--har", str(har_one)).returncode == 0
    got = _export(str(path), "--json", "-", "--har", str(har), "--jobs", "2", part_bytes=900_000)
    assert got.returncode == 0, got.stderr
    assert got.stdout == one.read_bytes()
    assert har.read_bytes() == har_one.read_bytes()


def test_a_worker_that_dies_is_one_line_exit_1_and_no_out(tmp_path: Path) -> None:
    """A partition's process that dies: one line naming the output, exit 1, no OUT (the
    partitions do run in the workers: the second one is the one made to die)."""
    out = tmp_path / "out.json"
    path = RECORDINGS / "kubelet-life.jsonl.gz"
    done = _export(
        str(path), "--json", str(out), "--jobs", "2", part_bytes=1_500_000,
        **{partition.FAIL_ENV: "1"},
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, done.stderr
    assert re.fullmatch(
        r"k8s-wiretap: export: --json: partition [12] of 4 failed: .*terminated.*", lines[0]
    ), lines[0]
    assert list(tmp_path.iterdir()) == []


def test_only_json_is_split(tmp_path: Path) -> None:
    path = RECORDINGS / "kubelet-life.jsonl.gz"
    out = tmp_path / "out.har"
    done = _export(str(path), "--har", str(out), "--jobs", "2")
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "k8s-wiretap: export: --jobs and --dask split --json only; the other formats are "
        "made of the whole recording, in one job"
    ]
    assert not out.exists()
    assert _export(str(path), "--har", str(out), "--jobs", "1").returncode == 0


def test_dask_writes_one_jobs_bytes(tmp_path: Path, dask_cluster: str) -> None:
    path = RECORDINGS / "wide-session.jsonl.gz"
    one, out = tmp_path / "one.json", tmp_path / "dask.json"
    assert _export(str(path), "--json", str(one)).returncode == 0
    got = _export(str(path), "--json", str(out), "--dask", dask_cluster, part_bytes=1_500_000)
    assert got.returncode == 0, got.stderr
    assert out.read_bytes() == one.read_bytes()
