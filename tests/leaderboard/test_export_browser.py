"""The export is the app offline: opened with the network off in Chromium at 1440 px, every
sample's drill-down opens from the grid, with no console error and no sideways scroll."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest

from sandmle.leaderboard.drilldown import sample_key
from sandmle.leaderboard.export import export_html
from sandmle.leaderboard.logs import load_logs

from .test_browser import CHROMIUM, SCREENSHOTS, _launch, playwright

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed")
LOCAL = ("file:", "data:", "blob:", "about:")


def test_export_drills_down_every_sample_offline(
    log_dir: Path, chaos_log_dir: Path, tmp_path: Path
) -> None:
    dirs = [log_dir, chaos_log_dir]
    report = export_html(dirs, tmp_path / "report.html")
    assert report.stat().st_size <= 3_000_000
    samples = load_logs(dirs).samples
    keys = [sample_key(row) for _, row in samples.iterrows()]
    chaos = sample_key(samples[samples["model"] == "sandmle/chaos"].iloc[0])
    problems: list[str] = []
    with playwright.sync_playwright() as p:
        browser = _launch(p)
        context = browser.new_context(viewport={"width": 1440, "height": 900}, offline=True)
        page = context.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: None if r.url.startswith(LOCAL) else problems.append(r.url))
        page.goto(report.as_uri())
        page.wait_for_selector("body[data-ready]", timeout=60_000)
        assert int(page.evaluate("document.body.dataset.ready")) == len(keys)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1440
        assert page.locator(".main-fig.js-plotly-plot").count() >= 4  # the charts drew
        for key in keys:  # every row opens its sample, as a click does
            page.locator(f"tr[data-key='{key}']").click()
            page.wait_for_function(
                "k => document.querySelector('tr.chosen')?.dataset.key === k", arg=key
            )
            assert page.locator("#detail h3").count() == 1
        page.goto(f"{report.as_uri()}#{urllib.parse.quote(chaos)}")
        page.reload()
        detail = page.locator("#detail")
        detail.get_by_text("Replies refused (3)").first.wait_for(state="attached", timeout=30_000)
        assert detail.locator(".fig.js-plotly-plot").count() == 2  # score strip and search tree
        detail.locator("details.node").first.click()
        row = samples[samples["model"] == "sandmle/chaos"].iloc[0]  # the app's title
        title = f"{row['model']} · {row['scaffold']} · {row['competition_id']} · epoch 1"
        assert detail.locator("h3").inner_text() == title
        code = detail.locator("pre.code").filter(has_text="def broken(:").first
        assert "def broken(:" in code.locator("span.bad").inner_text()  # the line marked
        assert "│" not in code.inner_text() and "▶" not in code.inner_text()  # copyable
        assert detail.locator("p.note").filter(has_text="▶ line").count() >= 1  # and named
        tree = "document.querySelector('#detail .fig.tree')._fullLayout"
        assert page.evaluate(f"{tree}.height") < 420 and page.evaluate(f"{tree}.width") < 900
        assert "KeyError: 'n_folds'" in detail.locator("pre.trace").first.text_content()
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "export-drilldown.png"), full_page=True)
        browser.close()
    assert problems == []
