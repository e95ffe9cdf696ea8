"""The served app in a real browser: Debian's chromium driven by Playwright.

CI installs both (``apt-get install -y chromium`` and ``pip install playwright``); the test is
skipped, saying which is missing, only where they are absent.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandmle.leaderboard.cli import streamlit_command
from sandmle.leaderboard.drilldown import sample_key
from sandmle.leaderboard.logs import load_logs

from .conftest import CHECKPOINTS, MODELS

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run",
]  # fmt: skip
SCREENSHOTS = Path("/tmp/sandmle-leaderboard-screenshots")
"""Where the screenshots go, to look at them as a person would see the app."""
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited: {proc.stdout.read() if proc.stdout else ''}")
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"streamlit did not answer on {url} within {timeout} s")


@pytest.fixture
def server(log_dir: Path) -> Iterator[str]:
    """The packaged app served on a free localhost port, stopped after the test."""
    port = _free_port()
    command = streamlit_command([log_dir], port, headless=True)  # binds 127.0.0.1
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


VIEWPORT = {"width": 1440, "height": 1000}
INSPECT_LINK = re.compile(
    r"^http://127\.0\.0\.1:7575/#/logs/[\w%.-]+\.eval/samples/sample/[\w%.-]+/\d+/$"
)


def _shot(page: object, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)  # type: ignore[attr-defined]


def _launch(p: object) -> object:
    return p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)  # type: ignore[attr-defined]


def test_compact_table_fits_and_ties_are_labelled(server: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(server)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        table = page.locator("[data-testid='stDataFrame']").first
        for model in (*MODELS, *CHECKPOINTS):
            # the grid draws on a canvas; its cells live in an accessibility table that
            # fills in after the charts on a loaded machine: wait for it
            table.get_by_text(model, exact=True).first.wait_for(state="attached", timeout=30_000)
        box = table.bounding_box()
        assert box is not None and box["x"] + box["width"] <= VIEWPORT["width"]
        scroller = table.locator(".dvn-scroller").first
        widths = scroller.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert widths[0] <= widths[1], f"the compact table scrolls sideways: {widths}"
        pairs = page.locator("[data-testid='stDataFrame']").filter(has_text="verdict")
        undecided = "too few shared competitions to decide (needs ≥ 6)"
        pairs.get_by_text(undecided, exact=True).first.wait_for(state="attached", timeout=30_000)
        _shot(page, "leaderboard.png")
        browser.close()


def _tree_sample_url(server: str, log_dir: Path) -> str:
    samples = load_logs([log_dir]).samples
    row = samples[
        (samples["scaffold"] == "toy_tree_search") & (samples["competition_id"] == "bike-rentals")
    ].iloc[0]
    return f"{server}/?view=Samples&sample={urllib.parse.quote(sample_key(row))}"


def test_drill_down_explains_a_sample(server: str, log_dir: Path) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(_tree_sample_url(server, log_dir))
        strip = page.locator(".js-plotly-plot").filter(has_text="medal lines")
        strip.first.wait_for(timeout=60_000)
        for line in ("median", "bronze", "silver", "gold"):
            assert strip.first.locator(".annotation-text", has_text=line).count() == 1, line
        # a ReAct-style tool call reads as code, not as one line of escaped JSON
        code = page.locator("[data-testid='stCode']")
        code.filter(has_text="print(pd.read_csv").first.wait_for(timeout=30_000)
        link = page.get_by_role("link", name="Open in Inspect View")
        assert INSPECT_LINK.match(link.get_attribute("href") or ""), link.get_attribute("href")
        tree = page.locator(".js-plotly-plot").filter(has_text="search tree").first
        tree.wait_for(timeout=30_000)
        tree.scroll_into_view_if_needed()
        buggy = tree.locator(".scatterlayer .trace").nth(2).locator(".points path").first
        box = buggy.bounding_box()
        assert box is not None
        # Plotly's drag layer takes the pointer: a real mouse click at the node selects it
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.click(x, y)
        code.filter(has_text="ids = train['id']").first.wait_for(timeout=30_000)
        code.filter(has_text="KeyError: 'id'").first.wait_for(timeout=30_000)
        page.get_by_text("Result: KeyError").first.wait_for(timeout=10_000)  # in full
        _shot(page, "sample.png")
        browser.close()
