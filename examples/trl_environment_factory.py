"""GRPO with TRL's own trainer on sandmle's tasks, served by ``sandmle env serve``.

Start a server, then train against it (``pip install -e ".[train]"``; a model whose chat
template TRL parses tool calls of, e.g. Qwen3 or Qwen2.5):

    sandmle env serve --port 8100 --max-episodes 4 &
    python examples/trl_environment_factory.py --url http://127.0.0.1:8100 \\
        --model Qwen/Qwen3-0.6B --steps 10

Each rollout is one episode on the server: TRL resets it (the row's ``task``, or its ``seed``),
the policy calls the episode's tools (bash, python, validate_submission, submit), and the
server's reward scores it. A group's rollouts share their row, so they share the task.
"""

from __future__ import annotations

import argparse
import os

from sandmle.env.trl import environment_factory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8100", help="The server's URL.")
    parser.add_argument("--model", required=True, help="A model id or local folder.")
    parser.add_argument("--steps", type=int, default=10, help="Training steps.")
    parser.add_argument(
        "--tasks",
        default="",
        help="Comma-separated task ids, one per step in turn (default: a seeded pick per step).",
    )
    parser.add_argument("--num-generations", type=int, default=4, help="Rollouts per group.")
    parser.add_argument("--max-completion-length", type=int, default=4096)
    parser.add_argument("--output-dir", default="runs/trl-env")
    parser.add_argument("--token", default=None, help="The server's token (off loopback).")
    args = parser.parse_args()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is new in TRL

    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    # One row per step (one group); the prompt is the episode's, which reset() appends to it.
    rows: dict[str, list] = {"prompt": [[{"role": "user", "content": ""}]] * args.steps}
    tasks = [t for t in args.tasks.split(",") if t]
    if tasks:
        rows["task"] = [tasks[i % len(tasks)] for i in range(args.steps)]
    else:
        rows["seed"] = list(range(args.steps))
    config = GRPOConfig(
        output_dir=args.output_dir,
        max_steps=args.steps,
        per_device_train_batch_size=args.num_generations,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        logging_steps=1,
        report_to="none",
        use_cpu=not torch.cuda.is_available(),  # TRL's default bf16 needs a GPU
        bf16=torch.cuda.is_available(),
    )
    trainer = GRPOTrainer(
        model=args.model,
        args=config,
        train_dataset=Dataset.from_dict(rows),
        environment_factory=environment_factory(args.url, token=args.token),
    )
    trainer.train()
    for entry in trainer.state.log_history:
        if "reward" in entry:
            print(f"step {entry['step']}: reward {entry['reward']:.3f} ± {entry['reward_std']:.3f}")


if __name__ == "__main__":
    main()
