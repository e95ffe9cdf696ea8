"""The CPU run that learns: the tiny model, warm-started on the task's first prompt
(``tiny.warm_start``), trained with GRPO on real sandbox episodes; the mean reward per step.

``python -m sandmle.training.learning_curve --pack DIR [--steps N]`` prints one JSON object:
the reward, its spread and the gradient norm of every step, and the first and last thirds'
mean reward (a run that learns has the last above the first).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandmle.training.tiny import build_tiny_model, warm_start

if TYPE_CHECKING:
    from trl import GRPOTrainer

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "train" / "tiny-cpu-learn.yaml"


TASK = "plant-watering"


class _FirstPrompt:
    """A sampler that records the context it is asked to continue and ends the turn at once."""

    def __init__(self, eos: int):
        self.eos = eos
        self.context: list[int] = []

    async def sample(
        self, context: list[int], max_new_tokens: int, key: str = ""
    ) -> tuple[list[int], list[float]]:
        self.context = list(context)
        return [self.eos], [0.0]


def first_prompt(model: Path, pack: str, logs: Path) -> list[int]:
    """The token ids of the task's first prompt, as an episode renders it (one real episode)."""
    from transformers import AutoTokenizer

    from sandmle.training.grpo import load_grpo_config
    from sandmle.training.policy_api import PolicySession
    from sandmle.training.rollouts import run_episodes

    tokenizer = AutoTokenizer.from_pretrained(model)
    settings = load_grpo_config(CONFIG, output_dir=str(logs)).rollout
    recorder = _FirstPrompt(tokenizer.eos_token_id)
    session = PolicySession(
        recorder, tokenizer, settings.max_turn_tokens, settings.max_episode_tokens
    )
    run_episodes([TASK], session, settings.model_copy(update={"pack": pack}), logs)
    return recorder.context


def warm_model(folder: Path, pack: str) -> Path:
    """The tiny model after its warm start on the task's first prompt (built once per folder)."""
    if not (folder / "config.json").is_file():
        build_tiny_model(folder)
        warm_start(folder, first_prompt(folder, pack, folder / "probe"))
    return folder


def learning_trainer(model: Path, pack: str, out: Path, **training: Any) -> GRPOTrainer:
    from sandmle.training.grpo import build_trainer, load_grpo_config

    config = load_grpo_config(CONFIG, output_dir=str(out), **training)
    config.model_name_or_path = str(model)
    config.rollout = config.rollout.model_copy(update={"pack": pack})
    return build_trainer(config)


def curve(log_history: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-step figures from TRL's log history, and the mean reward of the first/last thirds."""
    steps = [h for h in log_history if "reward" in h]
    rewards = [h["reward"] for h in steps]
    third = max(len(rewards) // 3, 1)
    return {
        "reward": [round(r, 4) for r in rewards],
        "reward_std": [round(h["reward_std"], 4) for h in steps],
        "grad_norm": [round(h.get("grad_norm", 0.0), 4) for h in steps],
        "first_third_mean": round(sum(rewards[:third]) / third, 4),
        "last_third_mean": round(sum(rewards[-third:]) / third, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", required=True, help="A pack folder (e.g. the test fixtures).")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--out", default="runs/tiny-cpu-learn")
    args = parser.parse_args()
    out = Path(args.out)
    model = warm_model(out / "warm-model", args.pack)
    trainer = learning_trainer(model, args.pack, out, max_steps=args.steps)
    with contextlib.redirect_stdout(sys.stderr):  # Trainer prints its logs; stdout is JSON
        trainer.train()
    print(json.dumps({"steps": args.steps, **curve(trainer.state.log_history)}))


if __name__ == "__main__":
    main()
