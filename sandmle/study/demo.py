"""``sandmle demo``: what sandmle is for, offline, in a few minutes on 2 cores.

Generates (or reuses) the built-in synthetic pack, evaluates the reference policies under
every scaffold with Inspect, prints the leaderboard, writes the HTML export and names the
command that opens the Streamlit app. It is a study like any other, so a second run reuses
finished work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import pandas as pd
import yaml
from rich.console import Console

from sandmle.errors import SandmleError
from sandmle.leaderboard.logs import load_logs
from sandmle.leaderboard.stats import MIN_DECIDABLE
from sandmle.leaderboard.tables import leaderboard_table
from sandmle.specs.study import BenchmarkEntry, ModelEntry, ScaffoldEntry, StudyConfig
from sandmle.study.report import write_report
from sandmle.study.runner import run_study

DEMO_MODELS = ("sandmle/heuristic", "sandmle/sample-submission")
SCAFFOLDS = ("aide", "react", "aira_greedy", "aira_mcts", "aira_evo")
"""The demo's default order: a tree scaffold first, so even a demo cut short by its time limit
shows search-tree nodes and their code in its export (under load AIDE's two steps cost about
what ReAct's one run does)."""
DEFAULT_TIME_LIMIT_S = 420
"""The demo's default budget: no scaffold starts unless it is expected to end within it, so
the demo ends within 10 minutes on 2 loaded cores (bench/demo_under_load.py)."""
HEADROOM = 1.25
"""A scaffold is expected to take this times the longest one so far (tree scaffolds run more)."""
PACK_FILE = "pack.yaml"
DEMO_STEPS = 2
"""Search steps per tree scaffold in the demo (their defaults are 20 and more)."""


def demo_steps(scaffold: str) -> dict[str, int]:
    """``DEMO_STEPS`` solutions: aira-dojo's blank root takes one more step, and its evo
    finishes a generation before it checks the steps."""
    if scaffold == "aide":
        return {"steps": DEMO_STEPS}
    if scaffold == "aira_evo":
        return {"steps": DEMO_STEPS + 1, "individuals_per_generation": DEMO_STEPS}
    return {"steps": DEMO_STEPS + 1}


def demo_tasks(pack: Path) -> list[str]:
    """Every task of the pack, modalities interleaved (the pack's order).

    All 12: the paired test needs at least ``MIN_DECIDABLE`` (6) shared competitions before
    any outcome can be significant, so with the first task of each modality (5) no pair of
    the demo could ever be told apart.
    """
    index = yaml.safe_load((pack / PACK_FILE).read_text(encoding="utf-8")) or {}
    return [str(entry["id"]) for entry in index.get("tasks", [])]


def demo_study(
    pack: Path,
    log_dir: Path,
    full: bool = False,
    tasks: list[str] | None = None,
    warm_python: bool = True,
    scaffolds: Sequence[str] = SCAFFOLDS,
) -> StudyConfig:
    """The demo's matrix: reference policies × the scaffolds × the built-in pack."""
    entries = [ScaffoldEntry(solver=name, args={} if full or name == "react" else demo_steps(name))
               for name in scaffolds]  # fmt: skip
    task_args: dict = {"pack": str(pack)}
    if not warm_python:  # the default (on) stays out of the args, so earlier logs still resume
        task_args["warm_python"] = False
    chosen = tasks or ([] if full else demo_tasks(pack))
    if chosen:
        task_args["tasks"] = ",".join(chosen)
    return StudyConfig(
        name="demo",
        log_dir=str(log_dir),
        models=[ModelEntry(model=m) for m in DEMO_MODELS],
        scaffolds=entries,
        benchmarks=[BenchmarkEntry(task="synthetic", args=task_args)],
        max_samples=2,
        max_tasks=2,
    )


def run_demo(
    log_dir: Path,
    full: bool = False,
    tasks: list[str] | None = None,
    console: Console | None = None,
    warm_python: bool = True,
    scaffolds: Sequence[str] = SCAFFOLDS,
    task_count: int | None = None,
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
) -> bool:
    """Run (or resume) the demo and report; True when every cell that ran finished.

    With ``time_limit_s``, a scaffold starts only if it is expected to end in time; the
    table is then partial and a line names the scaffolds not run (a rerun resumes them).
    Raises ``SandmleError`` (one line) when no eval finished or a reference check fails.
    """
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

    deadline = None if not time_limit_s else time.monotonic() + time_limit_s
    console = console or Console()
    with console.status("built-in pack: generating or verifying ..."):
        pack = builtin_pack_dir()
    console.print(f"built-in pack: {pack}")
    chosen = tasks or demo_tasks(pack)[:task_count]
    study = demo_study(pack, log_dir, full, chosen, warm_python, scaffolds)
    models = " and ".join(DEMO_MODELS)
    console.print(
        f"evaluating {models}\nunder {len(scaffolds)} scaffold(s) on {len(chosen)} task(s)"
    )
    console.print(f"logs: {log_dir}")
    total = len(chosen) * len(study.models) * len(study.scaffolds)
    plain = not console.is_terminal  # Inspect's display is for terminals: progress lines instead
    with ProgressLines(log_dir, total, console, enabled=plain):
        ok, skipped = run_scaffolds(
            study, deadline, partial(run_study, display="none" if plain else None)
        )
    loaded = load_logs([log_dir])
    if loaded.runs.empty:
        raise SandmleError(
            f"demo failed: no eval finished under {log_dir} (`inspect view --log-dir {log_dir}` "
            "shows why)"
        )
    html = write_report(log_dir, console)
    console.print(f"HTML report: {html}")
    console.print(f"open the app: [bold]sandmle leaderboard {log_dir}[/bold]")
    for line in missing_lines(skipped, time_limit_s):
        console.print(line, highlight=False)
    cells = len(study.models) * (len(study.scaffolds) - len(skipped)) * len(study.benchmarks)
    problems = reference_problems(loaded.samples, cells - len(loaded.runs))
    if problems:
        raise SandmleError("demo reference check failed: " + "; ".join(problems))
    return ok


def scaffold_study(study: StudyConfig, scaffold: ScaffoldEntry) -> StudyConfig:
    """One scaffold's cells, logged in a folder of their own.

    Inspect's ``eval_set`` refuses a log dir that holds logs of other tasks, so each scaffold
    (run on its own, to stop between scaffolds) needs its own.
    """
    log_dir = str(study.resolved_log_dir() / scaffold.solver)
    return study.model_copy(update={"scaffolds": [scaffold], "log_dir": log_dir})


def run_scaffolds(
    study: StudyConfig,
    deadline: float | None,
    run: Callable[[StudyConfig], bool] = run_study,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[bool, list[str]]:
    """Each scaffold in turn until the next is not expected to end by ``deadline``.

    Returns whether every scaffold run finished, and the scaffolds not run. The first
    always runs, so a demo always has something to show.
    """
    ok, longest = True, 0.0
    names = [entry.solver for entry in study.scaffolds]
    for index, entry in enumerate(study.scaffolds):
        if index and deadline is not None and clock() + longest * HEADROOM > deadline:
            return ok, names[index:]
        started = clock()
        ok = run(scaffold_study(study, entry)) and ok
        longest = max(longest, clock() - started)
    return ok, []


def missing_lines(skipped: list[str], time_limit_s: float | None) -> list[str]:
    """What a demo cut short by its time limit lacks, in lines of at most 80 columns."""
    if not skipped:
        return []
    return [
        f"missing: {', '.join(skipped)} (not run: the time limit,",
        f"{time_limit_s:g} s, was near); the table above lacks them.",
        "Run the same command again to add them (finished work is reused),",
        "or give more time with --time-limit.",
    ]


PROGRESS_EVERY_S = 20.0
"""Without a terminal (Inspect's live display needs one) a progress line this often."""


def samples_done(log_dir: Path) -> int:
    """Sample-epochs the logs under ``log_dir`` hold so far (finished or still being written)."""
    from inspect_ai.log import list_eval_logs, read_eval_log_sample_summaries

    done = 0
    for info in list_eval_logs(str(log_dir)) if log_dir.exists() else []:
        try:
            done += len(read_eval_log_sample_summaries(info.name))
        except Exception:  # noqa: BLE001 - a log being written may not read yet: count it later
            continue
    return done


class ProgressLines:
    """Prints ``progress: 14/120 samples, 1:40 elapsed`` every ``PROGRESS_EVERY_S`` seconds."""

    def __init__(self, log_dir: Path, total: int, console: Console, enabled: bool) -> None:
        self.log_dir, self.total, self.console, self.enabled = log_dir, total, console, enabled
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._start = time.monotonic()

    def line(self) -> str:
        minutes, seconds = divmod(int(time.monotonic() - self._start), 60)
        done = min(samples_done(self.log_dir), self.total)
        return f"progress: {done}/{self.total} samples, {minutes}:{seconds:02d} elapsed"

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_EVERY_S):
            self.console.print(self.line(), highlight=False)

    def __enter__(self) -> ProgressLines:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.enabled:
            self._thread.join(timeout=5)
            self.console.print(self.line(), highlight=False)


def _first_line(text: object, limit: int = 160) -> str:
    line = next(iter(str(text).strip().splitlines()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def reference_problems(samples: pd.DataFrame, unfinished: int = 0) -> list[str]:
    """What is wrong with a demo's results, each in a few words; empty when all is well.

    The demo's two policies are references: every sample must be graded (an error is a
    broken sandbox or harness, not a policy's failure), and the heuristic must win more
    medals than handing in the sample submission.
    """
    problems = []
    if unfinished:
        problems.append(f"{unfinished} eval(s) did not finish")
    errored = samples[~samples["scored"].astype(bool) | samples["error"].notna()]
    if len(errored):
        first = errored.iloc[0]
        reason = _first_line(first["error"] or first["invalid_reason"])
        problems.append(
            f"{len(errored)} of {len(samples)} samples errored "
            f"(first: {first['scaffold']} on {first['competition_id']}: {reason})"
        )
    rates = samples.groupby("model")["any_medal"].mean()
    heuristic, floor = (rates.get(model, float("nan")) for model in DEMO_MODELS)
    if not heuristic > floor:
        problems.append(
            f"{DEMO_MODELS[0]} any-medal {heuristic:.0%} is not above {DEMO_MODELS[1]} {floor:.0%}"
        )
    elif samples["competition_id"].nunique() >= MIN_DECIDABLE:
        problems += _rank_problems(samples)
    return problems


def _rank_problems(samples: pd.DataFrame) -> list[str]:
    """The heuristic must rank strictly above the floor under every pair of scaffolds."""
    table = leaderboard_table(samples)
    rank = table["rank"].str.rstrip("=").astype(int)
    best_floor = rank[table["model"] == DEMO_MODELS[1]].min()
    behind = table[(table["model"] == DEMO_MODELS[0]) & (rank >= best_floor)]
    return [
        f"{DEMO_MODELS[0]} · {row.scaffold} ranks {row.rank}, not above {DEMO_MODELS[1]}"
        for row in behind.itertuples()
    ]
