"""The CPU run that learns: the tiny model, warm-started on the task's first prompt to hand in
the sample submission in about 3 turns of 10 and to only list the data otherwise
(``tiny.warm_start``), trained with GRPO on real react episodes in the sandbox: the share of
valid submissions (``valid_reward``) per step, and the policy's probability of the submitting
call before and after.

``python -m sandmle.training.learning_curve --pack DIR [--steps N]`` prints one JSON object:
the reward, its spread, the valid share and the gradient norm of every step, the first and last
thirds' mean valid share (a run that learns has the last above the first) and the probability.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandmle.specs.profile import CONFIG_DIR
from sandmle.training.tiny import IDLE_TURN, SUBMIT_TURN, build_tiny_model, warm_start

if TYPE_CHECKING:
    from trl import GRPOTrainer

CONFIG = CONFIG_DIR / "train" / "tiny-cpu-learn.yaml"


TASK = "plant-watering"


class _FirstPrompt:
    """A sampler that records each context it is asked to continue and ends the turn at once."""

    def __init__(self, eos: int):
        self.eos = eos
        self.contexts: list[list[int]] = []

    @property
    def context(self) -> list[int]:
        return self.contexts[-1] if self.contexts else []

    async def sample(
        self, context: list[int], max_new_tokens: int, key: str = ""
    ) -> tuple[list[int], list[float]]:
        self.contexts.append(list(context))
        return [self.eos], [0.0]


def first_prompts(
    model: Path,
    pack: str,
    logs: Path,
    tasks: list[str] | None = None,
    limits: dict[str, Any] | None = None,
) -> list[list[int]]:
    """The token ids of each task's first prompt, as an episode renders it (one real episode
    per task, one at a time, in order; every task of the pack when ``tasks`` is None;
    ``limits``: the episode's task limits, e.g. a profile's with ``toolkit: true``, in place of
    the learning run's)."""
    from transformers import AutoTokenizer

    from sandmle.training.grpo import load_grpo_config, task_ids
    from sandmle.training.policy_api import PolicySession
    from sandmle.training.rollouts import run_episodes

    tokenizer = AutoTokenizer.from_pretrained(model)
    settings = load_grpo_config(CONFIG, output_dir=str(logs)).rollout
    # a rollout field, so the prompt's limits line and toolkit hint are the episode's
    update: dict[str, Any] = {"pack": pack, "tasks": tasks, "parallel_sandboxes": 1}
    if limits is not None:
        update["limits"] = limits
    settings = settings.model_validate({**settings.model_dump(), **update})
    recorder = _FirstPrompt(tokenizer.eos_token_id)
    session = PolicySession(
        recorder, tokenizer, settings.max_turn_tokens, settings.max_episode_tokens
    )
    run_episodes(task_ids(settings), session, settings, logs)
    return recorder.contexts


def first_prompt(model: Path, pack: str, logs: Path) -> list[int]:
    """The token ids of the learning task's first prompt (one real episode)."""
    return first_prompts(model, pack, logs, [TASK])[-1]


PROMPT_VOCAB = 2048
"""The learning model's vocabulary: enough merges that the task's 4 300-character first prompt
is 997 tokens instead of the default tiny tokenizer's 2 644: steps cost a fifth."""
PROMPT_FILE = "first_prompt.json"
"""Beside the warm model's weights: the first prompt's token ids it was warm-started after."""


def warm_model(folder: Path, pack: str) -> Path:
    """The tiny model after its warm start on the task's first prompt (built once per folder)."""
    from transformers import AutoTokenizer

    if not (folder / PROMPT_FILE).is_file():
        probe = build_tiny_model(folder / "probe-model")  # any tokenizer renders the same text
        text = str(
            AutoTokenizer.from_pretrained(probe).decode(first_prompt(probe, pack, probe / "logs"))
        )
        build_tiny_model(folder, corpus=[text], vocab_size=PROMPT_VOCAB)
        prompt = AutoTokenizer.from_pretrained(folder)(text, add_special_tokens=False)["input_ids"]
        figures = warm_start(folder, prompt)
        (folder / "warm_start.json").write_text(json.dumps(figures))
        (folder / PROMPT_FILE).write_text(json.dumps(prompt))
    return folder


PACK_HIDDEN = 128
"""The pack model's width: at the tests' 32, Seed-SFT reached 0.98 token accuracy on the
teacher's turns yet sampled no whole copy call at temperature 1 (0 of 64); at 128, 16%."""


def pack_model(folder: Path, pack: str, toolkit: bool = False) -> Path:
    """The random tiny model with its vocabulary learned from the first prompts of ``pack``'s
    tasks (built once per folder; ``toolkit``: the task toolkit's prompts): a task prompt is
    ~2x fewer tokens than under the default tiny vocabulary, so every turn and step costs less.
    Its weights are untrained; the reproduce protocol's Seed-SFT is what teaches it to act."""
    from transformers import AutoTokenizer

    if not (folder / "config.json").is_file():
        probe = build_tiny_model(folder / "probe-model")  # any tokenizer renders the same text
        decode = AutoTokenizer.from_pretrained(probe).decode
        limits = {"toolkit": True} if toolkit else None
        prompts = first_prompts(probe, pack, probe / "logs", limits=limits)
        texts = [str(decode(p)) for p in prompts]
        build_tiny_model(folder, corpus=texts, vocab_size=PROMPT_VOCAB, hidden=PACK_HIDDEN)
    return folder


def submit_probability(model: Any, folder: Path) -> float:
    """The policy's probability of writing ``tiny.SUBMIT_TURN`` (rather than ``IDLE_TURN``) at
    the token where the two part, after the warm start's prompt."""
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    prompt = json.loads((folder / PROMPT_FILE).read_text())
    good, bad = (
        tokenizer(t, add_special_tokens=False)["input_ids"] for t in (SUBMIT_TURN, IDLE_TURN)
    )
    fork = next(i for i, (g, b) in enumerate(zip(good, bad, strict=False)) if g != b)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + good[:fork]])).logits[0, -1].float()
    return float(torch.softmax(logits, -1)[good[fork]].item())


def learning_trainer(model: Path, pack: str, out: Path, **training: Any) -> GRPOTrainer:
    from sandmle.training.grpo import build_trainer, load_grpo_config

    config = load_grpo_config(CONFIG, output_dir=str(out), **training)
    config.model_name_or_path = str(model)
    config.rollout = config.rollout.model_copy(update={"pack": pack})
    return build_trainer(config)


VALID = "rewards/valid_reward/mean"
"""TRL's log key for the share of valid submissions in a step (``rewards.valid_reward``)."""


def curve(log_history: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-step figures from TRL's log history, and the mean valid share of the first/last thirds."""
    steps = [h for h in log_history if "reward" in h]
    valid = [h[VALID] for h in steps]
    third = max(len(valid) // 3, 1)
    return {
        "reward": [round(h["reward"], 4) for h in steps],
        "reward_std": [round(h["reward_std"], 4) for h in steps],
        "valid_reward": [round(v, 4) for v in valid],
        "loss": [round(h.get("loss", 0.0), 6) for h in steps],
        "grad_norm": [round(h.get("grad_norm", 0.0), 4) for h in steps],
        "first_third_valid": round(sum(valid[:third]) / third, 4),
        "last_third_valid": round(sum(valid[-third:]) / third, 4),
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
    before = submit_probability(trainer.model, model)
    with contextlib.redirect_stdout(sys.stderr):  # Trainer prints its logs; stdout is JSON
        trainer.train()
    after = submit_probability(trainer.model, model)
    figures = curve(trainer.state.log_history)
    probability = {"submit_probability": [round(before, 4), round(after, 4)]}
    print(json.dumps({"steps": args.steps, **figures, **probability}))


if __name__ == "__main__":
    main()
