"""The app as served by ``sandmle leaderboard DIR``, attacked in Chromium.

Loopback only; the log-dir box does not open folders outside the served roots; and a log whose
agent wrote markdown and HTML everywhere it could makes the browser fetch none of its URLs.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall
from inspect_ai.util import sandbox, store

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.search_tree import STORE_KEY, SearchNode
from sandmle.leaderboard.drilldown import sample_key
from sandmle.leaderboard.logs import load_logs

from .test_browser import VIEWPORT, _free_port, _launch, _wait_healthy, playwright
from .test_browser import pytestmark as browser_marks

pytestmark = browser_marks
ROOT = Path(__file__).resolve().parents[2]
HOST = "payload.invalid"
"""Every URL the agent plants points here; the browser must request none."""


def payload(where: str) -> str:
    url = f"http://{HOST}/{where}"
    return (
        f"![{where}]({url}.png) <img src='{url}-html.png'> [link]({url}) "
        f'<iframe src="{url}-frame"></iframe> <script src="{url}.js"></script> **bold** $x$'
    )


@solver
def planted() -> Solver:
    """An agent that writes payloads into its messages, tool calls, tree and submission."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        call = ToolCall(id="c1", function=payload("tool-name"), arguments={"cmd": payload("arg")})
        state.messages.append(ChatMessageAssistant(content=payload("reply"), tool_calls=[call]))
        state.messages.append(
            ChatMessageTool(content=payload("tool-out"), tool_call_id="c1", function="bash",
                            error=None)
        )  # fmt: skip
        node = SearchNode(
            id=0, operator="draft", step=0, is_bug=True, plan=payload("plan"),
            summary=payload("summary"), code=payload("code"), output=payload("output"),
            extra={"stop_reason": payload("stop")},
        )  # fmt: skip
        store().set(STORE_KEY, [node.model_dump()])
        header = payload("header").replace(",", " ")
        await sandbox().write_file(SUBMISSION_PATH, f"{header},other\n1,2\n")
        state.completed = True
        return state

    return solve


@pytest.fixture(scope="module")
def payload_log_dir(tmp_path_factory: pytest.TempPathFactory, pack_dir: Path) -> Path:
    logs = tmp_path_factory.mktemp("payload")
    [log] = inspect_eval(
        synthetic(pack=str(pack_dir), tasks="bike-rentals"),
        model="mockllm/model",
        solver=planted(),
        log_dir=str(logs),
        display="none",
    )
    assert log.status == "success", log.error
    return logs


@contextmanager
def _serve(log_dir: Path) -> Iterator[tuple[str, int]]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandmle.cli", "leaderboard", str(log_dir), "--port", str(port),
         "--headless"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=60)
        yield f"http://127.0.0.1:{port}", port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def served(log_dir: Path) -> Iterator[tuple[str, int]]:
    with _serve(log_dir) as address:
        yield address


OTHER_ADDRESS = "127.0.0.2"
"""An address of this machine other than the one the app binds: a server listening on every
interface answers it, one bound to 127.0.0.1 refuses it. It is in the loopback range, so the
probe sends no packet to any address outside this machine's own loopback."""


def test_only_loopback_answers_and_the_box_stays_under_the_roots(
    served: tuple[str, int], chaos_log_dir: Path
) -> None:
    url, port = served
    with playwright.sync_playwright() as p:
        browser = _launch(p)
        probe = browser.new_page()
        with pytest.raises(playwright.Error, match="ERR_CONNECTION_REFUSED"):
            probe.goto(f"http://{OTHER_ADDRESS}:{port}/", timeout=15_000)
        probe.close()
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        box = page.locator("[data-testid='stTextArea'] textarea").first
        box.wait_for(timeout=60_000)
        box.fill(str(chaos_log_dir))
        box.press("Control+Enter")
        page.get_by_text("outside the served folders", exact=False).first.wait_for(timeout=30_000)
        page.wait_for_timeout(2_000)
        assert "sandmle/chaos" not in page.content()
        browser.close()


def test_agent_markdown_and_html_fetch_nothing(payload_log_dir: Path) -> None:
    [row] = [r for _, r in load_logs([payload_log_dir]).samples.iterrows()]
    assert "payload.invalid" in row["invalid_reason"]  # the header is quoted back
    requested: list[str] = []
    with _serve(payload_log_dir) as (url, _):
        with playwright.sync_playwright() as p:
            browser = _launch(p)
            page = browser.new_page(viewport=VIEWPORT)
            page.on("request", lambda request: requested.append(request.url))
            page.goto(f"{url}/?view=Samples&sample={urllib.parse.quote(sample_key(row))}")
            page.get_by_text("Transcript").first.wait_for(timeout=60_000)
            page.get_by_text("stop reason", exact=False).first.wait_for(timeout=30_000)
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(2_000)
            shown = page.content()
            planted_tags = page.locator(f"img[src*='{HOST}'], iframe[src*='{HOST}'], "
                                        f"script[src*='{HOST}'], a[href*='{HOST}']")  # fmt: skip
            tags = planted_tags.count()
            browser.close()
        assert "plan.png" in shown and "tool-name" in shown  # the payloads are on the page
        assert [r for r in requested if HOST in urllib.parse.urlsplit(r).netloc] == []
        assert tags == 0
