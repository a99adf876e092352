"""Take the project to a Kubernetes release in one command: `make release V=1.38.0-beta.0`.

    .venv/bin/python scripts/release.py VERSION [--only STEP ...]

One constant holds the default release: `CURRENT` in k8s_wiretap/kube/release.py. Everything
that differs by release derives from it or is generated from the release's own sources by
the steps below, each printing one line (`release: <step>: ...`); any step that fails stops
the run with a non-zero exit.

Which release moves what:
- a **final** release (no suffix: 1.38.0) newer than CURRENT becomes the default: CURRENT is
  moved to it, and the release it replaces is pinned in `lab/apimodules.py` PINNED (its
  schema stays in the pack, its lab stays buildable with `--kube-version`). Its generated
  data is written into k8s_wiretap/kube/data, where the modules find the newest file of each
  kind (kube/datafiles.py), so the data moves with it;
- a **pre-release** (1.38.0-beta.0, -alpha.N, -rc.N) is added beside the default without
  moving it: it is pinned in PINNED under its minor, its protobuf schema joins the pack (the
  decoders need it to read its traffic exactly; a server of an unknown version still gets the
  default's), and its other generated data (discovery, OpenAPI v3, reset fields, gnostic's
  message table) goes to build/release-VERSION/ for review, not into kube/data (its sparse
  test fixtures go beside the others, tests/decode/fixtures): a beta's API
  can still change, and the default's tables must not be displaced by it. The final release's
  run then writes them into kube/data;
- the default release itself: everything is generated again in place. Generators are
  deterministic, so `make release V=<CURRENT>` leaves `git status` clean.

The steps, in order (STEPS):
1. pin        move CURRENT or pin the pre-release (source edits; none for CURRENT);
2. toolchain  the Go the release's go.mod asks for: the machine's, or GOTOOLCHAIN=go1.27.3
              (an approved toolchain, lab/golang.py), used by every Go step below;
3. schema     scripts/generate_schema.py --release MINOR: the protobuf schema, into the pack;
4. gnostic    scripts/generate_gnostic.py: gnostic's OpenAPI message table;
5. build      `k8s-wiretap lab build --kube-version VERSION` (reused from the cache if built);
6. discovery  scripts/generate_discovery.py: the API server's discovery, from a lab;
7. openapi    scripts/generate_openapi_v3.py: the v3 patch metadata, from a lab;
8. resets     scripts/generate_reset_fields.py: reset fields, from the registry strategies;
9. defaults   kube/data/defaults-MINOR.yaml is kept by hand (rules carry `since`): the step
              lists the SetDefaults_* functions the release adds or drops against CURRENT's,
              for review; it fails on none;
10. fixtures  the sparse protobuf fixtures (tests/decode/fixtures/gofuzz/newest, a Go program
              of random objects of every kind) made again against the release's modules,
              in build/release-VERSION/gofuzz, into tests/decode/fixtures/sparse-MINOR.jsonl.gz
              (tests decode every release's there; when the default moves, the program's
              go.mod and package list move with it);
11. record    the workshop's apply story (as scripts/record_fixtures.py records it) on a lab
              of the release, into build/release-VERSION/apply-story.jsonl (committed
              recordings are `make recordings`' business);
12. explain   `k8s-wiretap explain --format json` of it; fails if any exchange's `who` is
              unknown (nothing unattributed);
13. conformance  every HEAD/*.pb of the release's k8s.io/api testdata decodes, with its
              schema, exactly to its .json twin, and so does every sparse object of the
              fixtures step; fails on any that does not.

A final release is due when upstream tags it (1.38.0 on 2026-12-16); until then the default
stays where it is.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from k8s_wiretap.kube.release import CURRENT, Release  # noqa: E402

RELEASE_PY = ROOT / "k8s_wiretap" / "kube" / "release.py"
APIMODULES_PY = ROOT / "k8s_wiretap" / "lab" / "apimodules.py"
DATA = ROOT / "k8s_wiretap" / "kube" / "data"
BUILD = ROOT / "build"
STEPS = (
    "pin",
    "toolchain",
    "schema",
    "gnostic",
    "build",
    "discovery",
    "openapi",
    "resets",
    "defaults",
    "fixtures",
    "record",
    "explain",
    "conformance",
)
_CURRENT_LINE = re.compile(r'^CURRENT = Release\.parse\("([^"]+)"\)$', re.M)
_PINNED = re.compile(r"^PINNED: dict\[str, str\] = \{\n(.*?)^\}$", re.M | re.S)
_PIN = re.compile(r'^    "(\d+\.\d+)": "([^"]+)",$', re.M)


class ReleaseStepError(Exception):
    """A step failed; the message says which and why."""


# --- the plan (pure) ------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a run for `release` changes, decided from it and the current default alone."""

    release: Release
    current: Release

    @property
    def prerelease(self) -> bool:
        return bool(self.release.prerelease)

    @property
    def moves_default(self) -> bool:
        """A final release newer than the default becomes the default."""
        return not self.prerelease and self.release > self.current

    @property
    def is_default(self) -> bool:
        """After the run, `release` is the default (its data belongs in kube/data)."""
        return self.moves_default or self.release == self.current

    def output(self) -> Path:
        """Where the generated data other than the schema goes."""
        return DATA if self.is_default else BUILD / f"release-{self.release}"


def plan(version: str, current: Release = CURRENT) -> Plan:
    """The plan for `version` ("1.38.0-beta.0"); ValueError for anything but a patch
    release or a pre-release of one (a vendor's build is no release to move to)."""
    release = Release.parse(version)
    if release.patch is None or release.suffix != release.prerelease:
        raise ValueError(f"{version}: expected MAJOR.MINOR.PATCH[-alpha.N|-beta.N|-rc.N]")
    if release.minor_release <= Release(1, 20):
        raise ValueError(f"{version}: releases from Go modules only (after 1.20)")
    return Plan(release, current)


def pinned_after(plan: Plan, pins: dict[str, str]) -> dict[str, str]:
    """apimodules.PINNED after the run: the pre-release added under its minor; for a new
    default, the old default pinned and the new one's minor taken out (CURRENT says it)."""
    pins = dict(pins)
    minor = plan.release.minor_version
    if plan.moves_default:
        pins[plan.current.minor_version] = str(plan.current)
        pins.pop(minor, None)
    elif not plan.is_default:
        pins[minor] = str(plan.release)
    return dict(sorted(pins.items(), key=lambda pin: Release.parse(pin[0])))


def edit_pins(source: str, pins: dict[str, str]) -> str:
    """apimodules.py's text with its PINNED table set to `pins`."""
    body = "".join(f'    "{minor}": "{patch}",\n' for minor, patch in pins.items())
    edited, count = _PINNED.subn(lambda _: f"PINNED: dict[str, str] = {{\n{body}}}", source)
    if count != 1:
        raise ReleaseStepError("apimodules.py: no PINNED table found")
    return edited


def read_pins(source: str) -> dict[str, str]:
    """PINNED as apimodules.py writes it."""
    found = _PINNED.search(source)
    if found is None:
        raise ReleaseStepError("apimodules.py: no PINNED table found")
    return dict(_PIN.findall(found.group(1)))


def edit_current(source: str, release: Release) -> str:
    """release.py's text with CURRENT set to `release`."""
    edited, count = _CURRENT_LINE.subn(f'CURRENT = Release.parse("{release}")', source)
    if count != 1:
        raise ReleaseStepError("release.py: no `CURRENT = Release.parse(...)` line found")
    return edited


# --- running ------------------------------------------------------------------------------


@dataclass
class Context:
    """What the steps share: the plan, the Go environment, the recording's path."""

    plan: Plan
    env: dict[str, str]

    @property
    def minor(self) -> str:
        return self.plan.release.minor_version

    @property
    def work(self) -> Path:
        folder = BUILD / f"release-{self.plan.release}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def python(*argv: str, ctx: Context) -> str:
    """Run the project's Python on `argv` from the repository root; its output, or
    ReleaseStepError with its last lines."""
    command = [sys.executable, *argv]
    result = subprocess.run(
        command, cwd=ROOT, env=ctx.env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-12:])
        raise ReleaseStepError(f"{' '.join(argv)} failed (exit {result.returncode}):\n{tail}")
    return result.stdout + result.stderr


def step_pin(ctx: Context) -> str:
    plan = ctx.plan
    source = APIMODULES_PY.read_text()
    pins = read_pins(source)
    after = pinned_after(plan, pins)
    if after != pins:
        APIMODULES_PY.write_text(edit_pins(source, after))
    if plan.moves_default:
        RELEASE_PY.write_text(edit_current(RELEASE_PY.read_text(), plan.release))
        return f"the default moves from {plan.current} to {plan.release}"
    if plan.is_default:
        return f"{plan.release} is the default already: nothing to move"
    return f"{plan.release} pinned beside the default {plan.current}"


def step_toolchain(ctx: Context) -> str:
    from k8s_wiretap.lab.apimodules import KUBERNETES, module_dir
    from k8s_wiretap.lab.golang import go_requirement, module_toolchain

    source = module_dir(KUBERNETES, ctx.plan.release.git_version)
    required = go_requirement((source / "go.mod").read_text())
    go, toolchain = module_toolchain(required)
    ctx.env["GOTOOLCHAIN"] = toolchain
    wanted = ".".join(map(str, required))
    return f"go.mod asks for Go {wanted}: GOTOOLCHAIN={toolchain} ({go})"


def step_schema(ctx: Context) -> str:
    said = python("scripts/generate_schema.py", "--release", ctx.minor, ctx=ctx)
    return said.strip().splitlines()[-1].replace(str(ROOT) + "/", "")


def step_gnostic(ctx: Context) -> str:
    out = ctx.plan.output() / "gnostic-openapi.json"
    if not ctx.plan.is_default:
        out.parent.mkdir(parents=True, exist_ok=True)
    said = python(
        "scripts/generate_gnostic.py", "--kube-version", ctx.minor, "-o", str(out), ctx=ctx
    )
    return said.strip().splitlines()[-1].replace(str(ROOT) + "/", "")


def step_build(ctx: Context) -> str:
    said = python(
        "-m", "k8s_wiretap", "lab", "build", "--kube-version", str(ctx.plan.release), ctx=ctx
    )
    lines = [line for line in said.splitlines() if "binaries" in line]
    return (lines or said.strip().splitlines())[-1]


def step_discovery(ctx: Context) -> str:
    out = ctx.plan.output() / f"discovery-{ctx.minor}.json"
    version = str(ctx.plan.release)
    said = python(
        "scripts/generate_discovery.py", "--kube-version", version, "-o", str(out), ctx=ctx
    )
    return said.strip().splitlines()[-1].replace(str(ROOT) + "/", "")


def step_openapi(ctx: Context) -> str:
    out = ctx.plan.output() / f"openapi-v3-{ctx.minor}.json"
    version = str(ctx.plan.release)
    said = python("scripts/generate_openapi_v3.py", "--kube-version", version, str(out), ctx=ctx)
    return said.strip().splitlines()[-1].replace(str(ROOT) + "/", "")


def step_resets(ctx: Context) -> str:
    folder = ctx.plan.output()
    argv = ["--kube-version", ctx.minor, "--discovery", str(folder / f"discovery-{ctx.minor}.json")]
    out = folder / f"reset-fields-{ctx.minor}.json"
    said = python("scripts/generate_reset_fields.py", *argv, "-o", str(out), ctx=ctx)
    return said.strip().splitlines()[-1].replace(str(ROOT) + "/", "")


def defaulters(source: Path) -> set[str]:
    """The SetDefaults_* functions of a k8s.io/kubernetes module's pkg/apis."""
    found: set[str] = set()
    for file in (source / "pkg" / "apis").rglob("defaults.go"):
        group_version = file.parent.relative_to(source / "pkg" / "apis").as_posix()
        found.update(
            f"{group_version}.{name}"
            for name in re.findall(r"^func (SetDefaults_\w+)\(", file.read_text(), re.M)
        )
    return found


def step_defaults(ctx: Context) -> str:
    from k8s_wiretap.kube import datafiles
    from k8s_wiretap.lab.apimodules import KUBERNETES, module_dir

    here = defaulters(module_dir(KUBERNETES, ctx.plan.release.git_version))
    there = defaulters(module_dir(KUBERNETES, ctx.plan.current.git_version))
    added, dropped = sorted(here - there), sorted(there - here)
    data = datafiles.newest("defaults", ".yaml")
    if not added and not dropped:
        return f"{len(here)} SetDefaults_* functions, the same as {ctx.plan.current}'s ({data})"
    changes = ", ".join([*(f"+{name}" for name in added), *(f"-{name}" for name in dropped)])
    against = f"against {ctx.plan.current}: {changes} (review {data})"
    return f"{len(here)} SetDefaults_* functions; {against}"


GOFUZZ = ROOT / "tests" / "decode" / "fixtures" / "gofuzz" / "newest"
SPARSE = ROOT / "tests" / "decode" / "fixtures"
_API_IMPORT = re.compile(r'^\t(\w+) "k8s\.io/api/([^"]+)"\n', re.M)
_GROUPS = re.compile(
    r"^(var groups = \[\]func\(\*runtime\.Scheme\) error\{\n)(.*?)^\}", re.M | re.S
)
_STAGED = (
    "k8s.io/api",
    "k8s.io/apiextensions-apiserver",
    "k8s.io/apimachinery",
    "k8s.io/kube-aggregator",
)


def api_packages(api: Path) -> list[str]:
    """The group versions ("apps/v1", "core/v1") of a k8s.io/api module with a register.go."""
    return sorted(p.parent.relative_to(api).as_posix() for p in api.glob("*/*/register.go"))


def gofuzz_main(source: str, packages: list[str]) -> str:
    """gofuzz/newest/main.go with its k8s.io/api imports and scheme list set to `packages`."""
    aliases = {package: package.replace("/", "") for package in packages}
    old = {alias for alias, _ in _API_IMPORT.findall(source)}
    imports = "".join(f'\t{alias} "k8s.io/api/{package}"\n' for package, alias in aliases.items())
    first = _API_IMPORT.search(source)
    if first is None:
        raise ReleaseStepError("gofuzz main.go: no k8s.io/api imports found")
    source = source[: first.start()] + imports + _API_IMPORT.sub("", source[first.start() :])

    def groups(found: re.Match[str]) -> str:
        kept = [
            entry
            for entry in re.findall(r"(\w+)\.AddToScheme", found.group(2))
            if entry not in old and entry not in aliases.values()
        ]
        lines = [f"\t{alias}.AddToScheme,\n" for alias in [*aliases.values(), *kept]]
        return found.group(1) + "".join(lines) + "}"

    edited, count = _GROUPS.subn(groups, source)
    if count != 1:
        raise ReleaseStepError("gofuzz main.go: no `var groups` list found")
    return edited


def gofuzz_go_mod(source: str, release: Release) -> str:
    """gofuzz/newest/go.mod requiring the release's staging modules."""
    for module in _STAGED:
        source = re.sub(
            rf"^(\s*{re.escape(module)}) v\S+$",
            rf"\1 {release.staging_version}",
            source,
            flags=re.M,
        )
    return source


def go(argv: list[str], cwd: Path, ctx: Context) -> str:
    """Run the go command in `cwd` with the release's toolchain; ReleaseStepError if it fails."""
    from k8s_wiretap.lab.golang import module_go

    env = {**ctx.env, "GOWORK": "off", "GOFLAGS": "-mod=mod"}
    result = subprocess.run(
        [str(module_go()), *argv], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-8:])
        raise ReleaseStepError(f"go {' '.join(argv)} failed:\n{tail}")
    return result.stdout + result.stderr


def step_fixtures(ctx: Context) -> str:
    from k8s_wiretap.lab.apimodules import module

    work = ctx.work / "gofuzz"
    work.mkdir(exist_ok=True)
    release = ctx.plan.release
    main_go = (GOFUZZ / "main.go").read_text()
    same = release == ctx.plan.current  # the default again: its program as committed
    if not same:
        main_go = gofuzz_main(main_go, api_packages(module(release, "k8s.io/api")))
    (work / "main.go").write_text(main_go)
    (work / "go.mod").write_text(gofuzz_go_mod((GOFUZZ / "go.mod").read_text(), release))
    (work / "go.sum").write_text((GOFUZZ / "go.sum").read_text())
    if not same:
        go(["mod", "tidy"], work, ctx)
    out = SPARSE / f"sparse-{ctx.minor}.jsonl.gz"
    go(["run", ".", str(out)], work, ctx)
    if ctx.plan.moves_default:  # the program is the default release's from now on
        for name in ("main.go", "go.mod", "go.sum"):
            (GOFUZZ / name).write_text((work / name).read_text())
    with gzip.open(out, "rt") as lines:
        count = sum(1 for _ in lines)
    return f"{out.relative_to(ROOT)}: {count} sparse objects"


def story_path(ctx: Context) -> Path:
    return ctx.work / "apply-story.jsonl"


def step_record(ctx: Context) -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    from record_fixtures import record_into

    story = story_path(ctx)
    story.unlink(missing_ok=True)
    log = ctx.work / "record.log"  # the lab's and the story's own lines
    with (
        tempfile.TemporaryDirectory(prefix="release-record-") as scratch,
        log.open("w") as said,
        contextlib.redirect_stdout(said),
        contextlib.redirect_stderr(said),
    ):
        record_into("apply", str(ctx.plan.release), story, Path(scratch))
    lines = story.read_text().count("\n")
    return f"the apply story on {ctx.plan.release}: {story.relative_to(ROOT)} ({lines} records)"


def unattributed(explained: list[dict[str, object]]) -> list[dict[str, object]]:
    """The exchanges whose `who` names no component."""
    found = []
    for line in explained:
        who = line.get("who")
        component = who.get("component") if isinstance(who, dict) else None
        if component in (None, "", "unknown"):
            found.append(line)
    return found


def step_explain(ctx: Context) -> str:
    story = story_path(ctx)
    said = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "explain", "--format", "json", str(story)],
        cwd=ROOT,
        env=ctx.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if said.returncode != 0:
        raise ReleaseStepError(f"explain {story} failed: {said.stderr.strip()[-400:]}")
    explained = [json.loads(line) for line in said.stdout.splitlines() if line.strip()]
    unknown = unattributed(explained)
    if unknown:
        shown = "; ".join(f"{e.get('verb')} {e.get('path')}" for e in unknown[:5])
        raise ReleaseStepError(
            f"{len(unknown)} of {len(explained)} exchanges unattributed: {shown}"
        )
    components = {str(e["who"]["component"]).split("/")[0] for e in explained}
    served = served_versions(explained)
    if served != {ctx.plan.release.git_version}:
        raise ReleaseStepError(f"the recording's API server said {sorted(served)}, not V")
    return (
        f"{len(explained)} exchanges from {len(components)} components of a "
        f"{ctx.plan.release.git_version} API server, none unattributed"
    )


def served_versions(explained: list[dict[str, object]]) -> set[str]:
    """The gitVersions the recording's `/version` answers name."""
    found = set()
    for line in explained:
        body = line.get("response_body")
        if str(line.get("path", "")).split("?")[0] == "/version" and isinstance(body, dict):
            found.add(str(body.get("gitVersion")))
    return found


def conformance(release: Release) -> tuple[int, list[str]]:
    """HEAD/*.pb of the release's k8s.io/api testdata decoded with its schema: how many,
    and what differs from each .json twin (none when complete)."""
    from k8s_wiretap.decode.protobuf import DecodeError, decode_object
    from k8s_wiretap.lab.apimodules import api_testdata
    from tests.decode.same import as_served, difference

    head = api_testdata(release) / "HEAD"
    problems: list[str] = []
    files = sorted(head.glob("*.pb"))
    for pb in files:
        stem = pb.name.removesuffix(".pb")
        group, version, kind = stem.rsplit(".", 2)
        api_version = version if group == "core" else f"{group}/{version}"
        try:
            got = decode_object(
                pb.read_bytes(), api_version=api_version, kind=kind, release=release.minor_version
            )
        except DecodeError as error:
            problems.append(f"{pb.name}: {error}")
            continue
        want = as_served(json.loads((head / f"{stem}.json").read_text()), api_version, kind)
        found = difference(got, want)
        if found:
            problems.append(f"{pb.name}: {found}")
    return len(files), problems


def sparse_conformance(path: Path, minor: str) -> tuple[int, list[str]]:
    """The sparse objects of `path` (the fixtures step's) decoded with `minor`'s schema: how
    many, and what differs from the JSON the release's Go code wrote for each."""
    import base64

    from k8s_wiretap.decode.protobuf import DecodeError, decode_object
    from tests.decode.same import as_served, difference

    problems: list[str] = []
    with gzip.open(path, "rt") as lines:
        cases = [json.loads(line) for line in lines]
    for case in cases:
        api_version, kind = case["apiVersion"], case["kind"]
        where = f"{api_version} {kind} #{case['seed']}"
        try:
            got = decode_object(
                base64.b64decode(case["pb"]), api_version=api_version, kind=kind, release=minor
            )
        except DecodeError as error:
            problems.append(f"{where}: {error}")
            continue
        found = difference(got, as_served(json.loads(case["json"]), api_version, kind))
        if found:
            problems.append(f"{where}: {found}")
    return len(cases), problems


def step_conformance(ctx: Context) -> str:
    total, problems = conformance(ctx.plan.release)
    exact = total - len(problems)
    module = f"k8s.io/api@{ctx.plan.release.staging_version}"
    said = f"{exact} of {total} HEAD fixtures of {module} decode exactly"
    sparse = SPARSE / f"sparse-{ctx.minor}.jsonl.gz"
    if sparse.exists():
        count, wrong = sparse_conformance(sparse, ctx.minor)
        said += f"; {count - len(wrong)} of {count} sparse objects"
        problems += wrong
    if problems or not total:
        shown = "\n  ".join(problems[:10])
        raise ReleaseStepError(f"{said}:\n  {shown}")
    return said


RUNNERS: dict[str, Callable[[Context], str]] = {
    "pin": step_pin,
    "toolchain": step_toolchain,
    "schema": step_schema,
    "gnostic": step_gnostic,
    "build": step_build,
    "discovery": step_discovery,
    "openapi": step_openapi,
    "resets": step_resets,
    "defaults": step_defaults,
    "fixtures": step_fixtures,
    "record": step_record,
    "explain": step_explain,
    "conformance": step_conformance,
}


def steps(only: list[str] | None) -> list[str]:
    """The steps to run, in STEPS' order (all by default); `toolchain` always, as the Go
    steps need its choice."""
    if not only:
        return list(STEPS)
    unknown = sorted(set(only) - set(STEPS))
    if unknown:
        raise ValueError(f"unknown step {', '.join(unknown)} (steps: {', '.join(STEPS)})")
    return [name for name in STEPS if name in only or name == "toolchain"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="e.g. 1.38.0-beta.0, or 1.38.0 to make it the default")
    parser.add_argument("--only", action="append", choices=STEPS, help="run only these steps")
    args = parser.parse_args(argv)
    try:
        chosen = steps(args.only)
        ctx = Context(plan(args.version), {**os.environ, "PYTHONPATH": str(ROOT)})
    except ValueError as error:
        parser.error(str(error))
    started = time.monotonic()
    for name in chosen:
        begun = time.monotonic()
        try:
            said = RUNNERS[name](ctx)
        except Exception as error:
            print(f"release: {name}: FAILED: {error}", flush=True)
            return 1
        print(f"release: {name}: {said} [{time.monotonic() - begun:.0f} s]", flush=True)
    print(f"release: {ctx.plan.release} done in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
