"""MLE-Dojo's five actions as Inspect tools (``mledojo/gym/env.py`` ``KaggleEnvironment.actions``).

``request_info`` returns one of the competition's info items (or ``all``); ``validate_code``
checks the syntax and runs the code; ``execute_code`` runs the code and grades ``submission.csv``
(validity always; the raw score and the position score (HumanRank), as MLE-Dojo's
``score_mode="position"``, only with ``score_feedback``, since they are test-set scores);
``get_history`` returns the actions so far; ``reset`` clears that history and the best score.
Code runs in the sample's sandbox; grading happens on the host.

Under MLE-Dojo's own rules (``mle_dojo=True``, the default of ``sandmle/dojo``):
``validate_code`` deletes any submission file (``mledojo/gym/interface.py:301-306``), the
environment keeps the best-scoring submission of any ``execute_code`` (``mledojo/gym/env.py:
384-388``; the score stays hidden unless shown) and that one is graded, and every result ends
with the actions and seconds left (``mledojo/agent/mleagent/prompt.py:75-76, 87-88``). The
``sandmle`` variant keeps the earlier submission on ``validate_code`` and grades the last one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.tool import Tool, tool
from inspect_ai.util import sample_limits, sandbox, store

from sandmle.harness.competition import Competition
from sandmle.harness.grading.report import competition_thresholds, report_human_rank
from sandmle.harness.layout import DATA_DIR, SUBMISSION_DIR, SUBMISSION_PATH, WORK_DIR
from sandmle.harness.samples import COMPETITION_ROOT_KEY, competition_for
from sandmle.harness.scorer import grade_sandbox_submission
from sandmle.harness.tools import STORE_ROOT_KEY, command_timeout

INFO_TYPES = (
    "overview",
    "sample_submission",
    "data_structure",
    "data_path",
    "output_path",
    "name",
    "metadata",
)
OUTPUT_CHARS = 4000
TREE_ENTRIES = 60
SCRIPT = f"{WORK_DIR}/dojo_code.py"
BACKUP = f"{WORK_DIR}/.dojo_submission_backup"
HISTORY_KEY = "sandmle:dojo_history"
BEST = f"{WORK_DIR}/.dojo_best_submission"
BEST_KEY = "sandmle:dojo_best"
"""The best execute_code so far: its step and raw score (host side)."""
ACTIONS_KEY = "sandmle:dojo_actions"
REWARDS_KEY = "sandmle:dojo_rewards"
"""One reward per execute_code: its position score when the submission is valid, else 0
(``mledojo/gym/env.py:362-390`` @ 667a8fd, ``score_mode: position``); None where the
competition has no human leaderboards to rank on. Host side, never shown to the agent."""


def _competition() -> Competition:
    return competition_for({COMPETITION_ROOT_KEY: store().get(STORE_ROOT_KEY)})


def _tree(public: Path) -> str:
    paths = sorted(p.relative_to(public).as_posix() for p in public.rglob("*"))
    lines = [f"{DATA_DIR}/{p}" for p in paths[:TREE_ENTRIES]]
    if len(paths) > TREE_ENTRIES:
        lines.append(f"... ({len(paths) - TREE_ENTRIES} more)")
    return "\n".join(lines)


def _sample(competition: Competition) -> Any:
    path = competition.sample_submission_path
    if not path.is_relative_to(competition.public_dir) or not path.is_file():
        return "No sample submission available"
    return pd.read_csv(path, nrows=3).to_dict()


def info_item(competition: Competition, info_type: str) -> Any:
    """One of MLE-Dojo's info items, with paths as the agent's sandbox sees them."""
    config = competition.config
    if info_type == "overview":
        return competition.description_path.read_text(encoding="utf-8")
    if info_type == "sample_submission":
        return _sample(competition)
    if info_type == "data_structure":
        return _tree(competition.public_dir)
    if info_type == "data_path":
        return DATA_DIR
    if info_type == "output_path":
        return SUBMISSION_DIR
    if info_type == "name":
        return competition.id
    lower = competition_thresholds(competition).is_lower_better
    return {
        "category": config.modality,
        "output_type": "submission.csv",
        "higher_is_better": not lower,
    }


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_CHARS else "..." + text[-OUTPUT_CHARS:]


async def run_code(code: str, timeout: int | None) -> dict[str, Any]:
    """Write ``code`` to a script in the sandbox and run it, ``timeout`` seconds at most (None:
    the task's ``command_timeout``); MLE-Dojo's execution record."""
    timeout = command_timeout(timeout)
    try:
        compile(code, "dojo_code.py", "exec")
    except SyntaxError as exc:
        return {"status": "FAILED", "error": "CodeSyntaxError", "details": str(exc)}
    await sandbox().write_file(SCRIPT, code)
    try:
        result = await sandbox().exec(["python3", SCRIPT], cwd=WORK_DIR, timeout=timeout)
    except TimeoutError:
        return {"status": "FAILED", "error": "Timeout", "details": f"ran past {timeout} s"}
    status = "SUCCESS" if result.success else "FAILED"
    return {"status": status, "output": _tail(result.stdout), "error": _tail(result.stderr)}


async def _shell(command: str) -> None:
    await sandbox().exec(["sh", "-c", command])


@tool
def request_info(budget: Budget | None = None) -> Tool:
    async def execute(info_type: str = "all") -> str:
        """Get information about the competition (MLE-Dojo's request_info action).

        Args:
            info_type: One of overview, sample_submission, data_structure, data_path, output_path, name, metadata, or all.

        Returns:
            The requested information as JSON.
        """
        if info_type != "all" and info_type not in INFO_TYPES:
            known = ", ".join((*INFO_TYPES, "all"))
            failed = {"status": "FAILED", "details": f"unknown info_type; use one of {known}"}
            return reply(failed, budget)
        competition = _competition()
        types = INFO_TYPES if info_type == "all" else (info_type,)
        data = {t: info_item(competition, t) for t in types}
        remember("request_info", {"status": "SUCCESS"})
        return reply(
            json.loads(json.dumps({"status": "SUCCESS", "data": data}, default=str)), budget
        )

    return execute


@tool
def validate_code(timeout: int | None = None, budget: Budget | None = None) -> Tool:
    async def execute(code: str) -> str:
        """Check Python code: its syntax, then a run in the sandbox (MLE-Dojo's validate_code).
        Any submission file is deleted afterwards (the best executed one is kept apart).

        Args:
            code: The complete Python program.

        Returns:
            Whether the syntax and the run succeeded, with the run's output.
        """
        if budget is None:  # sandmle's variant: an earlier submission survives
            await _shell(
                f"rm -f {BACKUP}; [ -f {SUBMISSION_PATH} ] && cp {SUBMISSION_PATH} {BACKUP}"
            )
        record = await run_code(code, timeout)
        # MLE-Dojo deletes the file; what is graded is its best executed one, kept in place
        await _shell(f"rm -f {SUBMISSION_PATH}")
        if budget is None:
            await _shell(f"[ -f {BACKUP} ] && mv {BACKUP} {SUBMISSION_PATH}; true")
        else:
            await hand_in_best()
        remember("validate_code", record)
        return reply(record, budget)

    return execute


class Budget:
    """MLE-Dojo's per-turn budget: the actions and seconds left, told after every action."""

    def __init__(self, max_steps: int) -> None:
        self.max_steps = max_steps

    def line(self) -> str:
        taken = int(store().get(ACTIONS_KEY, 0)) + 1
        store().set(ACTIONS_KEY, taken)
        left = max(self.max_steps - taken, 0)
        seconds = sample_time_left()
        time_part = "" if seconds is None else f" You still have {int(seconds)} seconds left."
        return f"You still have {left} actions available.{time_part}"


def sample_time_left() -> float | None:
    try:
        limits = sample_limits()
    except RuntimeError:  # not inside a sample
        return None
    left = [r for r in (limits.time.remaining, limits.working.remaining) if r is not None]
    return max(min(left), 0.0) if left else None


def reply(record: dict[str, Any], budget: Budget | None) -> str:
    if budget is not None:
        record = {**record, "budget": budget.line()}
    return json.dumps(record)


@tool
def execute_code(
    timeout: int | None = None, score_feedback: bool = False, budget: Budget | None = None
) -> Tool:
    async def execute(code: str) -> str:
        """Run Python code that writes /home/submission/submission.csv, then grade that file
        (MLE-Dojo's execute_code).

        Args:
            code: The complete Python program.

        Returns:
            The run's output and whether the submission is valid (with its scores when the
            environment shows them).
        """
        record: dict[str, Any] = {"execution": await run_code(code, timeout), "submission": None}
        score: float | None = None
        rank: float | None = 0.0
        if record["execution"]["status"] == "SUCCESS":
            record["submission"], score, rank = await grade_feedback(_competition(), score_feedback)
        failed = record["submission"] is None or record["submission"]["status"] != "SUCCESS"
        record["status"] = "FAILED" if failed else "SUCCESS"
        store().set(REWARDS_KEY, [*store().get(REWARDS_KEY, []), 0.0 if failed else rank])
        if budget is not None:
            if not failed:
                await keep_if_best(score)
            await hand_in_best()  # the graded file is always the best so far
        remember("execute_code", record)
        return reply(record, budget)

    return execute


async def grade_feedback(
    competition: Competition, score_feedback: bool
) -> tuple[dict[str, Any], float | None, float | None]:
    """The submission part of an execute_code record, the raw score and the position score
    (host side; both shown only with ``score_feedback``)."""
    report = await grade_sandbox_submission(competition)
    if not report.valid_submission:
        failed = {"status": "FAILED", "error": "InvalidSubmissionError"}
        return failed | {"details": report.invalid_reason}, None, 0.0
    rank = report_human_rank(report, competition)
    if not score_feedback:
        return {"status": "SUCCESS", "details": "Submission is valid"}, report.score, rank
    shown = {"status": "SUCCESS", "raw_score": report.score, "position_score": rank}
    return shown, report.score, rank


async def keep_if_best(score: float | None) -> None:
    """Copy the submission aside when it beats the best so far (MLE-Dojo's ``best_code``)."""
    best = store().get(BEST_KEY)
    better = best is None or (
        score is not None and (best["raw_score"] is None or _beats(score, float(best["raw_score"])))
    )
    if better:
        await _shell(f"cp -f {SUBMISSION_PATH} {BEST}")
        store().set(BEST_KEY, {"raw_score": score, "step": int(store().get(ACTIONS_KEY, 0))})


def _beats(score: float, best: float) -> bool:
    lower = competition_thresholds(_competition()).is_lower_better
    return score < best if lower else score > best


async def hand_in_best() -> None:
    """Put the best executed submission at the graded path (none: leave what is there)."""
    if store().get(BEST_KEY) is not None:
        await _shell(f"cp -f {BEST} {SUBMISSION_PATH}")


def remember(action: str, record: dict[str, Any]) -> None:
    """Add an action to the sample's Dojo history (status, error and shown scores only)."""
    history: list[dict[str, Any]] = store().get(HISTORY_KEY, [])
    kept: dict[str, Any] = {k: record[k] for k in ("status", "error") if k in record}
    submission = record.get("submission") or {}
    kept |= {k: submission[k] for k in ("raw_score", "position_score") if k in submission}
    history.append({"step": len(history) + 1, "action": action, **kept})
    store().set(HISTORY_KEY, history)


@tool
def get_history(budget: Budget | None = None) -> Tool:
    async def execute() -> str:
        """Get the history of your actions so far (MLE-Dojo's get_history action).

        Returns:
            The actions taken, each with its status, as JSON.
        """
        history: list[dict[str, Any]] = store().get(HISTORY_KEY, [])
        scored = [h["raw_score"] for h in history if "raw_score" in h]
        data: dict[str, Any] = {"actions": history, "step_count": len(history)}
        if scored:
            data["best_raw_score"] = _best(scored)
        return reply({"status": "SUCCESS", "data": data}, budget)

    return execute


def _best(scores: list[float]) -> float:
    lower = competition_thresholds(_competition()).is_lower_better
    return min(scores) if lower else max(scores)


@tool
def reset(budget: Budget | None = None) -> Tool:
    async def execute() -> str:
        """Reset the environment's history and best score (MLE-Dojo's reset action). Files
        you wrote, including the submission, are kept.

        Returns:
            A confirmation.
        """
        store().set(HISTORY_KEY, [])
        store().set(BEST_KEY, None)
        return reply({"status": "SUCCESS", "feedback": "Environment reset successfully"}, budget)

    return execute


def dojo_tools(
    timeout: int | None = None, score_feedback: bool = False, budget: Budget | None = None
) -> list[Tool]:
    """The five actions; with ``budget``, under MLE-Dojo's own rules (see the module doc).
    A code run gets ``timeout`` seconds (None: the task's ``command_timeout``)."""
    return [
        request_info(budget),
        validate_code(timeout=timeout, budget=budget),
        execute_code(timeout=timeout, score_feedback=score_feedback, budget=budget),
        get_history(budget),
        reset(budget),
    ]
