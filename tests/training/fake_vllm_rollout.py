"""Run under ``accelerate launch`` (2 CPU processes): GRPO rollouts in ``vllm_mode='server'``
where, as in TRL, only the main process holds a ``vllm_client``. The client is a scripted
stand-in for ``trl vllm-serve`` (same ``generate`` signature and return shape).

Three rollouts per process: a normal one, one where the server raises (``fail``), and the same
with ``on_backend_error: drop``. Each process writes what it saw to ``<out>/rank-<r>.json``.

Usage: accelerate launch ... fake_vllm_rollout.py MODEL_DIR PACK_DIR OUT_DIR
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

from accelerate import Accelerator
from transformers import AutoTokenizer

from sandmle.env.rewards import total_reward
from sandmle.specs.training import RewardSettings, RolloutSettings
from sandmle.training.grpo import close_processes, rollout_function

COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"


def call(tool: str, arguments: dict) -> str:
    return f"<think>\nstep\n</think>\n\n<tool_call>{json.dumps({'name': tool, 'arguments': arguments})}</tool_call>"


PLANT = [call("bash", {"command": COPY}), call("submit", {"answer": "done"})]
BIKE = [call("bash", {"command": "ls /home/data"}), *PLANT]  # one turn longer


class ScriptedServer:
    """``VLLMClient.generate`` that answers each context with its task's next scripted turn."""

    def __init__(self, tokenizer):
        self.tokenizer, self.calls, self.fail = tokenizer, [], False

    def generate(self, prompts: list[list[int]], n: int = 1, max_tokens: int = 16, **kw) -> dict:
        self.calls.append(len(prompts))
        if self.fail:
            raise ConnectionError("vllm-serve went away")
        completions = [self._turn(p)[:max_tokens] for p in prompts]
        return {
            "prompt_ids": prompts,
            "completion_ids": completions,
            "logprobs": [[[-0.5]] * len(c) for c in completions],
            "logprob_token_ids": [[[t] for t in c] for c in completions],
        }

    def _turn(self, prompt: list[int]) -> list[int]:
        text = self.tokenizer.decode(prompt)
        script = BIKE if "bike" in text.lower() else PLANT
        turn = min(text.count("<|im_start|>assistant") - 1, len(script) - 1)
        ids = self.tokenizer(script[turn], add_special_tokens=False)["input_ids"]
        return ids + [self.tokenizer.eos_token_id]


def stand_in_trainer(accelerator: Accelerator, tokenizer, server: ScriptedServer | None):
    sampling = dict(temperature=1.0, top_p=1.0, top_k=0, min_p=0.0, repetition_penalty=1.0)
    vllm = SimpleNamespace(mode="server", logprobs=0, generation_kwargs={}, **sampling)
    if server is not None:  # TRL creates the client on the main process only
        vllm.vllm_client = server
    return SimpleNamespace(
        processing_class=tokenizer,
        args=SimpleNamespace(use_vllm=True, temperature=1.0, top_p=1.0, seed=0),
        vllm_generation=vllm,
        state=SimpleNamespace(global_step=0),
        accelerator=accelerator,
        _metrics={"train": defaultdict(list)},
    )


def main(model_dir: str, pack: str, out: str) -> None:
    accelerator = Accelerator(cpu=True)
    rank = accelerator.process_index
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    server = ScriptedServer(tokenizer) if accelerator.is_main_process else None
    trainer = stand_in_trainer(accelerator, tokenizer, server)
    prompts = ["plant-watering", "plant-watering"] if rank == 0 else ["bike-rentals"] * 2
    settings = RolloutSettings(
        pack=pack, max_turns=5, limits={"command_timeout": 30, "time_limit": 120}
    )
    report: dict = {"rank": rank, "has_client": server is not None}

    batch = rollout_function(settings, Path(out) / "ok")(prompts, trainer)
    report["medal"] = batch["medal"]
    report["reward"] = total_reward(RewardSettings(), ["…"] * len(prompts), **_extra(batch))
    report["metrics"] = {k: v for k, v in trainer._metrics["train"].items()}

    if server is not None:
        report["server_calls"] = list(server.calls)
        server.fail = True
    try:
        rollout_function(settings, Path(out) / "fail")(prompts, trainer)
        report["fail_mode"] = "no error"
    except RuntimeError as exc:
        report["fail_mode"] = str(exc)

    drop = settings.model_copy(update={"on_backend_error": "drop"})
    batch = rollout_function(drop, Path(out) / "drop")(prompts, trainer)
    report["dropped"] = batch["dropped"]
    report["drop_reward"] = total_reward(RewardSettings(), ["…"] * len(prompts), **_extra(batch))
    report["drop_mask_sum"] = [sum(m) for m in batch["env_mask"]]

    (Path(out) / f"rank-{rank}.json").write_text(json.dumps(report))
    close_processes(accelerator)


def _extra(batch: dict) -> dict:
    return {k: batch[k] for k in ("medal", "assistant_turns", "dropped")}


if __name__ == "__main__":
    main(*sys.argv[1:4])
