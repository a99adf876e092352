"""Every release's own compatibility fixtures decode to exactly the JSON that release writes.

For each Kubernetes release the schema covers, the `testdata/` of its k8s.io/api module
(fetched with `go mod download` into Go's module cache, k8s_wiretap.lab.apimodules; a fetch
that fails fails the test): every `HEAD/<group>.<version>.<Kind>.pb` decodes, with that
release's schema, to its `.json` twin, values and key order; so does every `.pb` of the
`v1.N.0/` sets the module ships (data an older release wrote, as this release reads it: the
`.after_roundtrip.json` twin where the release renders it differently, else the `.json`),
and, with release N's own schema, to the `.json` N wrote.

Three things are not plain comparisons, each checked for what it is:
- a fixture of a kind the release no longer registers (a leftover file, or an old release's
  data of a kind since removed) must decode schemaless, and be a kind an older release did
  register;
- data of an older release may hold fields this release removed: Go drops them, the decoder
  keeps them under "$unknownFields", so those are set aside (but not in a release's own data:
  decoding a `v1.N.0` set with N's schema must leave nothing unknown);
- 1.23's HEAD autoscaling.v2 HorizontalPodAutoscaler .pb is the v2beta2 fixture, byte for byte
  (an upstream mistake, fixed in 1.24): it is checked to be that, and compared as that.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.decode.protobuf import DecodeError, decode_object
from k8s_wiretap.kube import schema
from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab.apimodules import GoModuleError, api_testdata, release
from tests.decode.same import as_served, difference

UNKNOWN = "$unknownFields"
# Kinds a release's testdata holds but its scheme lacks must be kinds an older release
# registered, or one of these: settings.k8s.io/v1alpha1 was removed before 1.20 (its files
# stayed in 1.20's testdata); batch/v1 JobTemplate files are in 1.21-1.23's HEAD (and later
# sets) although no release registered that kind (Go's test reads registered kinds only).
NOT_REGISTERED_SINCE_1_20 = {
    ("settings.k8s.io/v1alpha1", "PodPreset"),
    ("batch/v1", "JobTemplate"),
}
# (release, set, stem) → the fixture its .pb really is.
MISNAMED = {
    ("1.23", "HEAD", "autoscaling.v2.HorizontalPodAutoscaler"): (
        "autoscaling.v2beta2.HorizontalPodAutoscaler"
    ),
}


def type_of(stem: str) -> tuple[str, str]:
    """(apiVersion, kind) of a fixture named <group>.<version>.<Kind> ("core" for "")."""
    group, version, kind = stem.rsplit(".", 2)
    return (version if group == "core" else f"{group}/{version}"), kind


def fetched_testdata(minor: str) -> Path:
    try:
        return api_testdata(release(minor))
    except GoModuleError as error:
        pytest.fail(f"k8s.io/api of Kubernetes {minor} could not be fetched: {error}")


def without_unknown(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_unknown(v) for k, v in value.items() if k != UNKNOWN}
    if isinstance(value, list):
        return [without_unknown(v) for v in value]
    return value


def has_unknown(value: Any) -> bool:
    if isinstance(value, dict):
        return UNKNOWN in value or any(has_unknown(v) for v in value.values())
    return isinstance(value, list) and any(has_unknown(v) for v in value)


@dataclass
class Results:
    checked: int = 0
    leftovers: set[tuple[str, str]] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


def registered_before(minor: str, api_version: str, kind: str) -> bool:
    older = schema.RELEASES[: schema.RELEASES.index(minor)]
    known = any(kind in schema.kinds(m).get(api_version, {}) for m in older)
    return known or (api_version, kind) in NOT_REGISTERED_SINCE_1_20


def check(results: Results, pb: Path, want: Path, minor: str, stem: str, old: bool) -> None:
    """Decode `pb` with `minor`'s schema and compare with `want`; record what differs."""
    where = f"{minor}: {pb.parent.name}/{pb.name}"
    api_version, kind = type_of(stem)
    results.checked += 1
    try:
        got = decode_object(pb.read_bytes(), api_version=api_version, kind=kind, release=minor)
    except DecodeError as error:
        results.problems.append(f"{where}: {error}")
        return
    if schema.lookup_kind(api_version, kind, minor) is None:
        results.leftovers.add((pb.parent.name, stem))
        if not got.get("$schemaless"):
            results.problems.append(f"{where}: an unknown kind decoded with a schema")
        if not registered_before(minor, api_version, kind):
            results.problems.append(f"{where}: {kind} was never registered in {api_version}")
        return
    if has_unknown(got):
        if not old:
            results.problems.append(f"{where}: unknown fields in the release's own data")
        got = without_unknown(got)
    found = difference(got, as_served(json.loads(want.read_text()), api_version, kind))
    if found:
        results.problems.append(f"{where}: {found}")


def check_set(results: Results, folder: Path, minor: str) -> None:
    """Every .pb of one testdata folder (HEAD or v1.N.0) as `minor` reads it."""
    own = folder.name == "HEAD"
    writer = minor if own else schema.release_for(folder.name) if _in_schema(folder.name) else None
    for pb in sorted(folder.glob("*.pb")):
        stem = pb.name.removesuffix(".pb")
        if stem.endswith(".after_roundtrip"):
            continue
        real = MISNAMED.get((minor, folder.name, stem))
        if real:
            assert pb.read_bytes() == (folder / f"{real}.pb").read_bytes(), f"{pb}: not {real}"
            stem = real
        after = folder / f"{stem}.after_roundtrip.json"
        check(
            results, pb, after if after.exists() else folder / f"{stem}.json", minor, stem, not own
        )
        if writer and not own:  # as the release that wrote it
            check(results, pb, folder / f"{stem}.json", writer, stem, False)


def _in_schema(name: str) -> bool:
    """A `v1.N.0` set of a release the schema covers."""
    return schema.release_for(name) == Release.parse(name).minor_version


@pytest.mark.lab  # each release's Go modules
@pytest.mark.parametrize("minor", schema.RELEASES)
def test_the_release_decodes_its_testdata_as_it_writes_it(minor: str) -> None:
    root = fetched_testdata(minor)
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    assert folders[0].name == "HEAD" and len(folders) >= 2, folders
    results = Results()
    for folder in folders:
        check_set(results, folder, minor)
    assert results.problems == []
    assert results.checked > 200
    assert len(results.leftovers) < results.checked / 10
