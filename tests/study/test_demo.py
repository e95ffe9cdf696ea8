"""The demo end to end (one task of the built-in pack), and its HTML report in a real browser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandmle.study.demo import TREE_SCAFFOLDS

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
SCAFFOLDS = ("react", *TREE_SCAFFOLDS)


def _demo(log_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sandmle.cli",
            "demo",
            "--log-dir",
            str(log_dir),
            "--task",
            "loan-desk-000",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "120"},
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    log_dir = tmp_path_factory.mktemp("demo") / "logs"
    proc = _demo(log_dir)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return log_dir, proc.stdout


def test_demo_prints_every_scaffold_and_both_policies(demo_run: tuple[Path, str]) -> None:
    log_dir, out = demo_run
    table = out[out.index("leaderboard (") :]
    for scaffold in SCAFFOLDS:
        assert scaffold in table, scaffold
    assert "sandmle/heuristic" in table and "sandmle/sample-submission" in table
    assert f"sandmle leaderboard {log_dir}" in out
    assert len(list(log_dir.glob("*.eval"))) == 10  # 2 policies x 5 scaffolds


def test_demo_twice_reuses_finished_work(demo_run: tuple[Path, str]) -> None:
    log_dir, _ = demo_run
    before = sorted(log_dir.glob("*.eval"))
    assert _demo(log_dir).returncode == 0
    assert sorted(log_dir.glob("*.eval")) == before


@pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(), reason="Debian chromium is not installed"
)
def test_html_report_opens_in_chromium(demo_run: tuple[Path, str], tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    report = demo_run[0] / "report.html"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        page = browser.new_page()
        page.goto(report.as_uri())
        page.wait_for_selector(".plotly-graph-div svg", timeout=30_000)
        text = page.inner_text("body")
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    for scaffold in SCAFFOLDS:
        assert scaffold in text
