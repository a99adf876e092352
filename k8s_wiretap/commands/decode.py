"""`k8s-wiretap decode` (one body or stream) and `k8s-wiretap explain` (a whole recording)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.decode.body import decode_body
from k8s_wiretap.decode.watch import decode_stream
from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.kube.media import is_watch_stream
from k8s_wiretap.kube.release import Release, ReleaseError
from k8s_wiretap.views.json import write_json
from k8s_wiretap.views.lines import exchange_line
from k8s_wiretap.views.story import write_story
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.controls import escape_controls, escape_json_controls, escape_lines

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
        description="The story of a recording: each kubectl command and what it set off, "
        "component by component (the default); the same as a Markdown handout; one line "
        "per exchange; or one JSON object per exchange with the decoded request, bodies, "
        "patches (replayed on the object as it was before) and watch events.",
    )
    explain.add_argument("recording", type=Path)
    explain.add_argument(
        "--format",
        choices=("story", "markdown", "lines", "json"),
        default="story",
        help="story: what each kubectl command set off, in words (default); markdown: the "
        "same for a handout; lines: one line per exchange; json: one object per exchange",
    )
    explain.add_argument(
        "--all", action="store_true", help="story, markdown: show noise too (leases, ...)"
    )
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


@contextlib.contextmanager
def _batch_collector() -> Iterator[None]:
    """The cyclic garbage collector for a batch: a stream of records makes millions of
    small dicts and lists, nearly all freed by reference counting; with the default
    thresholds (a pass every 700 allocations) the collector's passes were a tenth of
    `explain`'s time and found next to nothing. Passes every 100,000, as before after."""
    before = gc.get_threshold()
    gc.freeze()  # what start-up made (modules, tables) is never looked at again
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _explain(args: argparse.Namespace) -> int:
    if args.format == "json":  # a stream: any size of recording in bounded memory
        warnings: list[str] = []
        with _batch_collector():
            sys.stdout.flush()  # what was printed before goes first
            records = iter_records(args.recording, warnings)
            assembler = write_json(records, sys.stdout.buffer)
        for warning in warnings + assembler.warnings:
            print(f"k8s-wiretap: warning: {escape_controls(warning)}", file=sys.stderr)
        return 0
    recording = load(args.recording)
    for warning in recording.warnings:
        print(f"k8s-wiretap: warning: {escape_controls(warning)}", file=sys.stderr)
    analysis = Analysis.of(recording)
    if args.format in ("story", "markdown"):
        story = Explainer(analysis)
        markdown = args.format == "markdown"
        pictures = _embedded(args.recording) if markdown else []
        write_story(story, sys.stdout, noise=args.all, markdown=markdown, pictures=pictures)
        return 0
    for exchange in analysis.exchanges:
        sys.stdout.write(exchange_line(exchange) + "\n")
    return 0


def _embedded(recording: Path) -> list[tuple[str, str]]:
    """The handout's pictures (who talks to whom, a kubectl command's chain) as `data:`
    URIs: the Markdown on stdout stands alone."""
    from k8s_wiretap.views.pictures import data_uri, handout

    drawn = handout(lambda: iter_records(recording, []))
    return [(svg.title, data_uri(svg)) for _, svg in drawn]
