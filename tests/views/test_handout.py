"""The Markdown handout opens with its pictures: `export --markdown OUT` writes them beside
OUT and links them by name; `explain --format markdown` (stdout) embeds them as `data:`
URIs. Each is the picture `export --svg` draws of the same recording."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from xml.etree import ElementTree

from tests.conftest import cli
from tests.recorded import STORY

IMAGE = re.compile(r"^!\[([^\]]+)\]\(([^)]+)\)$", re.MULTILINE)


def drawn(kind: str, tmp_path: Path) -> str:
    out = tmp_path / f"drawn-{kind}.svg"
    result = cli("export", str(STORY), "--svg", str(out), "--picture", kind)
    assert result.returncode == 0, result.stderr
    return out.read_text()


def test_export_writes_the_pictures_beside_and_links_them(tmp_path: Path) -> None:
    out = tmp_path / "handout.md"
    result = cli("export", str(STORY), "--markdown", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    links = IMAGE.findall(text)
    assert [address for _, address in links] == ["handout-map.svg", "handout-chain.svg"]
    assert text.index("handout-chain.svg") < text.index("\n## ")  # before the story
    for kind in ("map", "chain"):
        written = (tmp_path / f"handout-{kind}.svg").read_text()
        ElementTree.fromstring(written.encode())
        assert written == drawn(kind, tmp_path)
        title = ElementTree.fromstring(written.encode()).find("{http://www.w3.org/2000/svg}title")
        assert title is not None and (title.text, f"handout-{kind}.svg") in links


def test_explain_markdown_embeds_them(tmp_path: Path) -> None:
    result = cli("explain", str(STORY), "--format", "markdown")
    assert result.returncode == 0, result.stderr
    links = IMAGE.findall(result.stdout)
    assert len(links) == 2
    prefix = "data:image/svg+xml;base64,"
    for (_, address), kind in zip(links, ("map", "chain"), strict=True):
        assert address.startswith(prefix)
        assert base64.b64decode(address.removeprefix(prefix)).decode() == drawn(kind, tmp_path)


def test_a_picture_in_the_way_leaves_nothing_written(tmp_path: Path) -> None:
    (tmp_path / "handout-chain.svg").write_text("mine")
    out = tmp_path / "handout.md"
    result = cli("export", str(STORY), "--markdown", str(out))
    assert result.returncode == 2
    assert "handout-chain.svg exists (--overwrite)" in result.stderr
    assert not out.exists() and not (tmp_path / "handout-map.svg").exists()
    assert (tmp_path / "handout-chain.svg").read_text() == "mine"
    again = cli("export", str(STORY), "--markdown", str(out), "--overwrite")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "handout-chain.svg").read_text().startswith("<?xml")
