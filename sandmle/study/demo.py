"""``sandmle demo``: what sandmle is for, offline, in a few minutes on 2 cores.

Generates (or reuses) the built-in synthetic pack, evaluates the reference policies under
every scaffold with Inspect, prints the leaderboard, writes the HTML export and names the
command that opens the Streamlit app. It is a study like any other, so a second run reuses
finished work.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from sandmle.study.config import BenchmarkEntry, ModelEntry, ScaffoldEntry, StudyConfig
from sandmle.study.report import write_report
from sandmle.study.runner import run_study

DEMO_MODELS = ("sandmle/heuristic", "sandmle/sample-submission")
TREE_SCAFFOLDS = ("aide", "aira_greedy", "aira_mcts", "aira_evo")
DEMO_TASKS = ("loan-desk-000", "field-notes-001", "road-damage-002", "kiosk-sales-003")
"""One task per modality of the built-in pack keeps the demo within minutes."""
DEMO_STEPS = 2
"""Search steps per tree scaffold in the demo (their defaults are 20 and more)."""


def demo_study(
    pack: Path, log_dir: Path, full: bool = False, tasks: list[str] | None = None
) -> StudyConfig:
    """The demo's matrix: reference policies × the five scaffolds × the built-in pack."""
    steps = {} if full else {"steps": DEMO_STEPS}
    scaffolds = [ScaffoldEntry(solver="react")]
    scaffolds += [ScaffoldEntry(solver=name, args=steps) for name in TREE_SCAFFOLDS]
    task_args: dict = {"pack": str(pack)}
    chosen = tasks or ([] if full else list(DEMO_TASKS))
    if chosen:
        task_args["tasks"] = ",".join(chosen)
    return StudyConfig(
        name="demo",
        log_dir=str(log_dir),
        models=[ModelEntry(model=m) for m in DEMO_MODELS],
        scaffolds=scaffolds,
        benchmarks=[BenchmarkEntry(task="synthetic", args=task_args)],
        max_samples=2,
        max_tasks=2,
    )


def run_demo(
    log_dir: Path,
    full: bool = False,
    tasks: list[str] | None = None,
    console: Console | None = None,
) -> bool:
    """Run (or resume) the demo and report; True when every cell finished."""
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

    console = console or Console()
    with console.status("built-in pack: generating or verifying ..."):
        pack = builtin_pack_dir()
    console.print(f"built-in pack: {pack}")
    console.print(f"evaluating {', '.join(DEMO_MODELS)} under 5 scaffolds; logs in {log_dir}")
    ok = run_study(demo_study(pack, log_dir, full, tasks))
    html = write_report(log_dir, console)
    console.print(f"HTML report: {html}")
    console.print(f"open the app: [bold]sandmle leaderboard {log_dir}[/bold]")
    return ok
