"""Which toolkit option a policy calls, by the task's modality: does it read the task?

A toolkit episode's first turn is one call, ``python automl.py FAMILY``; the right family
depends on the task's modality (``sandmle.policies.toolkit``). A policy that reads the task
calls by modality; one that ignores it draws every modality's calls from one mix. This reads
each model's first turns from finished eval logs, counts the kinds (an option, ``broken``: a
malformed or other call, ``no_call``) overall and per modality, and tests whether the mix
depends on the modality (a permutation test over tasks). ``sandmle reproduce``'s report shows
it per role; ``bench/toolkit_calls.py`` also samples it without running episodes.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

from sandmle.harness.automl_program import TOOLKIT_OPTIONS as OPTIONS
from sandmle.harness.automl_program import toolkit_command

KINDS = [*OPTIONS, "broken", "no_call"]


def kind_of(calls: list[tuple[str, dict[str, Any] | None]]) -> str:
    """The kind of a turn's tool calls, given as (function, arguments)."""
    if not calls:
        return "no_call"
    function, arguments = calls[0]
    command = str(next(iter(arguments.values()), "")).strip() if arguments else ""
    for option in OPTIONS:
        if len(calls) == 1 and function == "bash" and command == toolkit_command(option):
            return option
    return "broken"


def modality_dependence(
    per_task: list[list[str]], modalities: list[str], rounds: int = 10_000, seed: int = 0
) -> dict:
    """Does the call mix depend on the task's modality? The mean, over calls, of the total
    variation distance between its modality's mix and the overall mix, and a permutation
    test's p: the share of rounds, each dealing the modalities to the prompts at random (a
    prompt's samples stay together), with a distance as large. A policy that ignores the task
    draws every modality's calls from one mix (the distance then is sampling noise)."""
    rng = random.Random(seed)
    total = Counter(k for kinds in per_task for k in kinds)
    n = max(sum(total.values()), 1)

    def distance(labels: list[str]) -> float:
        groups: dict[str, Counter[str]] = defaultdict(Counter)
        for kinds, label in zip(per_task, labels, strict=True):
            groups[label].update(kinds)
        spread = 0.0
        for counts in groups.values():
            size = max(sum(counts.values()), 1)
            tv = 0.5 * sum(abs(counts[k] / size - total[k] / n) for k in total)
            spread += tv * size / n
        return spread

    observed = distance(modalities)
    labels = list(modalities)
    hits = 0
    for _ in range(rounds):
        rng.shuffle(labels)
        hits += distance(labels) >= observed - 1e-12
    return {"tv_from_overall": round(observed, 3), "p": round((hits + 1) / (rounds + 1), 4)}


def log_kinds(
    log_dir: Path,
    scaffold: str | None = "react",
    skipped: dict[str, str] | None = None,
    task: str | None = "synthetic",
) -> dict[str, tuple[list[list[str]], list[str]]]:
    """Per model, the kinds of each task's first turns in the logs and the tasks' modalities.

    A sample counts when its metadata names a modality, its log is Inspect task ``task``'s
    (``synthetic``: a pack's tasks, not the replicas, whose samples also name one) and, with
    ``scaffold``, when that solver ran it. Epochs of one task pool, so the permutation tests
    keep a task's calls together. A log that cannot be read or did not finish is left out and
    named in ``skipped``, with why.
    """
    from inspect_ai.log import list_eval_logs, read_eval_log

    tasks: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    modality: dict[str, str] = {}
    skipped = {} if skipped is None else skipped
    for info in list_eval_logs(str(log_dir)):
        name = Path(info.name).name
        try:
            log = read_eval_log(info, header_only=True)  # samples only of the logs that count
            if log.status != "success":
                skipped[name] = f"status {log.status}"
                continue
            solvers = " ".join(step.solver for step in (log.plan.steps if log.plan else []))
            if (scaffold and scaffold not in solvers) or (task and log.eval.task != task):
                continue
            log = read_eval_log(info)
        except Exception as error:  # a corrupt or foreign file is data, not a crash
            skipped[name] = f"unreadable: {type(error).__name__}"
            continue
        for sample in log.samples or []:
            task_modality = (sample.metadata or {}).get("modality")
            if not task_modality:
                continue
            first = next((m for m in sample.messages if m.role == "assistant"), None)
            calls = getattr(first, "tool_calls", None) or []
            key = f"{log.eval.task}/{sample.id}"
            modality[key] = str(task_modality)
            tasks[log.eval.model][key].append(kind_of([(c.function, c.arguments) for c in calls]))
    return {
        model: ([per[k] for k in sorted(per)], [modality[k] for k in sorted(per)])
        for model, per in tasks.items()
    }


def summarise(kinds: list[str]) -> dict[str, Any]:
    counts = Counter(kinds)
    valid = sum(counts[option] for option in OPTIONS)
    return {"n": len(kinds), "valid_call": round(valid / max(len(kinds), 1), 3),
            **{k: counts[k] for k in KINDS}}  # fmt: skip


def mix_report(per_task: list[list[str]], modalities: list[str], seed: int) -> dict[str, Any]:
    """Overall and per-modality mixes, and whether the mix depends on the modality."""
    by_modality: dict[str, list[str]] = defaultdict(list)
    for modality, kinds in zip(modalities, per_task, strict=True):
        by_modality[modality].extend(kinds)
    return {
        "all": summarise([k for kinds in per_task for k in kinds]),
        **{m: summarise(k) for m, k in sorted(by_modality.items())},
        "by_modality": modality_dependence(per_task, modalities, seed=seed),
    }


CHOICE_COLUMNS = ["role", "modality", "calls", "call ok %", "mix", "tv", "p"]


def mix_text(mix: dict[str, Any]) -> str:
    """``table 12 · images 7 · broken 1``: the kinds called, most called first."""
    counts = sorted(((mix[k], k) for k in KINDS if mix.get(k)), key=lambda c: (-c[0], c[1]))
    return " · ".join(f"{kind} {n}" for n, kind in counts) or "—"


def choice_table(
    log_dirs: Path | list[Path],
    roles: dict[str, str],
    scaffold: str | None,
    task: str,
    seed: int = 0,
) -> pd.DataFrame:
    """Per role (``roles``: model → role, in the report's order), its first calls overall
    (``all``) and per modality, from the logs of Inspect task ``task`` under ``scaffold`` in
    ``log_dirs`` (each model's in one of them). ``tv`` and ``p``, on the ``all`` row: does the
    mix depend on the modality (``modality_dependence``)?"""
    models: dict[str, tuple[list[list[str]], list[str]]] = {}
    for log_dir in [log_dirs] if isinstance(log_dirs, Path) else log_dirs:
        models.update(log_kinds(log_dir, scaffold, task=task))
    rows = []
    for model, role in roles.items():
        if model not in models:
            continue
        report = mix_report(*models[model], seed=seed)
        test = report.pop("by_modality")
        for modality, mix in report.items():
            first = modality == "all"
            rows.append([role, modality, mix["n"], round(100 * mix["valid_call"], 1),
                         mix_text(mix), test["tv_from_overall"] if first else None,
                         test["p"] if first else None])  # fmt: skip
    return pd.DataFrame(rows, columns=CHOICE_COLUMNS)
