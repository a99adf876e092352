"""`k8s-wiretap decode` (one body or stream) and `k8s-wiretap explain` (a whole recording)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from k8s_wiretap.commands import formats, jobs, writers
from k8s_wiretap.commands.bundled import recording_path
from k8s_wiretap.decode.body import decode_body
from k8s_wiretap.decode.watch import decode_stream
from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.kube.media import is_watch_stream
from k8s_wiretap.kube.release import Release, ReleaseError
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.controls import escape_json_controls, escape_lines

__all__ = ["register"]


def register(subparsers: Any) -> None:
    decode = subparsers.add_parser(
        "decode",
        help="decode one body (JSON, YAML, protobuf, an etcd value) or a watch stream",
        description="Print FILE (or standard input) decoded as JSON (default) or YAML. A "
        "Kubernetes protobuf body or etcd value (k8s\\0 envelope) renders as the API server "
        "would render it in JSON. A watch stream (a content type with ;stream=watch, or a "
        "JSON event stream) prints one JSON line per event, in the API's JSON watch form.",
    )
    decode.add_argument("file", nargs="?", default="-", help="a file, or - for standard input")
    decode.add_argument(
        "--content-type",
        default="",
        metavar="T",
        help="the body's Content-Type (guessed from the bytes otherwise)",
    )
    decode.add_argument("-o", "--output", choices=("json", "yaml"), default="json")
    decode.add_argument(
        "--kube-version",
        default=None,
        type=_release,
        metavar="V",
        help="the Kubernetes release the body came from (1.20, v1.29.3): its protobuf "
        "schema is used (default: the newest)",
    )
    decode.set_defaults(handler=_decode)

    explain = subparsers.add_parser(
        "explain",
        help="the story of a recording, or every exchange decoded and explained",
        description="A recording, explained, on stdout in one of the output formats "
        "(`export --FORMAT OUT` writes any of them to a file): by default the story, "
        "each kubectl command and what it set off, component by component. --jobs and "
        "--dask split --format json into partitions run at once, its bytes the same; the "
        "other formats are made of the whole recording, in one job.",
    )
    explain.add_argument("recording", type=recording_path)
    choices = formats.to_stdout()
    explain.add_argument(
        "--format",
        choices=[fmt.name for fmt in choices],
        default=choices[0].name,
        help="; ".join(f"{fmt.name}: {fmt.help}" for fmt in choices)
        + f" (default: {choices[0].name})",
    )
    explain.add_argument(
        "--all", action="store_true", help="story, markdown: show noise too (leases, ...)"
    )
    # One job unless asked: on two cores a partition's skim of what comes before it costs
    # more than the second core gives (docs/benchmarks.md, "explain in partitions").
    jobs.add_options(explain, default=1)
    explain.set_defaults(handler=_explain)


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {name}: {error.strerror}") from error


def _release(text: str) -> Release:
    """--kube-version as a Release (argparse says what is wrong with junk)."""
    try:
        return Release.parse(text)
    except ReleaseError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _print(value: Any, output: str) -> None:
    if output == "yaml":  # YAML escapes C0 and C1 itself; a bidi override shown too
        sys.stdout.write(escape_lines(yamltext.dump(value)))
    else:
        sys.stdout.write(escape_json_controls(json.dumps(value, indent=2, ensure_ascii=False)))
        sys.stdout.write("\n")


def _looks_like_json_events(data: bytes) -> bool:
    first = data.split(b"\n", 1)[0]
    try:
        event = json.loads(first)
    except ValueError:
        return False
    return isinstance(event, dict) and set(event) == {"type", "object"} and b"\n" in data.strip()


def _decode(args: argparse.Namespace) -> int:
    data = _read(args.file)
    if is_watch_stream(args.content_type) or _looks_like_json_events(data):
        content_type = args.content_type or "application/json"
        for event in decode_stream(data, content_type, args.kube_version):
            line = (
                {"type": event.type, "object": event.object}
                if not event.error
                else {"error": event.error}
            )
            sys.stdout.write(escape_json_controls(json.dumps(line, ensure_ascii=False)) + "\n")
        return 0
    decoded = decode_body(data, args.content_type, release=args.kube_version)
    if not decoded.ok:
        raise WiretapError(str(decoded.error))
    _print(decoded.value, args.output)
    return 0


PARALLEL = ("json",)  # the formats `--jobs`/`--dask` split (the others need the whole)


def _explain(args: argparse.Namespace) -> int:
    job = formats.Job(args.recording, label="explain", noise=args.all)
    many = jobs.many(args)
    if args.format not in PARALLEL:
        if many:
            raise UsageError(
                f"--jobs and --dask split --format {' and '.join(PARALLEL)} only; "
                f"--format {args.format} is made of the whole recording, in one job"
            )
    elif many:  # in partitions on the pool of `--jobs`/`--dask` (`writers`)
        with jobs.pool(args) as pool:  # --dask reaches its scheduler whatever the size
            sys.stdout.flush()  # what was printed before goes first
            writers.json_lines_in_parts(job, pool, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        return 0
    formats.emit(formats.named(args.format), job)
    return 0
