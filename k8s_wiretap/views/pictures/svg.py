"""A small SVG writer for the pictures: shapes and text, every string escaped.

Text is measured by estimate (`width`): the pictures use a sans-serif font at 12 px or
more, and leave room for its widest letters. Colours follow the story's and the TUI's
(`views/story.colour_of`), darkened for a light background: the pictures are for
handouts and projectors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from k8s_wiretap.views.story import colour_of

__all__ = ["API_SERVER", "ETCD", "INK", "MUTED", "Svg", "colour", "fit", "width"]

FONT = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
BACKGROUND = "#ffffff"
INK = "#111827"  # text: near black on white
MUTED = "#4b5563"  # secondary text, still above 7:1 on white
API_SERVER = "kube-apiserver"
ETCD = "etcd"
EM = 0.58  # a character's width, in ems: DejaVu Sans's average, with room

# The story's rich colour names, as dark shades that read on white.
HEX = {
    "cyan": "#0e7490",
    "green": "#15803d",
    "magenta": "#a21caf",
    "yellow": "#a16207",
    "dim": "#6b7280",
    "white": "#374151",
    API_SERVER: "#1d4ed8",
    ETCD: "#b45309",
}
_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def colour(component: str) -> str:
    """The component's colour (the API server and etcd have their own)."""
    if component in (API_SERVER, ETCD):
        return HEX[component]
    return HEX.get(colour_of(component).split()[-1], HEX["white"])


def escape(text: object) -> str:
    """`text` as XML character data or an attribute value: markup escaped, and the
    characters XML cannot hold at all dropped."""
    cleaned = _INVALID.sub("", str(text))
    return (
        cleaned.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def width(text: str, size: float) -> float:
    """The estimated width of `text` at `size` px."""
    return len(text) * size * EM


def fit(text: str, room: float, size: float) -> str:
    """`text` cut (with an ellipsis) to fit `room` px at `size` px."""
    most = max(1, int(room / (size * EM)))
    return text if len(text) <= most else text[: most - 1] + "…"


def _attrs(attrs: dict[str, object]) -> str:
    """`key="value"` pairs; `class_` is class, `data_x` is data-x; None is left out."""
    said = []
    for key, value in attrs.items():
        if value is None:
            continue
        name = "class" if key == "class_" else key.rstrip("_").replace("_", "-")
        if isinstance(value, float):
            value = f"{value:.1f}".removesuffix(".0")
        said.append(f' {name}="{escape(value)}"')
    return "".join(said)


class Svg:
    """An SVG document built in order: what is added later is drawn on top."""

    def __init__(self, width: float, height: float, title: str) -> None:
        self.width, self.height, self.title = round(width), round(height), title
        self._parts: list[str] = []
        self._markers: dict[str, str] = {}

    def rect(self, x: float, y: float, w: float, h: float, **attrs: object) -> None:
        self._parts.append(f"<rect{_attrs({'x': x, 'y': y, 'width': w, 'height': h, **attrs})}/>")

    def circle(self, x: float, y: float, r: float, **attrs: object) -> None:
        self._parts.append(f"<circle{_attrs({'cx': x, 'cy': y, 'r': r, **attrs})}/>")

    def line(
        self,
        points: Sequence[tuple[float, float]],
        stroke: str,
        *,
        arrow: bool = False,
        **attrs: object,
    ) -> None:
        """A polyline through `points`; `arrow`: an arrowhead at its end, in its colour."""
        said = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        end = f"url(#{self.marker(stroke)})" if arrow else None
        self._parts.append(
            "<polyline"
            + _attrs({"points": said, "fill": "none", "stroke": stroke, "marker_end": end, **attrs})
            + "/>"
        )

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: float = 13,
        fill: str = INK,
        anchor: str = "start",
        bold: bool = False,
        halo: bool = False,
        **attrs: object,
    ) -> None:
        """`text` with its baseline at `y`; `halo`: a white outline, to read over lines."""
        weight = "bold" if bold else None
        if halo:
            attrs = {"stroke": BACKGROUND, "stroke_width": 4, "paint_order": "stroke", **attrs}
        self._parts.append(
            "<text"
            + _attrs(
                {
                    "x": x,
                    "y": y,
                    "font_size": size,
                    "fill": fill,
                    "text_anchor": anchor,
                    "font_weight": weight,
                    **attrs,
                }
            )
            + f">{escape(text)}</text>"
        )

    def title_of(self, text: str) -> None:
        """A tooltip for the element or group it is in."""
        self._parts.append(f"<title>{escape(text)}</title>")

    @contextmanager
    def group(self, **attrs: object) -> Iterator[None]:
        self._parts.append(f"<g{_attrs(attrs)}>")
        yield
        self._parts.append("</g>")

    def marker(self, stroke: str) -> str:
        """The id of an arrowhead of colour `stroke`."""
        return self._markers.setdefault(stroke, f"arrow{len(self._markers)}")

    def render(self) -> str:
        defs = "".join(
            f'<marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
            f'markerHeight="8" orient="auto-start-reverse" markerUnits="userSpaceOnUse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{escape(stroke)}"/></marker>'
            for stroke, name in self._markers.items()
        )
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
            f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
            f'font-family="{FONT}">'
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            + head
            + f"<title>{escape(self.title)}</title><defs>{defs}</defs>"
            + f'<rect width="100%" height="100%" fill="{BACKGROUND}"/>'
            + "".join(self._parts)
            + "</svg>\n"
        )
