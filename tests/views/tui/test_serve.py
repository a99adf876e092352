"""`k8s-wiretap serve replay FILE` and `serve walkthrough` in a real headless browser:
Debian's chromium, Playwright.

The page draws the terminal on a canvas (xterm.js), so its text is not in the DOM: the page
is given a small script that keeps the xterm Terminal the page creates, and the test reads
the screen from that terminal's buffer (what the canvas shows), then checks the pixels of
a screenshot. `make chromium` installs the browser; no browser is downloaded.
"""

from __future__ import annotations

import http.client
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, Route, sync_playwright

from k8s_wiretap.cli import build_parser
from k8s_wiretap.views.tui.walkthrough.chapters import load
from tests.conftest import cli, wait_until
from tests.recorded import STORY, exchange_count

ALL = exchange_count(STORY)  # the story's exchanges, counted from its file
CHROMIUM = Path("/usr/bin/chromium")

# Keeps the xterm Terminal that textual-serve's page assigns to `this.terminal`.
KEEP_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  get() { return undefined; },
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true});
    if (value && value.buffer) window.__terminal = value;
  },
});
"""

SCREEN = """() => {
  const terminal = window.__terminal;
  if (!terminal) return "";
  const lines = [];
  for (let y = 0; y < terminal.rows; y++) {
    const line = terminal.buffer.active.getLine(y);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines.join("\\n");
}"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def listen_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on `port` (from /proc/net)."""
    found = set()
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`k8s-wiretap serve replay` on the story, on a free port; the address it printed."""
    yield from serving(["replay", str(STORY)], "k8s-wiretap replay apply-story.jsonl.gz")


@pytest.fixture(scope="module")
def walkthrough_server() -> Iterator[str]:
    """`k8s-wiretap serve walkthrough` (the apply story's), on a free port; its address."""
    yield from serving(["walkthrough"], "k8s-wiretap walkthrough apply-story")


def serving(args: list[str], title: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "k8s_wiretap", "serve", *args, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until(lambda: listening(port) or process.poll() is not None, 60, "serve to listen")
        assert process.poll() is None, process.communicate()[0]
        assert process.stdout is not None
        said = process.stdout.readline()
        start = f"k8s-wiretap: serving {title} on http://127.0.0.1:{port}/?token="
        printed = re.fullmatch(
            re.escape(start) + r"([\w-]{43})&fontsize=16 \(Ctrl\+C stops\)\n", said
        )
        assert printed, said  # a token of 32 random bytes
        yield f"http://127.0.0.1:{port}/?token={printed[1]}&fontsize=16"
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "no /usr/bin/chromium: `make chromium` installs Debian's"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


def origin(address: str) -> str:
    """`http://127.0.0.1:PORT/?token=...` → `http://127.0.0.1:PORT`."""
    return address.split("/?", 1)[0]


def open_page(
    browser: Browser, address: str, font_size: int = 16, elsewhere: list[str] | None = None
) -> Page:
    """The page at `address` (with `font_size`); whatever it asks of another site is
    refused (and noted in `elsewhere`): the test stays on this machine, as a room without
    Internet would."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.add_init_script(KEEP_TERMINAL)

    def route(route: Route) -> None:
        if route.request.url.startswith(origin(address) + "/"):
            route.continue_()
            return
        if elsewhere is not None:
            elsewhere.append(route.request.url)
        route.abort()

    page.route("**/*", route)
    page.goto(address.replace("fontsize=16", f"fontsize={font_size}"))
    return page


def test_the_page_needs_nothing_from_another_site(server: str, browser: Browser) -> None:
    """textual-serve's page fetched its font's CSS from a web font service; ours serves
    the font textual-serve ships, so a room without Internet sees the same font."""
    elsewhere: list[str] = []
    page = open_page(browser, server, elsewhere=elsewhere)
    try:
        screen_shows(page, f"{ALL} exchanges")
        page.wait_for_function("() => document.fonts.status === 'loaded'", timeout=60_000)
        assert page.evaluate("() => document.fonts.check('16px \"Roboto Mono\"')")
        loaded = page.evaluate(
            "() => [...document.fonts].filter(f => f.status === 'loaded').map(f => f.family)"
        )
        assert any("Roboto Mono" in family for family in loaded), loaded
        assert elsewhere == []
    finally:
        page.close()


def screen_shows(page: Page, text: str) -> None:
    page.wait_for_function(f"() => ({SCREEN})().includes({text!r})", timeout=60_000)


def shot(page: Page) -> bytes:
    """A screenshot once xterm has drawn what its buffer holds (it draws on animation frames)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.screenshot()


def colours(png: bytes) -> int:
    found = Image.open(BytesIO(png)).convert("RGB").getcolors(maxcolors=1 << 24)
    return len(found or [])


def test_the_replay_tui_in_chromium(server: str, browser: Browser, tmp_path: Path) -> None:
    page = open_page(browser, server)
    try:
        assert page.url == server  # the address printed: its token, the default font size
        screen_shows(page, f"{ALL} exchanges")  # the whole story indexed
        screen_shows(page, "request GET /version")  # the first exchange, selected, explained
        screen = page.evaluate(SCREEN)
        assert (
            "namespace/name" in screen
            and f"{ALL} exchanges" in screen
            and "kubelet" in screen
            and "asks the server's version" in screen
        )
        before = shot(page)
        assert colours(before) > 16  # text in several colours, not an empty page

        page.focus(".xterm-helper-textarea")  # where xterm takes the keyboard
        page.keyboard.press("j")  # down one row: /readyz
        screen_shows(page, "request GET /readyz")  # the Explain tab follows the selection
        after = shot(page)
        (tmp_path / "before.png").write_bytes(before)  # to look at
        (tmp_path / "after.png").write_bytes(after)
        assert after != before and colours(after) > 16
    finally:
        page.close()


def test_the_walkthrough_in_chromium(
    walkthrough_server: str, browser: Browser, tmp_path: Path
) -> None:
    page = open_page(browser, walkthrough_server)
    try:
        screen_shows(page, "1/11  kubectl asks what the server serves")
        screen_shows(page, "request GET /api?timeout=32s")  # its exchange, explained
        first = shot(page)
        assert colours(first) > 16
        page.focus(".xterm-helper-textarea")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        screen_shows(page, "4/11  A three-way strategic merge patch")
        screen_shows(page, "strategic patch")  # the Patch tab
        screen = page.evaluate(SCREEN)
        assert "k8s-wiretap walkthrough What happens when you kubectl apply" in screen
        assert "kubectl apply patches Deployment default/web" in screen
        patch = shot(page)
        (tmp_path / "first.png").write_bytes(first)  # to look at
        (tmp_path / "patch.png").write_bytes(patch)
        assert patch != first and colours(patch) > 16
    finally:
        page.close()


@pytest.mark.parametrize("name", ["etcd-and-watches", "kubelet-life", "who-does-what"])
def test_every_walkthrough_in_chromium(name: str, browser: Browser, tmp_path: Path) -> None:
    """Each story as a room sees it: served, its first step narrated, → the second."""
    spec = load(name)
    first, second = spec.chapters[0].title, spec.chapters[1].title
    total = len(spec.chapters)
    for url in serving(["walkthrough", name], f"k8s-wiretap walkthrough {name}"):
        page = open_page(browser, url)
        try:
            screen_shows(page, f"1/{total}  {first}")
            before = shot(page)
            page.focus(".xterm-helper-textarea")
            page.keyboard.press("ArrowRight")
            screen_shows(page, f"2/{total}  {second}")
            assert f"k8s-wiretap walkthrough {spec.title}" in page.evaluate(SCREEN)
            after = shot(page)
            (tmp_path / f"{name}.png").write_bytes(after)  # to look at
            assert after != before and colours(after) > 16
        finally:
            page.close()


def test_a_tab_past_max_sessions_is_told_so(browser: Browser) -> None:
    args = ["replay", str(STORY), "--max-sessions", "1"]
    for address in serving(args, "k8s-wiretap replay apply-story.jsonl.gz"):
        first = open_page(browser, address)
        try:
            screen_shows(first, f"{ALL} exchanges")
            second = open_page(browser, address)
            screen_shows(second, "k8s-wiretap: no session free (--max-sessions 1)")
            second.wait_for_selector("text=Session ended", timeout=60_000)
            second.close()
        finally:
            first.close()


def test_a_larger_font_for_a_projector(server: str, browser: Browser) -> None:
    small, large = open_page(browser, server), open_page(browser, server, font_size=32)
    try:
        screen_shows(small, "namespace/name")
        screen_shows(large, "namespace/name")
        columns = "() => [window.__terminal.cols, Number(window.__terminal.options.fontSize)]"
        (small_columns, small_size), (large_columns, large_size) = (
            small.evaluate(columns),
            large.evaluate(columns),
        )
        assert (small_size, large_size) == (16, 32)
        assert large_columns < small_columns  # the same window holds fewer, larger letters
    finally:
        small.close()
        large.close()


def test_the_default_host_is_loopback(server: str) -> None:
    assert build_parser().parse_args(["serve", "replay", "x"]).host == "127.0.0.1"
    port = int(origin(server).rsplit(":", 1)[1])
    assert listen_addresses(port) == {"0100007F"}  # 127.0.0.1, and nothing else


def test_a_page_of_another_site_is_refused(server: str) -> None:
    """Even with the token (a page that learnt it): another name, another origin."""
    port = int(origin(server).rsplit(":", 1)[1])
    token = server.split("token=", 1)[1].split("&", 1)[0]
    rebound = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    rebound.request("GET", f"/?token={token}", headers={"Host": f"attacker.example:{port}"})
    refused = rebound.getresponse()  # DNS rebinding: another name for us
    assert refused.status == 403 and b"is not this server's name" in refused.read()
    hijack = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    upgrade = {
        "Host": f"127.0.0.1:{port}",
        "Origin": "http://attacker.example",
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    hijack.request("GET", f"/ws/{token}", headers=upgrade)
    refused = hijack.getresponse()  # a websocket opened by another site's page
    assert refused.status == 403 and b"the websocket is not for pages of" in refused.read()


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.stderr.startswith("k8s-wiretap") and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    return result.stderr


def test_a_reachable_host_needs_allow_remote() -> None:
    result = cli("serve", "replay", str(STORY), "--host", "0.0.0.0")
    assert result.returncode == 2
    assert "--host 0.0.0.0 is reachable from other machines: add --allow-remote" in one_line(result)


def test_allow_remote_warns_before_anything_else(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here.jsonl"
    result = cli("serve", "replay", str(missing), "--host", "0.0.0.0", "--allow-remote")
    warning, error = result.stderr.splitlines()
    assert warning.startswith("k8s-wiretap: warning: serving on 0.0.0.0 over plain HTTP: anyone")
    assert error.startswith(f"k8s-wiretap: cannot read {missing}")
    assert result.returncode == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["replay", "nothing-here.jsonl"], "cannot read nothing-here.jsonl"),
        (["replay", str(STORY), "--font-size", "200"], "--font-size 200: between 6 and 96"),
        (["walkthrough", "nope"], "no walkthrough 'nope': the walkthroughs are apply-story"),
    ],
)
def test_refused_in_one_line_before_serving(args: list[str], said: str) -> None:
    result = cli("serve", *args)
    assert result.returncode in (1, 2) and said in one_line(result)
    assert result.stdout == ""  # never said it serves


def test_a_not_recording_is_refused(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping list\n")
    result = cli("serve", "replay", str(notes))
    assert result.returncode == 1 and "not a k8s-wiretap recording" in one_line(result)


def test_a_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve", "replay", str(STORY), "--port", str(port))
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in one_line(result)
    assert result.stdout == ""
