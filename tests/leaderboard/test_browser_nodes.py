"""Every node explains itself, in a real browser, over two log dirs (the session's and a real
``sandmle/chaos`` AIDE search): refused replies with the failing line, a crash's traceback,
node labels that follow the sample, and the Inspect View link opening the sample."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from sandmle.leaderboard.cli import streamlit_command
from sandmle.leaderboard.drilldown import _node_label, sample_key
from sandmle.leaderboard.logs import load_logs
from sandmle.leaderboard.transcript import (
    INSPECT_VIEW_ENV,
    failure_kind,
    inspect_view_root,
    read_sample,
    search_tree,
)

from .test_browser import CHROMIUM, SCREENSHOTS, _free_port, _launch, _shot, playwright

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed")
VIEWPORT = {"width": 1440, "height": 900}


def _wait_view(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"inspect view did not answer on {url}")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def two_dirs(log_dir: Path, chaos_log_dir: Path) -> Iterator[tuple[str, str, list[str]]]:
    """The app over both dirs, and ``inspect view`` on their common root where its links go."""
    from .test_browser import _wait_healthy

    dirs = [str(log_dir), str(chaos_log_dir)]
    view_port, app_port = _free_port(), _free_port()
    view_url = f"http://127.0.0.1:{view_port}"
    env = {**os.environ, INSPECT_VIEW_ENV: view_url}
    root = inspect_view_root(str(next(chaos_log_dir.glob("*.eval"))), dirs)
    view = subprocess.Popen(
        ["inspect", "view", "--log-dir", str(root), "--port", str(view_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    command = streamlit_command([Path(d) for d in dirs], app_port, headless=True)
    split = command.index("--")
    command[split:split] = ["--server.address", "127.0.0.1"]
    app = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        url = f"http://127.0.0.1:{app_port}"
        _wait_healthy(url, app, timeout=60.0)
        _wait_view(view_url, view)
        yield url, view_url, dirs
    finally:
        _stop(app)
        _stop(view)


def _chaos_row(dirs: list[str]) -> pd.Series:
    samples = load_logs(dirs).samples
    return samples[samples["model"] == "sandmle/chaos"].iloc[0]


def _open_sample(page: object, url: str, row: pd.Series) -> None:
    key = urllib.parse.quote(sample_key(row))
    page.goto(f"{url}/?view=Samples&sample={key}")  # type: ignore[attr-defined]
    tree = page.locator(".js-plotly-plot").filter(has_text="search tree").first  # type: ignore[attr-defined]
    tree.wait_for(timeout=90_000)


def _pick_node(page: object, label: str, tries: int = 6) -> None:
    """Open the node picker and choose ``label``; a rerun still landing (the page keeps loading
    after the tree shows) closes an open list, so the list is opened again until it stays."""
    picker = page.get_by_test_id("stSelectbox").filter(has_text="Node (or click")  # type: ignore[attr-defined]
    option = page.locator("[role='option']").filter(has_text=label).first  # type: ignore[attr-defined]
    for _ in range(tries - 1):
        picker.get_by_role("button", name="Open").click()
        try:
            option.click(timeout=5_000)
            return
        except playwright.TimeoutError:
            page.keyboard.press("Escape")  # type: ignore[attr-defined]
    picker.get_by_role("button", name="Open").click()
    option.click()


def _code_blocks(page: object) -> object:
    return page.locator("[data-testid='stCode']")  # type: ignore[attr-defined]


def test_refused_replies_and_crash_traceback(two_dirs: tuple[str, str, list[str]]) -> None:
    url, _, dirs = two_dirs
    row = _chaos_row(dirs)
    nodes = search_tree(read_sample(row["log"], row["sample_id"], int(row["epoch"])))
    SCREENSHOTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport=VIEWPORT)
        _open_sample(page, url, row)
        # node 0 (the first, chosen by default): three replies that do not compile
        page.get_by_text("Replies refused (3)").wait_for(timeout=30_000)
        refused = _code_blocks(page).filter(has_text="def broken(:")
        refused.nth(2).wait_for(timeout=30_000)  # Streamlit draws the blocks one by one
        assert refused.count() == 3 and "▶" not in refused.first.inner_text()  # copyable code
        marked = page.get_by_test_id("stCaptionContainer").filter(has_text="▶ line")
        marked.nth(2).wait_for(timeout=30_000)
        assert marked.count() == 3  # the line that does not compile, named below each
        assert "does not compile" in page.get_by_text("Reply 1:").first.inner_text()
        page.get_by_text("raw reply 1").first.click()
        page.get_by_text("Plan:").first.wait_for(timeout=10_000)
        _shot(page, "refused-node.png")
        # node 1: it ran and crashed; the traceback, and the line it died at marked
        _pick_node(page, _node_label(nodes[1]))
        trace = _code_blocks(page).filter(has_text="Traceback (most recent call last)")
        trace.filter(has_text="KeyError: 'n_folds'").first.wait_for(timeout=30_000)
        code = _code_blocks(page).filter(has_text='settings["n_folds"]')
        code.first.wait_for(timeout=30_000)
        died = page.get_by_test_id("stCaptionContainer").filter(has_text="▶ line")
        died.filter(has_text='settings["n_folds"]').first.wait_for(timeout=10_000)
        page.get_by_text("crashed at line").first.wait_for(timeout=10_000)
        _shot(page, "crashed-node.png")
        browser.close()


def test_node_labels_follow_the_sample(two_dirs: tuple[str, str, list[str]]) -> None:
    """Regression: the picker kept the labels of the sample shown before."""
    url, _, dirs = two_dirs
    samples = load_logs(dirs).samples
    toy = samples[(samples["scaffold"] == "toy_tree_search")].iloc[0]
    row = _chaos_row(dirs)
    chaos = search_tree(read_sample(row["log"], row["sample_id"], int(row["epoch"])))
    with playwright.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport=VIEWPORT)
        _open_sample(page, url, toy)
        _pick_node(page, "node 1 · draft · KeyError")
        _code_blocks(page).filter(has_text="ids = train['id']").first.wait_for(timeout=30_000)
        # another sample in the same session: search the grid for it
        find = page.get_by_label("Find (model, scaffold, competition, reason)")
        find.fill("sandmle/chaos")
        find.press("Enter")
        page.get_by_text("sandmle/chaos · aide").first.wait_for(timeout=60_000)
        picker = page.get_by_test_id("stSelectbox").filter(has_text="Node (or click")
        shown = picker.get_by_role("combobox")
        page.wait_for_function(
            "([e, v]) => e.value === v", arg=[shown.element_handle(), _node_label(chaos[0])]
        )
        result = page.get_by_test_id("stMarkdown").filter(has_text="Result:")
        assert failure_kind(chaos[0]) in result.first.inner_text()  # in full, not cut to a card
        _shot(page, "labels-follow-sample.png")
        browser.close()


def test_inspect_view_link_opens_the_sample_from_the_second_dir(
    two_dirs: tuple[str, str, list[str]],
) -> None:
    url, view_url, dirs = two_dirs
    row = _chaos_row(dirs)
    with playwright.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport=VIEWPORT)
        _open_sample(page, url, row)
        link = page.get_by_role("link", name="Open in Inspect View")
        href = link.get_attribute("href") or ""
        assert href.startswith(f"{view_url}/#/logs/{Path(dirs[1]).name}/")
        page.get_by_text(
            f"inspect view --log-dir {Path(dirs[1]).parent.resolve()}"
        ).first.wait_for()
        page.goto(href)
        page.get_by_text("node 0: draft").first.wait_for(timeout=60_000)
        assert "No events to display" not in page.inner_text("body")
        _shot(page, "inspect-view.png")
        browser.close()
