"""Regenerate the docs' screenshots of the app: the README's leaderboard, and one sample explained.

Serves the app on the demo's logs (running ``sandmle demo`` first when the folder has none) and
photographs it in headless Chromium with Playwright, as the browser tests drive it:

    python docs/assets/make_screenshots.py [--logs logs/demo] [--out docs/assets]

Needs ``/usr/bin/chromium`` and ``pip install playwright`` (the README's test set-up).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-background-networking"]  # fmt: skip
VIEWPORT = {"width": 1440, "height": 1275}
"""The README's image: the compact table and the first chart, as a 1440 px screen shows them."""
HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ensure_demo_logs(log_dir: Path) -> None:
    """Run ``sandmle demo`` into ``log_dir`` unless it already holds logs (it resumes)."""
    if any(log_dir.rglob("*.eval")):
        return
    print(f"no logs under {log_dir}: running sandmle demo (minutes) ...", file=sys.stderr)
    command = [sys.executable, "-m", "sandmle.cli", "demo", "--log-dir", str(log_dir)]
    subprocess.run(command, check=True)


def serve(log_dir: Path, port: int) -> subprocess.Popen:
    """The packaged app on 127.0.0.1:``port``, answering its health check."""
    from sandmle.leaderboard.cli import streamlit_command

    proc = subprocess.Popen(streamlit_command([log_dir], port, headless=True),
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("the app exited before it answered") from None
            time.sleep(0.3)
    proc.terminate()
    raise SystemExit("the app did not answer within 60 s")


def tree_sample(log_dir: Path) -> str:
    """The address of a heuristic sample under AIDE that medalled: a search tree to show."""
    from sandmle.leaderboard.drilldown import sample_key
    from sandmle.leaderboard.logs import load_logs

    samples = load_logs([log_dir]).samples
    mask = (samples["model"] == "sandmle/heuristic") & samples["scaffold"].str.startswith("aide")
    chosen = samples[mask & (samples["any_medal"] > 0)]
    return sample_key((chosen if len(chosen) else samples).iloc[0])


def photograph(url: str, sample: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    shots = [out / "leaderboard.png", out / "samples.png"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        table = page.locator("[data-testid='stDataFrame']").first
        table.get_by_text("sandmle/heuristic").first.wait_for(state="attached", timeout=60_000)
        page.wait_for_timeout(1500)  # the grid's canvas paints after its accessible cells
        page.screenshot(path=str(shots[0]))
        page.goto(f"{url}/?view=Samples&sample={urllib.parse.quote(sample)}")
        page.get_by_text("Grading report").first.wait_for(timeout=120_000)
        page.get_by_text("Grading report").first.scroll_into_view_if_needed()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(shots[1]))
        browser.close()
    return shots


def main() -> None:
    from sandmle.cli import default_demo_log_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=default_demo_log_dir(False))
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
    ensure_demo_logs(args.logs)
    port = free_port()
    proc = serve(args.logs, port)
    try:
        for shot in photograph(f"http://127.0.0.1:{port}", tree_sample(args.logs), args.out):
            print(f"wrote {shot}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
