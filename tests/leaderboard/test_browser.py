"""The served app in a real browser: Debian's chromium driven by Playwright.

CI installs both (``apt-get install -y chromium`` and ``pip install playwright``); the test is
skipped, saying which is missing, only where they are absent.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandmle.leaderboard.cli import streamlit_command

from .conftest import CHECKPOINTS, MODELS

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run",
]  # fmt: skip
SHARED_SCREENSHOT = Path("/tmp/leaderboard_screenshot.png")
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
    command = streamlit_command([log_dir], port, headless=True)
    split = command.index("--")
    command[split:split] = ["--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
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


def test_leaderboard_in_chromium(server: str, tmp_path: Path) -> None:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(server)
        page.wait_for_selector(".js-plotly-plot", timeout=30_000)
        table = page.locator("[data-testid='stDataFrame']").first
        for model in (*MODELS, *CHECKPOINTS):
            # the grid fills in after the charts on a loaded machine: wait, then assert
            # the grid draws on a canvas; its cells live in an accessibility table, which
            # fills in after the charts on a loaded machine: wait for it, then count
            cells = table.get_by_text(model, exact=True)
            cells.first.wait_for(state="attached", timeout=30_000)
            assert cells.count() >= 1, model
        # every Plotly figure has drawn its SVG
        assert page.locator(".js-plotly-plot .main-svg").count() >= 1
        shot = tmp_path / "leaderboard.png"
        page.screenshot(path=str(shot), full_page=True)
        shutil.copy(shot, SHARED_SCREENSHOT)

        page.get_by_role("tab", name="Benchmarks").click()
        page.get_by_text("per competition", exact=False).first.wait_for(timeout=10_000)

        page.get_by_role("tab", name="Sample").click()
        page.locator("[data-testid='stSelectbox']").last.click()
        page.get_by_role("option").filter(has_text="toy_tree_search · bike-rentals").click()
        page.get_by_text('"cmd": "ls /home/data"').first.wait_for(timeout=15_000)
        tree = page.locator(".js-plotly-plot").filter(has_text="search tree")
        tree.first.wait_for(timeout=15_000)
        page.screenshot(path=str(tmp_path / "sample.png"), full_page=True)
        browser.close()
    assert shot.stat().st_size > 10_000
