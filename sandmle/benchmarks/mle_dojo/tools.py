"""MLE-Dojo's five actions as Inspect tools (``mledojo/gym/env.py`` ``KaggleEnvironment.actions``).

``request_info`` returns one of the competition's info items (or ``all``); ``validate_code``
checks the syntax, runs the code, and removes any submission it wrote; ``execute_code`` runs the
code and grades ``submission.csv`` (validity always; the raw score and the position score
(HumanRank), as MLE-Dojo's ``score_mode="position"``, only with ``score_feedback``, since they
are test-set scores); ``get_history`` returns the actions so far; ``reset`` clears that history
and the best score. Code runs in the sample's sandbox; grading happens on the host.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.tool import Tool, tool
from inspect_ai.util import sandbox, store

from sandmle.harness.competition import Competition
from sandmle.harness.grading.report import competition_thresholds, report_human_rank
from sandmle.harness.layout import DATA_DIR, SUBMISSION_DIR, SUBMISSION_PATH, WORK_DIR
from sandmle.harness.samples import COMPETITION_ROOT_KEY, competition_for
from sandmle.harness.scorer import grade_sandbox_submission
from sandmle.harness.tools import STORE_ROOT_KEY

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


async def run_code(code: str, timeout: int) -> dict[str, Any]:
    """Write ``code`` to a script in the sandbox and run it; MLE-Dojo's execution record."""
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
def request_info() -> Tool:
    async def execute(info_type: str = "all") -> str:
        """Get information about the competition (MLE-Dojo's request_info action).

        Args:
            info_type: One of overview, sample_submission, data_structure, data_path, output_path, name, metadata, or all.

        Returns:
            The requested information as JSON.
        """
        if info_type != "all" and info_type not in INFO_TYPES:
            known = ", ".join((*INFO_TYPES, "all"))
            return json.dumps(
                {"status": "FAILED", "details": f"unknown info_type; use one of {known}"}
            )
        competition = _competition()
        types = INFO_TYPES if info_type == "all" else (info_type,)
        data = {t: info_item(competition, t) for t in types}
        remember("request_info", {"status": "SUCCESS"})
        return json.dumps({"status": "SUCCESS", "data": data}, default=str)

    return execute


@tool
def validate_code(timeout: int = 600) -> Tool:
    async def execute(code: str) -> str:
        """Check Python code: its syntax, then a run in the sandbox (MLE-Dojo's validate_code).
        A submission file the run writes is discarded; an earlier one is kept.

        Args:
            code: The complete Python program.

        Returns:
            Whether the syntax and the run succeeded, with the run's output.
        """
        await _shell(f"rm -f {BACKUP}; [ -f {SUBMISSION_PATH} ] && cp {SUBMISSION_PATH} {BACKUP}")
        record = await run_code(code, timeout)
        await _shell(
            f"rm -f {SUBMISSION_PATH}; [ -f {BACKUP} ] && mv {BACKUP} {SUBMISSION_PATH}; true"
        )
        remember("validate_code", record)
        return json.dumps(record)

    return execute


@tool
def execute_code(timeout: int = 600, score_feedback: bool = False) -> Tool:
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
        if record["execution"]["status"] == "SUCCESS":
            record["submission"] = await grade_feedback(_competition(), score_feedback)
        failed = record["submission"] is None or record["submission"]["status"] != "SUCCESS"
        record["status"] = "FAILED" if failed else "SUCCESS"
        remember("execute_code", record)
        return json.dumps(record)

    return execute


async def grade_feedback(competition: Competition, score_feedback: bool) -> dict[str, Any]:
    """The submission part of an execute_code record."""
    report = await grade_sandbox_submission(competition)
    if not report.valid_submission:
        return {
            "status": "FAILED",
            "error": "InvalidSubmissionError",
            "details": report.invalid_reason,
        }
    if not score_feedback:
        return {"status": "SUCCESS", "details": "Submission is valid"}
    rank = report_human_rank(report, competition)
    return {"status": "SUCCESS", "raw_score": report.score, "position_score": rank}


def remember(action: str, record: dict[str, Any]) -> None:
    """Add an action to the sample's Dojo history (status, error and shown scores only)."""
    history: list[dict[str, Any]] = store().get(HISTORY_KEY, [])
    kept: dict[str, Any] = {k: record[k] for k in ("status", "error") if k in record}
    submission = record.get("submission") or {}
    kept |= {k: submission[k] for k in ("raw_score", "position_score") if k in submission}
    history.append({"step": len(history) + 1, "action": action, **kept})
    store().set(HISTORY_KEY, history)


@tool
def get_history() -> Tool:
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
        return json.dumps({"status": "SUCCESS", "data": data})

    return execute


def _best(scores: list[float]) -> float:
    lower = competition_thresholds(_competition()).is_lower_better
    return min(scores) if lower else max(scores)


@tool
def reset() -> Tool:
    async def execute() -> str:
        """Reset the environment's history and best score (MLE-Dojo's reset action). Files
        you wrote, including the submission, are kept.

        Returns:
            A confirmation.
        """
        store().set(HISTORY_KEY, [])
        return json.dumps({"status": "SUCCESS", "feedback": "Environment reset successfully"})

    return execute


def dojo_tools(command_timeout: int = 600, score_feedback: bool = False) -> list[Tool]:
    return [
        request_info(),
        validate_code(timeout=command_timeout),
        execute_code(timeout=command_timeout, score_feedback=score_feedback),
        get_history(),
        reset(),
    ]
