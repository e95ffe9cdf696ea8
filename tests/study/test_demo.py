"""The demo end to end (one task of the built-in pack), and its HTML report in a real browser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sandmle.harness.scorer import FLAGS
from sandmle.specs.study import StudyConfig
from sandmle.study.demo import (
    SCAFFOLDS,
    demo_study,
    demo_tasks,
    missing_lines,
    reference_problems,
    run_scaffolds,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


def _first_task(index: int = 0) -> str:
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

    return demo_tasks(builtin_pack_dir())[index]


MEDAL_TASK = 5
"""A built-in task (alloy-lab-005) the heuristic medals on under ReAct (generator 0.5.1, seen in
a full demo): a one-task demo passes its reference check only where the heuristic wins a medal."""


def _demo(log_dir: Path, task: int = MEDAL_TASK, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sandmle.cli",
            "demo",
            "--log-dir",
            str(log_dir),
            "--task",
            _first_task(task),
            "--time-limit",
            "0",  # every scaffold runs, however busy the machine
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "120", **env},
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
    assert len(list(log_dir.rglob("*.eval"))) == 10  # 2 policies x 5 scaffolds
    assert {p.parent.name for p in log_dir.rglob("*.eval")} == set(SCAFFOLDS)


def test_demo_twice_reuses_finished_work(demo_run: tuple[Path, str]) -> None:
    log_dir, _ = demo_run
    before = sorted(log_dir.rglob("*.eval"))
    assert _demo(log_dir).returncode == 0
    assert sorted(log_dir.rglob("*.eval")) == before


def test_demo_in_a_log_dir_of_other_evals_fails_in_one_line_and_keeps_them(
    demo_run: tuple[Path, str], tmp_path: Path
) -> None:
    other = tmp_path / "logs"
    shutil.copytree(demo_run[0], other)
    before = {p.name: p.read_bytes() for p in other.rglob("*.eval")}
    assert len(before) == 10
    proc = _demo(other, task=1)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: log dir {other} holds logs of other evals"), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert {p.name: p.read_bytes() for p in other.rglob("*.eval")} == before


def test_default_demo_log_dir_follows_the_pack_version() -> None:
    from sandmle.benchmarks.synthetic.blueprint import GENERATOR_VERSION
    from sandmle.cli import default_demo_log_dir

    assert default_demo_log_dir(False) == Path("logs") / f"demo-{GENERATOR_VERSION}"
    assert default_demo_log_dir(True) == Path("logs") / f"demo-{GENERATOR_VERSION}-full"


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


def test_demo_report_and_app_show_the_same_pairs_table(
    demo_run: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's own HTML report and the app over the demo's logs: the same pairs table,
    row for row (the export is the app, not a second opinion)."""
    from streamlit.testing.v1 import AppTest

    from sandmle.leaderboard import cli
    from sandmle.leaderboard.export import _table_html

    log_dir = demo_run[0]
    monkeypatch.setattr(sys, "argv", [str(cli.APP_FILE), str(log_dir)])
    app = AppTest.from_file(str(cli.APP_FILE), default_timeout=120).run()
    assert not app.exception, app.exception
    shown = next(d.value for d in app.dataframe if "verdict" in d.value.columns)
    assert len(shown) == 15  # 10 entrants: every pair of the six best ranked
    assert shown["verdict"].str.len().gt(0).all()  # one task: "too few ... to decide" each
    assert _table_html(shown) in (log_dir / "report.html").read_text(encoding="utf-8")


def _samples(**columns: list) -> pd.DataFrame:
    base = {
        "model": ["sandmle/heuristic", "sandmle/sample-submission"],
        "scaffold": ["react", "react"],
        "competition_id": ["c", "c"],
        "scored": [True, True],
        "error": [None, None],
        "invalid_reason": [None, None],
        "any_medal": [1.0, 0.0],
    }
    return pd.DataFrame(base | columns)


def test_reference_checks() -> None:
    assert reference_problems(_samples()) == []
    (tie,) = reference_problems(_samples(any_medal=[0.0, 0.0]))
    assert tie == "sandmle/heuristic any-medal 0% is not above sandmle/sample-submission 0%"
    errored = _samples(scored=[True, False], error=[None, "RuntimeError: no python\nmore"])
    (problem,) = reference_problems(errored)
    assert problem == "1 of 2 samples errored (first: react on c: RuntimeError: no python)"
    assert reference_problems(_samples(), unfinished=3) == ["3 eval(s) did not finish"]


def test_reference_check_needs_a_strictly_higher_rank_from_six_competitions() -> None:
    def sweep(floor_medals: list[float]) -> pd.DataFrame:
        n = len(floor_medals)
        return pd.DataFrame(
            {
                "model": ["sandmle/heuristic"] * n + ["sandmle/sample-submission"] * n,
                "scaffold": "react", "benchmark": "synthetic", "log": "l",
                "competition_id": [f"c{i}" for i in range(n)] * 2, "epoch": 1,
                "scored": True, "error": None, "invalid_reason": None, "checkpoint_step": None,
                "created": pd.Timestamp("2026-01-01", tz="UTC"), "human_rank": float("nan"),
                **{flag: [1.0] * n + floor_medals for flag in FLAGS},
            }
        )  # fmt: skip

    assert reference_problems(sweep([0.0] * 6)) == []  # 6 of 6: p = 0.031, ranks 1 and 2
    (problem,) = reference_problems(sweep([0.0] * 5 + [1.0] * 3))  # 5 of 8 won: p = 0.0625
    assert problem == "sandmle/heuristic · react ranks 1=, not above sandmle/sample-submission"


def test_demo_runs_every_task_of_the_builtin_pack() -> None:
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

    tasks = demo_tasks(builtin_pack_dir())
    assert len(tasks) == 12 and len(set(tasks)) == 12


def _failing_bwrap(folder: Path) -> dict[str, str]:
    """A ``bwrap`` first on PATH that fails as an unprivileged container's does."""
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.parametrize("broken", ["agent_python", "bwrap"])
def test_demo_with_a_broken_sandbox_fails_in_one_line(tmp_path: Path, broken: str) -> None:
    if broken == "agent_python":
        env = {"SANDMLE_AGENT_PYTHON": "/nonexistent/python3"}
    else:
        env = _failing_bwrap(tmp_path / "bin")
    proc = _demo(tmp_path / "logs", **env)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: "), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    print(last)


def test_progress_lines_without_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import time

    from rich.console import Console

    from sandmle.study import demo

    monkeypatch.setattr(demo, "PROGRESS_EVERY_S", 0.2)
    out = io.StringIO()
    console = Console(file=out, width=80)  # a file: not a terminal
    with demo.ProgressLines(tmp_path, 120, console, enabled=not console.is_terminal):
        time.sleep(0.5)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(line.startswith("progress: 0/120 samples") for line in lines)
    quiet = io.StringIO()
    with demo.ProgressLines(tmp_path, 1, Console(file=quiet), enabled=False):
        time.sleep(0.3)
    assert quiet.getvalue() == ""


def test_a_demo_out_of_time_writes_the_partial_table_and_names_what_is_missing(
    tmp_path: Path,
) -> None:
    log_dir = tmp_path / "logs"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # `> out.txt`
    proc = subprocess.run(
        [sys.executable, "-m", "sandmle.cli", "demo", "--log-dir", str(log_dir),
         "--task", _first_task(MEDAL_TASK), "--scaffolds", "react,aide", "--time-limit", "1"],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    table = proc.stdout[: proc.stdout.index("HTML report")]  # its title may wrap: no anchor
    rows = [line for line in table.splitlines() if " · " in line]
    assert len(rows) == 2 and all(" · react " in row for row in rows), rows  # the first runs
    assert "aide" not in table
    assert [line for line in lines if line.startswith("missing:")] == [
        "missing: aide (not run: the time limit,"
    ]
    assert (log_dir / "report.html").is_file()
    assert not (log_dir / "aide").exists()
    assert any(line.startswith("progress: 2/4 samples") for line in lines)  # no terminal


def _study(scaffolds: tuple[str, ...] = SCAFFOLDS) -> StudyConfig:
    return demo_study(Path("pack"), Path("logs"), tasks=["t1"], scaffolds=scaffolds)


def test_scaffolds_run_in_turn_until_the_next_would_end_after_the_deadline() -> None:
    now = [0.0]
    ran: list[tuple[str, str]] = []

    def run(study: StudyConfig) -> bool:
        (entry,) = study.scaffolds
        ran.append((entry.solver, str(study.log_dir)))
        now[0] += 100.0  # every scaffold takes 100 s
        return True

    ok, skipped = run_scaffolds(_study(), deadline=330.0, run=run, clock=lambda: now[0])
    # at 200 s a third (expected 125 s) would end at 325 s; at 300 s a fourth would not
    assert ok and skipped == ["aira_mcts", "aira_evo"]
    assert ran == [(name, str(Path("logs") / name)) for name in SCAFFOLDS[:3]]
    ran.clear()
    ok, skipped = run_scaffolds(_study(), deadline=1.0, run=run, clock=lambda: now[0])
    assert skipped == list(SCAFFOLDS[1:]) and [name for name, _ in ran] == [SCAFFOLDS[0]]
    ran.clear()
    ok, skipped = run_scaffolds(_study(), deadline=None, run=run, clock=lambda: now[0])
    assert skipped == [] and len(ran) == 5


def test_a_failed_scaffold_fails_the_demo_and_the_rest_still_run() -> None:
    calls = iter([True, False, True])
    ok, skipped = run_scaffolds(
        _study(("react", "aide", "aira_greedy")), None, run=lambda _: next(calls)
    )
    assert not ok and skipped == []


def test_missing_lines_fit_80_columns() -> None:
    lines = missing_lines(list(SCAFFOLDS[1:]), 86_400)
    assert lines[0].startswith("missing: react, aira_greedy, aira_mcts, aira_evo")
    assert all(len(line) <= 80 for line in lines)
    assert missing_lines([], 420) == []


def test_demo_study_takes_the_chosen_scaffolds_and_tasks() -> None:
    study = demo_study(Path("pack"), Path("logs"), tasks=["a", "b"], scaffolds=["aide", "react"])
    assert [entry.solver for entry in study.scaffolds] == ["aide", "react"]
    assert study.scaffolds[0].args == {"steps": 2} and study.scaffolds[1].args == {}
    assert study.benchmarks[0].args["tasks"] == "a,b"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scaffolds", "react,nope"], "--scaffolds"),
        (["--scaffolds", "react,react"], "--scaffolds"),
        (["--tasks", "3", "--task", "alloy-lab-005"], "not both"),
        (["--tasks", "13"], "--tasks"),
        (["--time-limit", "-1"], "--time-limit"),
    ],
)
def test_demo_rejects_bad_budgets_before_running(args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from sandmle.cli import app

    result = CliRunner().invoke(app, ["demo", *args], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


def test_demo_scaffolds_keep_the_order_given() -> None:
    from sandmle.cli import demo_scaffolds

    assert demo_scaffolds(" aira_evo, react ") == ["aira_evo", "react"]
    assert SCAFFOLDS[0] == "aide"  # a tree scaffold first: a cut-short demo still shows nodes
