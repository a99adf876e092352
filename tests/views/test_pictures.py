"""`export --svg/--png --picture chain|map|sequence` on the committed recordings, checked
against `explain --format json` (computed here on its own, from the JSON alone): the
chain's lanes, arrows and delays, the map's nodes and counts, the sequence's messages.
Also: bad input is one line and exit 2, no OUT is replaced without `--overwrite`, the PNG
Chromium renders is a real picture, and docs/pictures/*.svg are what the command makes."""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.views.json import write_json
from k8s_wiretap.views.pictures import Range, draw
from k8s_wiretap.views.pictures.svg import Svg, escape
from tests.conftest import load_script
from tests.recorded import RECORDINGS, STORY, fact

WIDE = RECORDINGS / "wide-session.jsonl.gz"
HISTORY = RECORDINGS / "history-session.jsonl.gz"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "pictures"
NS = {"s": "http://www.w3.org/2000/svg"}
API_SERVER = "kube-apiserver"
READS, WRITES = {"get", "list"}, {"create", "update", "patch", "delete", "deletecollection"}

# docs/pictures/NAME.svg, each made by `make snapshots` (scripts/make_derived.py)
DERIVED = load_script("make_derived")


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *argv], capture_output=True, text=True, check=False
    )


@cache
def _explained(recording: Path) -> tuple[dict[str, Any], ...]:
    """`explain --format json`'s lines (its own code: views/json.write_json)."""
    out = io.BytesIO()
    write_json(iter_records(recording, []), out)
    return tuple(json.loads(line) for line in out.getvalue().splitlines())


def _svg(kind: str, recording: Path, **options: Any) -> ET.Element:
    svg = draw(kind, lambda: iter_records(recording, []), **options)
    return ET.fromstring(svg.render())


def _groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{{{NS['s']}}}g") if cls in g.get("class", "").split()]


def _text(group: ET.Element, cls: str) -> ET.Element:
    found = [t for t in group.iter(f"{{{NS['s']}}}text") if t.get("class") == cls]
    assert len(found) == 1
    return found[0]


# -- chain ------------------------------------------------------------------------------------
def _expected_chain(rows: tuple[dict[str, Any], ...], exchange: str | None) -> list[dict[str, Any]]:
    """The chain's rows from the JSON: `exchange`'s ancestors, itself and descendants, or
    the deepest chain under a kubectl root."""
    by_id = {r["id"]: r for r in rows}
    if exchange is None:
        rooted = [r for r in rows if by_id[r["chain"][0]]["component"] == "kubectl"]
        target = max(rooted, key=lambda r: len(r["chain"]))["chain"]
    else:
        target = by_id[exchange]["chain"]
    drawn = [r for r in rows if r["id"] in target or r["chain"][: len(target)] == target]
    return sorted(drawn, key=lambda r: r["time"])


def _check_chain(root: ET.Element, drawn: list[dict[str, Any]]) -> None:
    components: list[str] = []
    for row in drawn:
        if row["component"] not in components:
            components.append(row["component"])
    lanes = [g.get("data-component") for g in _groups(root, "lane")]
    assert lanes == [components[0], API_SERVER, *components[1:]]
    ids = {r["id"] for r in drawn}
    boxes = [g.get("data-exchange", "") for g in _groups(root, "exchange")]
    assert sorted(boxes) == sorted(ids)
    hops = {r["id"]: r["caused_by"] for r in drawn if (r["caused_by"] or {}).get("exchange") in ids}
    arrows = _groups(root, "hop")
    assert len(arrows) == len(hops) == len(drawn) - 1  # a tree: every exchange but the root
    for arrow in arrows:
        cause = hops[arrow.get("data-exchange", "")]
        assert arrow.get("data-cause") == cause["exchange"]
        delivered, reacted = _text(arrow, "delivered"), _text(arrow, "reacted")
        assert float(delivered.get("data-ms", "")) == cause["delivered_ms"]
        assert float(reacted.get("data-ms", "")) == cause["reacted_ms"]
        assert delivered.text == f"+{cause['delivered_ms']:g} ms"
        assert reacted.text == f"+{cause['reacted_ms']:g} ms"


def test_the_default_chain_is_the_deepest_a_kubectl_command_set_off() -> None:
    rows = _explained(STORY)
    drawn = _expected_chain(rows, None)
    assert len(drawn) == fact(STORY, "deepest kubectl chain")
    _check_chain(_svg("chain", STORY), drawn)
    lanes = [g.get("data-component") for g in _groups(_svg("chain", STORY), "lane")]
    assert lanes == [
        "kubectl",
        API_SERVER,
        "controller-manager/deployment-controller",
        "controller-manager/replicaset-controller",
        "scheduler",
        "kubelet",
    ]


def test_the_chain_of_an_exchange_has_its_causes_and_what_it_set_off() -> None:
    rows = _explained(HISTORY)
    deepest = _expected_chain(rows, None)[-1]["chain"]
    middle = deepest[3]  # its causes up to kubectl, and a subtree below it
    drawn = _expected_chain(rows, middle)
    assert len(drawn) > len(deepest[:4])
    _check_chain(_svg("chain", HISTORY, exchange=middle), drawn)


# DejaVu Sans's advance widths (ems) of what a delay is written with, and its ascent and
# descent: the delays' boxes measured with the font's own metrics, not the picture's estimate
ADVANCE = {**dict.fromkeys("0123456789", 0.636), "+": 0.838, ".": 0.318, " ": 0.318}
ADVANCE |= {"m": 0.974, "s": 0.521, "?": 0.531}
ASCENT, DESCENT = 0.76, 0.24
Rect = tuple[float, float, float, float]  # left, top, right, bottom


def _boxes(root: ET.Element) -> dict[str, Rect]:
    found = {}
    for group in _groups(root, "exchange"):
        rect = group.find("s:rect", NS)
        assert rect is not None
        x, y = float(rect.get("x", "")), float(rect.get("y", ""))
        w, h = float(rect.get("width", "")), float(rect.get("height", ""))
        found[group.get("data-exchange", "")] = (x, y, x + w, y + h)
    return found


def _delays(root: ET.Element) -> list[tuple[str, Rect]]:
    """Each delay's text and the box its glyphs fill."""
    found = []
    for text in root.iter(f"{{{NS['s']}}}text"):
        if text.get("class") not in ("delivered", "reacted"):
            continue
        said, size = text.text or "", float(text.get("font-size", ""))
        wide = sum(ADVANCE.get(c, 1.0) for c in said) * size
        x, y = float(text.get("x", "")), float(text.get("y", ""))
        left = {"start": x, "middle": x - wide / 2, "end": x - wide}[text.get("text-anchor", "")]
        found.append((said, (left, y - ASCENT * size, left + wide, y + DESCENT * size)))
    return found


def _point(text: str) -> tuple[float, float]:
    x, y = text.split(",")
    return float(x), float(y)


def _crosses(a: tuple[float, float], b: tuple[float, float], rect: Rect) -> bool:
    """Whether the segment a-b passes through the inside of `rect` (its edges are not in
    it: an arrow begins and ends on its boxes' edges). Liang-Barsky clipping."""
    left, top, right, bottom = rect[0] + 0.5, rect[1] + 0.5, rect[2] - 0.5, rect[3] - 0.5
    dx, dy = b[0] - a[0], b[1] - a[1]
    low, high = 0.0, 1.0
    for p, q in ((-dx, a[0] - left), (dx, right - a[0]), (-dy, a[1] - top), (dy, bottom - a[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low > high:
            return False
    return True


def _clear(root: ET.Element) -> None:
    """No arrow passes through a box or a delay."""
    boxes, delays = _boxes(root), _delays(root)
    arrows = 0
    for hop in _groups(root, "hop"):
        (line,) = [p for p in hop.iter(f"{{{NS['s']}}}polyline") if p.get("class") == "arrow"]
        points = [_point(p) for p in line.get("points", "").split()]
        for a, b in itertools.pairwise(points):
            arrows += 1
            for exchange, rect in boxes.items():
                assert not _crosses(a, b, rect), (hop.get("data-exchange"), "box", exchange)
            for said, rect in delays:
                assert not _crosses(a, b, rect), (hop.get("data-exchange"), "delay", said)
    assert arrows and delays


def test_no_arrow_crosses_a_box_or_a_delay() -> None:
    """The default chain (a line of hops), and a chain with branches: the history
    session's, from the middle of its deepest, and the wide session's `set image`."""
    _clear(_svg("chain", STORY))
    rows = _explained(HISTORY)
    _clear(_svg("chain", HISTORY, exchange=_expected_chain(rows, None)[-1]["chain"][3]))
    wide = _explained(WIDE)
    set_image = next(r for r in wide if r["summary"].startswith("kubectl set image: "))
    _clear(_svg("chain", WIDE, exchange=set_image["id"]))


def test_the_api_servers_lane_comes_first_when_the_first_component_reacts_too() -> None:
    """The smallest chain of the wide session, of more than one component, in which the
    component that started it reacts again (a kubelet's report of a deleted pod, then its
    next): every arrow ends under the API server's lane, clear."""
    rows = _explained(WIDE)
    trees: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        trees.setdefault(r["chain"][0], []).append(r)
    reacting = [
        tree
        for root, tree in trees.items()
        if tree[0]["id"] == root
        and len({r["component"] for r in tree}) > 1
        and tree[0]["component"] in {r["component"] for r in tree[1:]}
    ]
    assert reacting
    tree = min(reacting, key=len)
    root = _svg("chain", WIDE, exchange=tree[0]["id"])
    components: list[str] = []
    for r in sorted(tree, key=lambda r: r["time"]):
        if r["component"] not in components:
            components.append(r["component"])
    lanes = [g.get("data-component") for g in _groups(root, "lane")]
    assert lanes == [API_SERVER, *components]
    _clear(root)


ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def test_the_title_says_which_run_of_the_command_the_chain_follows() -> None:
    """The apply story applies its Deployment three times: the title says which apply's
    patch the chain follows, counted from `explain --format json`."""
    rows = _explained(STORY)
    root = next(r for r in rows if r["id"] == _expected_chain(rows, None)[0]["chain"][0])
    command = root["who"]["command"]

    def name(r: dict[str, Any]) -> str:
        return str(r["name"] or ((r["response_body"] or {}).get("metadata") or {}).get("name"))

    runs = [
        r["id"]
        for r in rows
        if r["who"]["command"] == command
        and r["verb"] in WRITES
        and (r["resource"], r["namespace"], name(r))
        == (root["resource"], root["namespace"], name(root))
    ]
    assert len(runs) > 1
    svg = _svg("chain", STORY)
    title = svg.find("s:title", NS)
    shown = [t.text for t in svg.iter(f"{{{NS['s']}}}text") if t.get("font-size") == "20"]
    assert title is not None and shown == [title.text]
    nth = ORDINALS[runs.index(root["id"]) + 1]
    said = f"What the {nth} {command} of deployment {name(root)} set off, from its patch"
    assert title.text == said


# -- map --------------------------------------------------------------------------------------
def test_the_map_has_a_node_per_component_with_its_counts() -> None:
    rows = _explained(WIDE)
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        said = counts.setdefault(row["component"], Counter())
        verb = row["verb"]
        said["reads"] += verb in READS
        said["watches"] += verb == "watch"
        said["writes"] += verb in WRITES
        said["total"] += 1
    root = _svg("map", WIDE)
    nodes = {g.get("data-component"): g for g in _groups(root, "node")}
    assert len(nodes) == len(counts) == fact(WIDE, "components")
    assert set(nodes) == set(counts)
    for component, node in nodes.items():
        for key in ("reads", "watches", "writes", "total"):
            assert int(node.get(f"data-{key}", "")) == counts[str(component)][key], (component, key)
        shown = " ".join(t.text or "" for t in node.iter(f"{{{NS['s']}}}text"))
        total = counts[str(component)]["total"]
        assert f"{total} request{'' if total == 1 else 's'} · " in shown
    edges = [g.get("data-component", "") for g in _groups(root, "edge")]
    assert sorted(edges) == sorted(counts)


# -- sequence ---------------------------------------------------------------------------------
def _messages(root: ET.Element, kind: str) -> list[str]:
    return [g.get("data-exchange", "") for g in _groups(root, kind)]


def _check_sequence(root: ET.Element, drawn: list[dict[str, Any]]) -> None:
    assert _messages(root, "request") == [r["id"] for r in drawn]  # in time order, as explain
    answered = [r["id"] for r in drawn if r["status"] is not None]
    assert sorted(_messages(root, "response")) == sorted(answered)
    lifelines = [g.get("data-component") for g in _groups(root, "lifeline")]
    assert set(r["component"] for r in drawn) <= set(lifelines)
    assert API_SERVER in lifelines
    stored = [r["id"] for r in drawn if "stored" in (r["etcd"] or {})]
    assert sorted(_messages(root, "etcd")) == sorted(stored)
    assert ("etcd" in lifelines) == bool(stored)


def test_the_default_sequence_is_40_exchanges_from_the_first_kubectl_command() -> None:
    rows = _explained(STORY)
    first = next(i for i, r in enumerate(rows) if r["component"] == "kubectl")
    drawn = list(rows[first : first + 40])
    root = _svg("sequence", STORY)
    _check_sequence(root, drawn)
    assert _groups(root, "event"), "the watch events delivered in the range"


@pytest.mark.parametrize("by_id", [False, True])
def test_a_sequence_range_by_positions_or_ids(by_id: bool) -> None:
    rows = _explained(HISTORY)
    start, end = 120, 150
    said = f"{rows[start - 1]['id']}:{rows[end - 1]['id']}" if by_id else f"{start}:{end}"
    _check_sequence(_svg("sequence", HISTORY, span=Range.parse(said)), list(rows[start - 1 : end]))


# -- the SVG writer -------------------------------------------------------------------------
def test_text_is_escaped_and_what_xml_cannot_hold_dropped() -> None:
    assert escape('<a & "b">\x00\x1b') == "&lt;a &amp; &quot;b&quot;&gt;"
    svg = Svg(100, 50, "a <title> & more")
    svg.text(0, 20, "</text><script>x</script>\x07", data_x='"quoted"')
    root = ET.fromstring(svg.render())
    texts = list(root.iter(f"{{{NS['s']}}}text"))
    assert texts[0].text == "</text><script>x</script>"
    assert texts[0].get("data-x") == '"quoted"'
    assert not list(root.iter(f"{{{NS['s']}}}script"))


# -- the command ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--svg", "OUT", "--exchange", "no-such-id"], "no exchange no-such-id"),
        (["--svg", "OUT", "--picture", "sequence", "--range", "9:3"], "FROM comes after TO"),
        (["--svg", "OUT", "--picture", "sequence", "--range", "12"], "give FROM:TO"),
        (["--svg", "OUT", "--picture", "sequence", "--range", "0:3"], "count from 1"),
        (["--svg", "OUT", "--picture", "sequence", "--range", "nope:3"], "no exchange nope"),
        (["--picture", "map"], "--svg OUT or --png OUT"),
        (["--svg", "OUT", "--picture", "map", "--range", "1:3"], "for --picture sequence"),
        (["--svg", "OUT", "--picture", "map", "--exchange", "x"], "for --picture chain"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], said: str, tmp_path: Path) -> None:
    out = tmp_path / "out.svg"
    result = _cli("export", str(STORY), *[str(out) if a == "OUT" else a for a in argv])
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_an_existing_out_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "map.svg"
    out.write_text("mine")
    result = _cli("export", str(HISTORY), "--picture", "map", "--svg", str(out))
    assert result.returncode == 2
    assert "exists (--overwrite)" in result.stderr
    assert out.read_text() == "mine"
    result = _cli("export", str(HISTORY), "--picture", "map", "--svg", str(out), "--overwrite")
    assert result.returncode == 0, result.stderr
    assert ET.fromstring(out.read_text()).tag == f"{{{NS['s']}}}svg"
    assert out.stat().st_mode & 0o777 == 0o600


def test_no_chromium_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out, svg = tmp_path / "map.png", tmp_path / "map.svg"
    argv = ["export", str(HISTORY), "--svg", str(svg), "--png", str(out)]
    result = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *argv],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": str(tmp_path)},  # no Chromium there
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "k8s-wiretap: no Chromium to render the PNG with (`make chromium` installs it)"
    )
    assert not out.exists()
    assert not svg.exists()


@pytest.mark.lab  # renders with the real Chromium (`make chromium`)
def test_the_png_is_the_picture_chromium_renders(tmp_path: Path) -> None:
    from PIL import Image

    svg, png = tmp_path / "chain.svg", tmp_path / "chain.png"
    result = _cli("export", str(STORY), "--svg", str(svg), "--png", str(png))
    assert result.returncode == 0, result.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    root = ET.fromstring(svg.read_text())
    with Image.open(png) as image:
        assert image.size == (int(root.get("width", "")), int(root.get("height", "")))
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None
    assert len(colours) > 50  # text and colours, not a blank page
    white = max(colours)[1]
    assert white == (255, 255, 255)  # the light background


# -- docs/pictures ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["chain", "map", "sequence"])
def test_the_docs_pictures_are_what_the_command_makes(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.svg"
    root = Path(__file__).resolve().parents[2]
    argv = DERIVED.examples()[name]
    result = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "export", *argv, "--svg", str(out)],
        capture_output=True,
        text=True,
        check=False,
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    assert (DOCS / f"{name}.svg").read_text() == out.read_text(), (
        f"docs/pictures/{name}.svg is not what `export {' '.join(argv)}` makes: make snapshots"
    )
