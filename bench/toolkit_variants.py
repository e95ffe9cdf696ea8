"""Each toolkit option's grade on a pack: what a policy that always calls ``python automl.py
OPTION`` (the task toolkit, ``-T toolkit=true``) earns, before any training.

The toolkit teacher (``sandmle/toolkit``) hands in a mix of these options; GRPO can only
prefer an option that earns more reward, so this table says what there is to learn. The
program runs on the host against each task's public dir (the same text the sandbox gets) and
the real grader grades the file. Prints JSON: per option, valid / above-median / medal counts
and seconds per run, by modality and overall; the best fixed option against the per-task
oracle (``choice``: whether reading the task is worth anything), and the same in GRPO's dense
reward (``reward``); with ``--tokenizer DIR``, the
tokens of each option's rendered tool call. An option is the call's arguments: the toolkit's
families (``table``, ``images``...), or any other arguments the program takes (``"table 1"``).

Usage: python bench/toolkit_variants.py PACK_DIR [--options table,text,...] [--tokenizer DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from sandmle.env.rewards import TIER_FLAGS, total_reward
from sandmle.harness.automl_program import toolkit_command, toolkit_source
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.pack import load_pack
from sandmle.policies.toolkit import OPTIONS
from sandmle.specs.training import RewardSettings

TIMEOUT_S = 300


def run_option(program: Path, public: Path, out: Path, option: str) -> tuple[bool, float]:
    """Run the program with ``option``'s arguments on one task's public dir; (exited 0, s)."""
    env = {**os.environ, "SANDMLE_DATA_DIR": str(public), "SANDMLE_SUBMISSION_DIR": str(out)}
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(program), *option.split()],
            env=env,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:  # a run the sandbox's clock would end too: no file
        (out / "submission.csv").unlink(missing_ok=True)
        return False, time.perf_counter() - start
    return done.returncode == 0, time.perf_counter() - start


def dense_reward(flags: dict[str, bool]) -> float:
    """The dense training reward of a one-call episode with these grade flags (no reasoning
    block, so no format share): what GRPO pays for calling this option on this task."""
    medal = {flag: float(value) for flag, value in flags.items()}
    [reward] = total_reward(RewardSettings(), ["…"], medal=[medal], assistant_turns=[[]])
    return float(reward or 0.0)


def measure(pack_dir: Path, options: list[str]) -> list[dict]:
    """One row per task and option: its modality, grade flags and seconds."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "automl.py"
        program.write_text(toolkit_source(), encoding="utf-8")
        for competition in load_pack(pack_dir).competitions:
            for index, option in enumerate(options):
                out = Path(tmp) / f"{competition.id}-{index}"
                out.mkdir()
                ok, seconds = run_option(program, competition.public_dir, out, option)
                report = grade_csv(out / "submission.csv", competition)
                flags = {f: getattr(report, f) for f in ("valid_submission", *TIER_FLAGS)}
                rows.append(
                    {
                        "task": competition.id,
                        "modality": competition.config.modality,
                        "option": option,
                        "exit_ok": ok,
                        "valid": report.valid_submission,
                        "above_median": report.valid_submission and report.above_median,
                        "medal": report.valid_submission and report.any_medal,
                        "seconds": round(seconds, 2),
                        "reward": dense_reward(flags),
                    }
                )
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def summarise(rows: list[dict]) -> dict:
    """Counts per option, overall and by modality."""
    groups: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        groups["all"][row["option"]].append(row)
        groups[row["modality"]][row["option"]].append(row)
    return {
        group: {
            option: {
                "n": len(items),
                "valid": sum(r["valid"] for r in items),
                "above_median": sum(r["above_median"] for r in items),
                "medal": sum(r["medal"] for r in items),
                "mean_seconds": round(sum(r["seconds"] for r in items) / len(items), 2),
                "max_seconds": max(r["seconds"] for r in items),
                "mean_reward": _mean_reward(items),
            }
            for option, items in by_option.items()
        }
        for group, by_option in groups.items()
    }


def _mean_reward(rows: list[dict]) -> float | None:
    """Mean dense reward (``None`` for rows measured before the bench recorded it)."""
    rewards = [r["reward"] for r in rows if "reward" in r]
    return round(sum(rewards) / len(rewards), 3) if rewards else None


ORACLE_MARGIN = 15
"""Points above-median by which the per-task oracle must beat the best fixed option (issue #52:
a toolkit where the best choice depends on the task)."""
FIXED_GAP = 10
"""Points every fixed option must stay below the oracle (no one command nearly as good)."""


def choice_value(rows: list[dict]) -> dict:
    """Above-median % of each fixed option, of the best fixed one and of the per-task oracle
    (the best option for each task, known only in hindsight), and whether the design holds:
    what a policy gains by reading the task, over always calling the same command."""
    tasks: dict[str, dict[str, bool]] = defaultdict(dict)
    for row in rows:
        tasks[row["task"]][row["option"]] = bool(row["above_median"])
    options = list(dict.fromkeys(row["option"] for row in rows))
    n = max(len(tasks), 1)
    fixed = {o: round(100 * sum(t.get(o, False) for t in tasks.values()) / n, 1) for o in options}
    oracle = round(100 * sum(any(t.values()) for t in tasks.values()) / n, 1)
    best = max(fixed, key=lambda o: fixed[o])
    return {
        "tasks": len(tasks),
        "fixed_above_median_pct": fixed,
        "best_fixed": {"option": best, "above_median_pct": fixed[best]},
        "oracle_above_median_pct": oracle,
        "oracle_minus_best_fixed": round(oracle - fixed[best], 1),
        "design_holds": oracle - fixed[best] >= ORACLE_MARGIN
        and all(oracle - pct >= FIXED_GAP for pct in fixed.values()),
    }


def reward_value(rows: list[dict]) -> dict:
    """The same choice in GRPO's currency: each fixed option's mean dense reward per task and
    the oracle's. An option valid almost everywhere earns the valid share on every task, so a
    policy unsure of the modality gains less from guessing a family than this gap says."""
    tasks: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        tasks[row["task"]][row["option"]] = row["reward"]
    n = max(len(tasks), 1)
    options = list(dict.fromkeys(row["option"] for row in rows))
    fixed = {o: round(sum(t.get(o, 0.0) for t in tasks.values()) / n, 3) for o in options}
    oracle = round(sum(max(t.values()) for t in tasks.values()) / n, 3)
    best = max(fixed, key=lambda o: fixed[o])
    return {
        "fixed_mean_reward": fixed,
        "best_fixed": {"option": best, "mean_reward": fixed[best]},
        "oracle_mean_reward": oracle,
    }


def token_lengths(tokenizer_dir: str, options: list[str]) -> dict[str, int]:
    """Tokens of each option's tool call as the Hermes template renders it."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    lengths = {}
    for option in options:
        command = toolkit_command(option)
        call = json.dumps({"name": "bash", "arguments": {"cmd": command}})
        lengths[option] = len(tokenizer(f"<tool_call>\n{call}\n</tool_call>")["input_ids"])
    return lengths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", type=Path)
    parser.add_argument("--options", default=",".join(OPTIONS))
    parser.add_argument("--tokenizer", default=None)
    args = parser.parse_args()
    options = [v.strip() for v in args.options.split(",") if v.strip()]
    rows = measure(args.pack, options)
    result: dict = {"pack": str(args.pack), "tasks": len(rows) // len(options)}
    result["options"] = summarise(rows)
    result["choice"] = choice_value(rows)
    result["reward"] = reward_value(rows)
    if args.tokenizer:
        result["tokens"] = token_lengths(args.tokenizer, options)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
