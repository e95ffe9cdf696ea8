"""The vLLM CPU lane's scaffolds stage: one served model under every sandmle scaffold.

python bench/vllm_cpu/scaffolds.py OUT MODEL --tasks A,B --figures FILE [--base-url URL]
    [--pack DIR] [--max-tokens N] [--time-limit S]

One ``inspect eval`` process runs the six scaffolds (react, AIDE, AIRA greedy, MCTS and evo,
the Dojo loop) side by side on the same tasks, so the server batches their calls; each gets a
log folder ``OUT/<scaffold>`` and one JSON line appended to FIGURES (stdout is Inspect's
progress display). Exit 1 unless every scaffold's eval
ended with status success, 0 sample errors, no crashed agent, and at least one model reply the
scaffold parsed: a tool call that ran (react, Dojo) or a code block it ran (the tree searches).

Budgets: the least that gives every node (every action) its own model call. The AIRA searches
count aira-dojo's blank root as a step, so ``steps: 2`` is one node; ``max_debug_depth: 1``
caps each buggy node's debug chain (a 135M model's every node is buggy; uncapped, one evo
sample made 182 calls on the toy profile); ``retries: 3`` (the references' own) gives a reply
that does not parse two more tries. SmolLM2-135M's reply to a search prompt held code that
compiles in about 1 call of 4 (lane runs of 2026-12-05): with one node a sample (three tries)
a search parsed nothing in both samples in 4 of 11 runs of a search (MCTS twice, AIDE and evo
once each), so every search gets two nodes (AIDE ``steps: 2``, AIRA ``steps: 3``), six tries
a sample, and two samples of each task. Replies are capped at 128 tokens by the request (the
server sets no cap of its own): at 512 a search sample ran into its 900 s limit after 4 to 6
calls and parsed no more of them (1 or 2 of 8 to 13, lane run of 2026-12-05). The tool loops and
the searches that pass sample greedily (reproducible); MCTS and evo sample as their presets do
(0.6, top-p 0.95). The Dojo loop runs its ``sandmle`` variant (tool calls, the model's own
sampling) at temperature 0.7 with 4 actions: at MLE-Dojo's temperature 0 (its own variants)
the 135M model repeated the prompt's prose turn after turn and never called a tool, in 2 runs
of 2 samples; the served model's tool parser (``smollm2_tool_parser.py``) reads its ```python
habit as an ``execute_code`` call.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

SCAFFOLDS: dict[str, dict[str, Any]] = {
    "react": {},
    "aide": {"steps": 2, "retries": 3},
    "aira_greedy": {"steps": 3, "retries": 3},
    "aira_mcts": {"steps": 3, "max_debug_depth": 1, "retries": 3},
    "aira_evo": {"steps": 4, "individuals_per_generation": 1, "max_debug_depth": 1, "retries": 3},
    "dojo": {"max_steps": 4, "variant": "sandmle"},
}
TEMPERATURE: dict[str, float] = {"dojo": 1.0}
"""Sampling where greedy is not the scaffold's own (the rest: 0, reproducible)."""
EPOCHS: dict[str, int] = {"dojo": 3, "aide": 2, "aira_greedy": 2, "aira_mcts": 2, "aira_evo": 2}
"""The Dojo loop's later turns copy its first (the 135M model's habit): what counts is how many
first turns it draws, so it gets three of each task, three turns each (6 messages). The searches
get two of each task: with one, a search parsed nothing in either sample in 2 of 8 runs of a
search (lane runs of 2026-12-05, budgets below); four samples make that about 1 in 16."""
MESSAGE_LIMIT: dict[str, int] = {"dojo": 6}
TOOL_LOOPS = ("react", "dojo")
DOJO_HISTORY = "sandmle:dojo_history"
"""``sandmle.benchmarks.mle_dojo.tools.HISTORY_KEY``: the actions the Dojo loop took."""
"""Scaffolds whose replies are tool calls; the others parse code out of the reply's text."""


def run(args: argparse.Namespace) -> None:
    """All scaffolds in one eval call (separate tasks, one log each)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with
    from inspect_ai.model import GenerateConfig
    from inspect_ai.solver import Solver

    import sandmle.scaffolds as scaffolds
    from sandmle.benchmarks.mle_dojo.solver import dojo
    from sandmle.benchmarks.synthetic.task import synthetic

    tasks = []
    for name in args.only:
        make = dojo if name == "dojo" else getattr(scaffolds, name)
        solver: Solver = make(**SCAFFOLDS[name])
        task = synthetic(pack=args.pack, tasks=args.tasks, time_limit=args.time_limit)
        config = GenerateConfig(temperature=TEMPERATURE.get(name, 0.0), max_tokens=args.max_tokens)
        tasks.append(
            task_with(
                task,
                solver=solver,
                name=f"lane-{name}",
                config=config,
                epochs=EPOCHS.get(name, 1),
                message_limit=MESSAGE_LIMIT.get(name, args.message_limit),
            )
        )
    for name in args.only:
        (args.out / name).mkdir(parents=True, exist_ok=True)
    # one eval per log folder would serialise them; one call with max_tasks runs them at once
    logs = inspect_eval(
        tasks,
        model=args.model,
        model_base_url=args.base_url,
        log_dir=str(args.out / "all"),
        max_tasks=len(tasks),
        max_samples=len(args.tasks.split(",")) * max(EPOCHS.values()),
        max_connections=2 * len(tasks),
        display="plain",
        fail_on_error=False,
    )
    for log in logs:
        name = log.eval.task.split("/")[-1].removeprefix("lane-")
        src = Path(log.location)
        src.rename(args.out / name / src.name)


def parsed_replies(name: str, samples: list[Any]) -> dict[str, int]:
    """What of the model's replies the scaffold used: tool calls that ran (tool loops), or
    tree nodes with code that ran, and the nodes and model calls of the searches."""
    from sandmle.harness.search_tree import STORE_KEY

    if name in TOOL_LOOPS:
        from lane import tool_calls_run  # run as a script beside lane.py

        calls, ran = tool_calls_run(samples)
        # the Dojo loop's JSON variant takes actions from the reply's text, no tool calls: the
        # actions it parsed and took are in its history
        actions = sum(len(s.store.get(DOJO_HISTORY, [])) for s in samples) if not calls else 0
        return {"tool_calls": calls, "json_actions": actions, "parsed": ran or actions}
    nodes = [n for s in samples for n in s.store.get(STORE_KEY, [])]
    code_ran = [
        n for n in nodes if n.get("code") and n.get("extra", {}).get("exit_code") is not None
    ]
    per_node = [len(n.get("extra", {}).get("calls", [])) for n in nodes]
    return {
        "nodes": len(nodes),
        "nodes_without_a_call": sum(c == 0 for c in per_node),
        "model_calls": sum(per_node),
        "parsed": len(code_ran),
        "good_nodes": sum(not n.get("is_bug", True) for n in nodes),
    }


def capped_replies(samples: list[Any], context: int) -> list[str]:
    """Replies the server ended at the length limit before the request's ``max_tokens`` and
    with room left in the context: a server-side cap the request did not ask for (vLLM takes a
    generation config's ``max_new_tokens`` as one), which would quietly shorten every reply."""
    capped = []
    for sample in samples:
        for event in sample.events:
            if event.event != "model" or event.output is None or event.output.usage is None:
                continue
            usage, asked = event.output.usage, event.config.max_tokens
            cut = event.output.stop_reason in ("max_tokens", "model_length")
            room = usage.input_tokens + usage.output_tokens < context
            if cut and asked and usage.output_tokens < asked and room:
                capped.append(f"{usage.output_tokens} of {asked} tokens")
    return capped


def check(out: Path, figures: Path, only: list[str], context: int = 8192) -> int:
    """One JSON line per scaffold appended to ``figures``; 1 unless every one passed."""
    from inspect_ai.log import read_eval_log
    from lane import eval_summary  # bench/vllm_cpu/lane.py (this folder is on sys.path)

    failed = []
    for name in only:
        summary: dict[str, Any] = {"stage": f"scaffold-{name}", **eval_summary(out / name)}
        problems = []
        if "log" in summary:
            samples = read_eval_log(summary["log"]).samples or []
            summary.update(parsed_replies(name, samples))
            capped = capped_replies(samples, context)
            summary["replies_capped_by_server"] = len(capped)
            if capped:
                problems.append(f"{len(capped)} reply(ies) cut below the request ({capped[0]})")
            summary["scores"] = [_score(s) for s in samples]
        if summary.get("status") != "success":
            problems.append(f"status {summary.get('status')}")
        if summary.get("samples", 0) == 0:
            problems.append("no samples")
        if summary.get("sample_errors"):
            problems.append(f"{summary['sample_errors']} sample error(s)")
        if summary.get("agent_errors"):
            problems.append(f"agent crashed: {summary['agent_errors'][0][:200]}")
        if summary.get("nodes_without_a_call"):
            problems.append(f"{summary['nodes_without_a_call']} node(s) without a model call")
        if not summary.get("parsed"):
            problems.append("no model reply the scaffold parsed and ran")
        summary["ok"] = not problems
        with figures.open("a", encoding="utf-8") as f:
            f.write(json.dumps(summary) + "\n")
        if problems:
            failed.append(f"{name}: " + "; ".join(problems))
    if failed:
        print(f"error: scaffolds under {out}: " + " | ".join(failed), file=sys.stderr)
    return 1 if failed else 0


def _score(sample: Any) -> Any:
    scores = sample.scores or {}
    return {k: v.value for k, v in scores.items()}


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # The lane ends this process with SIGTERM when a stage beside it fails: as Ctrl-C, so that
    # Inspect releases its sandboxes (a plain SIGTERM left every running sample's folder and
    # quota mount behind: 16 of them in a lane run of 2026-12-05)
    signal.signal(signal.SIGTERM, _interrupted)
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("model")
    parser.add_argument("--tasks", required=True, help="comma-separated task ids")
    parser.add_argument("--figures", type=Path, required=True, help="JSON lines appended here")
    parser.add_argument("--pack", default=None, help="pack folder (default: the built-in one)")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--max-tokens", type=int, default=128, help="per reply (the request's)")
    parser.add_argument("--message-limit", type=int, default=16)
    parser.add_argument("--time-limit", type=int, default=900)
    parser.add_argument("--max-model-len", type=int, default=8192, help="the server's context")
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--only", help="comma-separated scaffolds (default: all six)")
    args = parser.parse_args()
    args.only = args.only.split(",") if args.only else list(SCAFFOLDS)
    unknown = set(args.only) - set(SCAFFOLDS)
    if unknown:
        parser.error(f"unknown scaffold(s): {', '.join(sorted(unknown))}")
    if not args.check_only:
        run(args)
    return check(args.out, args.figures, args.only, args.max_model_len)


if __name__ == "__main__":
    sys.exit(main())
