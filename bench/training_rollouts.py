"""Rollout throughput and the anatomy of a GRPO step, on this machine. Prints JSON.

1. Episodes and environment steps (tool calls) per minute, by number of parallel sandboxes,
   with the heuristic policy (``sandmle/heuristic``, skipped when absent) and with the tiny
   local model behind the training policy API: both through the same Inspect episodes. For
   each, the share of an episode that is environment time: per episode, its wall time less
   the time its model calls took, over its wall time (median over episodes), so concurrent
   calls are never summed across episodes and the share stays within [0, 1].
2. Warm Python on and off (``rollout.warm_python``), heuristic episodes in ABBA order at the
   largest parallelism: the episodes' median environment seconds (wall less model calls) and
   the rollout's wall seconds, side by side.
3. The share of a training step spent generating (the sampler's busy wall time: its turn-batched
   calls never overlap), in the rest of the rollout (sandboxes, tools, grading) and in
   optimisation, from TRL's logged metrics of a few tiny-model GRPO steps.

Usage: python bench/training_rollouts.py [--episodes N] [--parallel 1,2,4] [--steps S]
       [--warm-pairs P]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval

from sandmle.specs.training import RolloutSettings
from sandmle.training.rollouts import run_episodes, training_task

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "competitions"
TASKS = ["plant-watering", "bike-rentals"]


def make_pack(root: Path) -> Path:
    for name in TASKS:
        shutil.copytree(FIXTURES / name, root / "pack" / name)
    return root / "pack"


def rates(episodes: int, env_steps: int, seconds: float, log: Any) -> dict[str, float]:
    return {
        "episodes": episodes,
        "env_steps": env_steps,
        "seconds": round(seconds, 2),
        "episodes_per_min": round(60 * episodes / seconds, 2),
        "env_steps_per_min": round(60 * env_steps / seconds, 2),
        "episode_environment_share": environment_share(log),
    }


def environment_share(log: Any) -> float | None:
    """Median over episodes of (wall time - model-call time) / wall time, from the eval log."""
    shares = []
    for sample in log.samples or []:
        wall = sample.total_time or 0.0
        model = sum(e.working_time or 0.0 for e in sample.events if e.event == "model")
        if wall > 0:
            shares.append(min(max(wall - model, 0.0) / wall, 1.0))
    return round(statistics.median(shares), 3) if shares else None


def read_log(log_dir: Path) -> Any:
    from inspect_ai.log import read_eval_log

    (path,) = sorted(log_dir.glob("*.eval"))
    return read_eval_log(str(path))


def heuristic_run(settings: RolloutSettings, ids: list[str], log_dir: Path) -> dict | None:
    try:
        import sandmle.policies.provider  # noqa: F401 - registers sandmle/heuristic
    except ImportError:
        return None
    start = time.perf_counter()
    (log,) = inspect_eval(
        training_task(settings, ids),
        model="sandmle/heuristic",
        log_dir=str(log_dir),
        display="none",
        max_samples=settings.parallel_sandboxes,
        max_sandboxes=settings.parallel_sandboxes,
    )
    steps = sum(1 for s in log.samples or [] for m in s.messages if m.role == "tool")
    return rates(len(ids), steps, time.perf_counter() - start, read_log(log_dir))


def environment_seconds(log: Any) -> list[float]:
    """Per episode: its wall time less its model calls' time."""
    seconds = []
    for sample in log.samples or []:
        model = sum(e.working_time or 0.0 for e in sample.events if e.event == "model")
        seconds.append(max((sample.total_time or 0.0) - model, 0.0))
    return seconds


def warm_vs_cold(settings: RolloutSettings, ids: list[str], root: Path, pairs: int) -> dict | None:
    """Heuristic episodes with warm Python off and on, in ABBA order."""
    env: dict[str, list[float]] = {"cold": [], "warm": []}
    wall: dict[str, list[float]] = {"cold": [], "warm": []}
    for i in range(pairs):
        for mode in ("cold", "warm") if i % 2 == 0 else ("warm", "cold"):
            log_dir = root / f"{mode}{i}"
            run = heuristic_run(
                settings.model_copy(update={"warm_python": mode == "warm"}), ids, log_dir
            )
            if run is None:
                return None
            wall[mode].append(run["seconds"])
            env[mode] += environment_seconds(read_log(log_dir))
    med = {m: round(statistics.median(env[m]), 2) for m in env}
    return {
        "parallel_sandboxes": settings.parallel_sandboxes,
        "episodes_per_mode": len(env["cold"]),
        "episode_environment_s_median": med,
        "rollout_wall_s_median": {m: round(statistics.median(wall[m]), 2) for m in wall},
        "environment_saving": round(1 - med["warm"] / med["cold"], 3) if med["cold"] else None,
        "load_avg_1m_end": round(os.getloadavg()[0], 2),
    }


def tiny_run(model_dir: Path, settings: RolloutSettings, ids: list[str], log_dir: Path) -> dict:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.training.generators import BatchingGenerator, TransformersEngine
    from sandmle.training.policy_api import PolicySession

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    generator = BatchingGenerator(TransformersEngine(model, tokenizer))
    session = PolicySession(
        generator, tokenizer, settings.max_turn_tokens, settings.max_episode_tokens
    )
    start = time.perf_counter()
    results = run_episodes(ids, session, settings, log_dir)
    seconds = time.perf_counter() - start
    out = rates(len(ids), sum(r.env_steps for r in results), seconds, read_log(log_dir))
    out["sampler_busy_share"] = round(generator.clock.seconds / seconds, 3)
    out["requests_per_engine_call"] = round(
        generator.clock.requests / max(generator.clock.calls, 1), 2
    )
    return out


def step_shares(model_dir: Path, pack: Path, out: Path, steps: int) -> dict:
    from sandmle.training.grpo import build_trainer, load_grpo_config

    config = load_grpo_config(
        ROOT / "sandmle/configs/train/tiny-cpu.yaml",
        output_dir=str(out),
        max_steps=steps,
        save_strategy="no",
    )
    config.model_name_or_path = str(model_dir)
    config.rollout = config.rollout.model_copy(update={"pack": str(pack)})
    trainer = build_trainer(config)
    with contextlib.redirect_stdout(sys.stderr):  # Trainer prints its logs; stdout is JSON
        trainer.train()
    logged = [h for h in trainer.state.log_history if "rollout/seconds" in h]
    total = sum(h["step_time"] for h in logged)
    rollout = sum(h["rollout/seconds"] for h in logged)
    generation = sum(h["rollout/generation_seconds"] for h in logged)  # <= rollout by design
    return {
        "steps": len(logged),
        "seconds_per_step": round(total / max(len(logged), 1), 2),
        "share_generation": round(generation / total, 3),
        "share_rollout_other": round((rollout - generation) / total, 3),
        "share_optimisation": round(max(total - rollout, 0.0) / total, 3),
        "episode_environment_share": round(
            statistics.mean(h["rollout/environment_share"] for h in logged), 3
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--parallel", default="1,2,4")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--warm-pairs", type=int, default=2, help="0: skip warm vs cold")
    args = parser.parse_args()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from sandmle.training.tiny import build_tiny_model

    with tempfile.TemporaryDirectory(prefix="sandmle-bench-") as tmp:
        root = Path(tmp)
        pack, model_dir = make_pack(root), build_tiny_model(root / "tiny")
        ids = [TASKS[i % len(TASKS)] for i in range(args.episodes)]
        throughput: dict[str, dict[str, dict | None]] = {"heuristic": {}, "tiny_model": {}}
        for n in map(int, args.parallel.split(",")):
            settings = RolloutSettings(pack=str(pack), parallel_sandboxes=n, max_turns=args.turns, max_turn_tokens=32, max_episode_tokens=8192, limits={"command_timeout": 120, "memory_mb": 4096})  # fmt: skip
            throughput["heuristic"][str(n)] = heuristic_run(settings, ids, root / f"h{n}")
            throughput["tiny_model"][str(n)] = tiny_run(model_dir, settings, ids, root / f"t{n}")
        warm = None
        if args.warm_pairs:
            warm = warm_vs_cold(settings, ids, root / "warm", args.warm_pairs)
        report = {
            "machine_cpus": os.cpu_count(),
            "episodes_per_setting": args.episodes,
            "max_turns": args.turns,
            "rollout_throughput": throughput,
            "warm_python": warm,
            "grpo_step": step_shares(model_dir, pack, root / "grpo", args.steps),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
