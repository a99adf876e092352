"""Make docs/replay.png: `k8s-wiretap replay` on the committed apply story, as the README
shows it — the scheduler's binding of the 3-replica apply's new pod, and its chain;
docs/walkthrough.png: `k8s-wiretap walkthrough` at its three-way patch step; and
docs/chain.png: the chain view (`c`) of that binding.

    .venv/bin/python docs/screenshot.py [OUT.png]
    .venv/bin/python docs/screenshot.py walkthrough [OUT.png]
    .venv/bin/python docs/screenshot.py chain [OUT.png]

Textual saves the screen as SVG; cairosvg (`pip install cairosvg`, not a dependency)
turns it into PNG, with DejaVu Sans Mono for the SVG's Fira Code where that is missing.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from k8s_wiretap.views.tui import ReplayApp  # noqa: E402
from k8s_wiretap.views.tui.walkthrough.chapters import load  # noqa: E402
from tests.views.tui.detail.test_chain import opened  # noqa: E402
from tests.views.tui.pilot import settle  # noqa: E402
from tests.views.tui.test_app import type_filter  # noqa: E402
from tests.views.tui.walkthrough.test_walkthrough import at_step  # noqa: E402

SIZE = (120, 40)


async def shoot(svg: Path, chain: bool = False) -> None:
    app = ReplayApp(ROOT / "recordings" / "apply-story.jsonl.gz")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_filter(pilot, "~r pods/binding")
        await pilot.press("j", "j", "escape")  # the third binding, the filter cleared
        await settle(app, pilot)
        if chain:
            await opened(app, pilot)
        app.save_screenshot(str(svg.name), str(svg.parent))


async def shoot_walkthrough(svg: Path) -> None:
    walkthrough = load("apply-story")
    app = ReplayApp(walkthrough.recording, walkthrough=walkthrough)
    async with app.run_test(size=SIZE) as pilot:
        await at_step(app, pilot)
        await pilot.press("right", "right", "right")  # 4/11: the three-way patch
        await at_step(app, pilot)
        app.save_screenshot(str(svg.name), str(svg.parent))


def main() -> None:
    import cairosvg

    args = sys.argv[1:]
    name = args.pop(0) if args and args[0] in ("walkthrough", "chain") else "replay"
    out = Path(args[0]) if args else ROOT / "docs" / f"{name}.png"
    with tempfile.TemporaryDirectory() as folder:
        svg = Path(folder) / f"{name}.svg"
        asyncio.run(
            shoot_walkthrough(svg) if name == "walkthrough" else shoot(svg, name == "chain")
        )
        text = svg.read_text().replace("Fira Code, monospace", "DejaVu Sans Mono, monospace")
    cairosvg.svg2png(bytestring=text.encode(), write_to=str(out))
    print(out)


if __name__ == "__main__":
    main()
