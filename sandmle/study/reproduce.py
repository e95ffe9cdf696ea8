"""``sandmle reproduce``: the SandMLE paper's protocol end to end, at a profile's scale.

Stages, in order, each leaving ``<out>/stages/<stage>.json`` when it finished, so a rerun of
the same command skips it (the eval stage is Inspect's ``eval_set``, which also resumes inside):

1. ``packs``: a training pack and a held-out pack, each from a fresh secret (never the same);
2. ``replicas``: MLE-bench-lite micro replicas and their MLE-Dojo layout;
3. ``base``: the base model as a local folder (the tiny model built, SmolLM2 converted);
4. ``teacher``: the teacher policies' episodes on the training pack, trained scaffold;
5. ``sft``: Seed-SFT of the base model on the kept teacher episodes;
6. ``grpo-dense`` / ``grpo-sparse`` (/ ``grpo-base``): GRPO from the SFT checkpoint with the
   dense and the sparse reward, same budget (and from base where the profile says so);
7. ``eval``: every model under every scaffold on the held-out pack and the replicas;
8. ``report``: CLI tables, ``report.html`` and the leaderboard's ``Reproduce`` tab data.

Training stages run ``sandmle train`` in a child process (its own memory, its own log under
``<out>/logs/``): the study floor does not import the training package.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic_core import to_jsonable_python
from rich.console import Console

from sandmle.errors import SandmleError
from sandmle.harness.solvers import AGENT_ERROR_KEY
from sandmle.leaderboard.reproduce_view import BASE_LOGS, FIXED_LOGS, FIXED_PREFIX
from sandmle.specs.benchmarks import benchmark
from sandmle.specs.checkpoint import (
    METADATA_FILE,
    last_complete_checkpoint,
    saved_checkpoints,
    step_of,
)
from sandmle.specs.profile import GRPOArm, Profile, load_profile
from sandmle.specs.study import BenchmarkEntry, ModelEntry, ScaffoldEntry, StudyConfig
from sandmle.specs.training import SFTRunFile
from sandmle.study.demo import ProgressLines
from sandmle.study.runner import run_study, sample_count, study_tasks

MANIFEST = "reproduce.json"
"""Beside ``eval/``: which model is which role; the leaderboard's Reproduce tab reads it."""
TRAIN_CLI = "sandmle.training.cli"
BUILT_MODELS = ("tiny", "tiny-warm", "tiny-pack", "smollm2")
"""Base models ``sandmle train base`` builds into a folder (``Profile.model``)."""
HEARTBEAT_S = 30.0
"""A line this often while a child process trains, also without a terminal."""


class Run:
    """One ``reproduce`` output folder and the profile it belongs to."""

    def __init__(self, profile: Profile, profile_file: Path, out: Path, console: Console):
        self.profile, self.profile_file, self.console = profile, profile_file, console
        self.out = out.resolve()

    def path(self, *parts: str) -> Path:
        return self.out.joinpath(*parts)

    def marker(self, stage: str) -> Path:
        return self.path("stages", f"{stage}.json")

    def done(self, stage: str) -> dict[str, Any] | None:
        try:
            return dict(json.loads(self.marker(stage).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def finish(self, stage: str, outcome: dict[str, Any]) -> None:
        self.marker(stage).parent.mkdir(parents=True, exist_ok=True)
        tmp = self.marker(stage).with_suffix(".tmp")
        tmp.write_text(json.dumps(outcome, indent=2, default=str) + "\n", encoding="utf-8")
        tmp.replace(self.marker(stage))  # a marker is whole or absent


def claim_out_dir(profile: Profile, out: Path) -> None:
    """``out`` belongs to one profile: a rerun with another one is refused, never mixed in. The
    saved profile is compared as settings, so a setting added since (at its default) does not
    strand a resumable run, and without the training fields that change no result (how often
    to save or log: a resumed stage takes the new ones)."""
    out.mkdir(parents=True, exist_ok=True)
    saved = out / "profile.yaml"
    text = yaml.safe_dump(profile.model_dump(mode="json"), sort_keys=True)
    now = _results_only(profile.model_dump(mode="json"))
    if saved.is_file() and _results_only(_saved_settings(profile, saved)) != now:
        raise SandmleError(
            f"{out} holds a run of another profile (or an edited one): {saved} differs; "
            "use a fresh --out"
        )
    saved.write_text(text, encoding="utf-8")


BOOKKEEPING = frozenset(
    {"save_steps", "save_total_limit", "save_strategy", "logging_steps", "report_to"}
)
"""Trainer fields that say how often to save and log, not what is trained."""


def _results_only(settings: Any) -> Any:
    """``settings`` without the ``BOOKKEEPING`` fields of any ``training`` mapping in it."""
    if not isinstance(settings, dict):
        return settings
    return {
        key: {k: v for k, v in value.items() if k not in BOOKKEEPING}
        if key == "training" and isinstance(value, dict)
        else _results_only(value)
        for key, value in settings.items()
    }


def _saved_settings(profile: Profile, saved: Path) -> Any:
    """The saved profile's settings, with any setting it predates at its default."""
    try:
        data = yaml.safe_load(saved.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return _with_defaults(profile, data)


def _with_defaults(model: BaseModel, data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    filled = dict(data)
    for name, spec in type(model).model_fields.items():
        value = getattr(model, name)
        if name not in filled:
            filled[name] = to_jsonable_python(spec.get_default(call_default_factory=True))
        elif isinstance(value, BaseModel):
            filled[name] = _with_defaults(value, filled[name])
    return filled


def stage_names(profile: Profile) -> list[str]:
    names = ["packs", "replicas", "base", "teacher", "sft"]
    return [*names, *(arm.stage for arm in profile.grpo.arms()), "eval", "report"]


def run_reproduce(profile_name: str | Path, out: Path, console: Console | None = None) -> bool:
    """Run (or resume) every stage; True when every eval finished successfully."""
    console = console or Console()
    profile, profile_file = load_profile(profile_name)
    run = Run(profile, profile_file, out, console)
    claim_out_dir(profile, run.out)
    stages: dict[str, Callable[[Run], dict[str, Any]]] = {
        "packs": stage_packs,
        "replicas": stage_replicas,
        "base": stage_base,
        "teacher": stage_teacher,
        "sft": stage_sft,
        **{arm.stage: _grpo_stage(arm) for arm in profile.grpo.arms()},
        "eval": stage_eval,
        "report": stage_report,
    }
    names = stage_names(profile)
    for i, name in enumerate(names, 1):
        if name != "report" and run.done(name) is not None:
            console.print(f"[{i}/{len(names)}] {name}: done earlier, skipped", highlight=False)
            continue
        console.print(f"[{i}/{len(names)}] {name}: running", highlight=False)
        start = time.monotonic()
        outcome = stages[name](run)
        outcome["seconds"] = round(time.monotonic() - start, 1)
        if name != "eval" or outcome.get("success"):  # an unfinished eval reruns next time
            run.finish(name, outcome)
        console.print(f"[{i}/{len(names)}] {name}: {summary(outcome)}", highlight=False)
    return bool((run.done("eval") or {}).get("success"))


def _grpo_stage(arm: GRPOArm) -> Callable[[Run], dict[str, Any]]:
    return lambda run: stage_grpo(run, arm)


def summary(outcome: dict[str, Any]) -> str:
    shown = {k: v for k, v in outcome.items() if isinstance(v, (int, float, str, bool))}
    return ", ".join(f"{k} {v}" for k, v in shown.items())


def fingerprint(secret_file: Path) -> str:
    """A short hash of a pack's secret: shows two packs differ without revealing either."""
    return hashlib.sha256(secret_file.read_bytes().strip()).hexdigest()[:12]


def stage_packs(run: Run) -> dict[str, Any]:
    outcome: dict[str, Any] = {}
    for part in run.profile.packs.parts():
        folder = run.path("packs", part)
        outcome[f"{part}_tasks"] = _finished_pack(folder) or _generate_part(run, part, folder)
        outcome[f"{part}_secret"] = fingerprint(folder / "generation" / "secret.txt")
    secrets = [outcome[f"{part}_secret"] for part in run.profile.packs.parts()]
    if len(set(secrets)) < len(secrets):
        raise SandmleError("two of the packs share a secret")
    return outcome


def _finished_pack(folder: Path) -> int:
    """A pack an interrupted stage already finished: its task count (0: not finished)."""
    from sandmle.harness.pack import read_manifest

    manifest = read_manifest(folder)
    return len(manifest.tasks) if manifest else 0


def _generate_part(run: Run, part: str, folder: Path) -> int:
    from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
    from sandmle.benchmarks.synthetic.secret import new_secret

    spec = getattr(run.profile.packs, part)
    secret_file = folder / "generation" / "secret.txt"
    secret = secret_file.read_text(encoding="utf-8").strip() if secret_file.is_file() else None
    pack = PackSpec(name=f"{run.profile.name}-{part}", n=spec.n, seed=spec.seed,
                    modalities=spec.modalities, secret=secret or new_secret())  # fmt: skip
    # one process per core (up to 8): the bytes do not depend on it, and 140 tasks took ~10
    # minutes of cpu-micro's 90 in one
    results = generate_pack(pack, folder, workers=None)
    failed = [o.index for o in results if not o.task_id]
    if failed:
        raise SandmleError(f"{part} pack: slots {failed} rejected on every attempt")
    return len(results)


def stage_replicas(run: Run) -> dict[str, Any]:
    from sandmle.benchmarks.mle_dojo.replicas import build_replicas_with_dojo

    spec = run.profile.replicas
    roots = build_replicas_with_dojo(run.path("replicas"), spec.competitions, seed=spec.seed)
    dojo = [p for p in run.path("replicas", "mle-dojo").iterdir() if p.is_dir()]
    if "dojo" in run.profile.eval.benchmarks and not dojo:
        raise SandmleError(
            "none of replicas.competitions has an MLE-Dojo layout (see NOT_IN_DOJO in "
            "sandmle/benchmarks/mle_dojo/replicas.py); add one or drop the dojo benchmark"
        )
    return {"replicas": len(roots), "dojo_replicas": len(dojo)}


def stage_base(run: Run) -> dict[str, Any]:
    """The base model as a folder everything else starts from (an HF id stays an id)."""
    name, folder = run.profile.model, run.path("models", "base")
    if name not in BUILT_MODELS:
        return {"model": name}
    # the tiny-pack vocabulary is learned from the prompts as training renders them
    args = [name, str(folder), "--pack", str(run.path("packs", "train"))]
    args += ["--toolkit"] if run.profile.episode.toolkit else []
    child(run, "base", ["-m", TRAIN_CLI, "base", *args])
    return {"model": str(folder)}


def base_model(run: Run) -> str:
    return str((run.done("base") or {}).get("model") or run.profile.model)


def trained_scaffold(run: Run) -> ScaffoldEntry:
    episode = run.profile.episode
    return ScaffoldEntry(solver=episode.solver, args=episode.solver_args)


def stage_teacher(run: Run) -> dict[str, Any]:
    teacher = run.profile.teacher
    study = StudyConfig(
        name=f"{run.profile.name}-teacher",
        log_dir=str(run.path("teacher")),
        models=[ModelEntry(model=m) for m in teacher.models],
        scaffolds=[trained_scaffold(run)],
        benchmarks=[
            BenchmarkEntry(
                task="synthetic",
                args={"pack": str(run.path("packs", "train")), **run.profile.episode.task_args()},
            )
        ],  # fmt: skip
        epochs=teacher.epochs,
        max_samples=run.profile.eval.max_samples,
        max_tasks=run.profile.eval.max_tasks,
    )
    if not run_study(study, display=display()):
        raise SandmleError(f"teacher episodes did not all finish (logs in {run.path('teacher')})")
    return {"logs": str(run.path("teacher"))}


def stage_sft(run: Run) -> dict[str, Any]:
    sft = run.profile.sft
    config = SFTRunFile(
        model=base_model(run),
        logs=eval_files([run.path("teacher"), *map(Path, run.profile.teacher.logs)]),
        keep=sft.keep,
        training={**sft.training, **resumable(run, "sft")},
    )
    resumed = resumed_from(run, "sft")
    path = write_config(run, "sft", config.model_dump(mode="json", exclude_none=True))
    child(run, "sft", ["-m", TRAIN_CLI, "sft", "--config", str(path)])
    return {"checkpoint": str(labelled(run.path("runs", "sft", "final"), "sft")), **resumed}


def resumable(run: Run, stage: str) -> dict[str, Any]:
    """Training fields that put a stage's checkpoints in its folder and resume from the newest
    complete one there: an interrupted stage redoes only the steps since its last save."""
    return {"output_dir": str(run.path("runs", stage)), "resume_from_checkpoint": True}


def resumed_from(run: Run, stage: str) -> dict[str, Any]:
    """The step a stage resumes at, said on the console and kept in its outcome (its seconds
    then count only this attempt)."""
    last = last_complete_checkpoint(run.path("runs", stage))
    if last is None:
        return {}
    run.console.print(f"  {stage}: resuming from {last}", highlight=False)
    return {"resumed_at_step": step_of(last)}


def stage_grpo(run: Run, arm: GRPOArm) -> dict[str, Any]:
    model = base_model(run) if arm.start == "base" else (run.done("sft") or {})["checkpoint"]
    spec = run.profile.grpo.run
    grpo_pack = run.path("packs", run.profile.packs.grpo_part())
    config = spec.model_copy(
        update={
            "model": model,
            "rollout": spec.rollout.model_copy(update={"pack": str(grpo_pack)}),
            "reward": spec.reward.model_copy(update={"mode": arm.mode}),
            "training": {**spec.training, **resumable(run, arm.stage)},
        }
    )
    resumed = resumed_from(run, arm.stage)
    path = write_config(run, arm.stage, config.model_dump(mode="json", exclude_none=True))
    child(run, arm.stage, ["-m", TRAIN_CLI, "grpo", "--config", str(path)])
    folder = labelled(last_checkpoint(run.path("runs", arm.stage)), "grpo", arm.mode)
    return {"checkpoint": str(folder), "start": arm.start, "reward_mode": arm.mode, **resumed}


def eval_files(paths: list[Path]) -> list[str]:
    """Inspect log files: a folder's ``*.eval`` files, not eval_set's own JSON bookkeeping
    (``logs.json``, ``eval-set.json``), which SFT's reader would take for logs."""
    found: list[str] = []
    for path in paths:
        if not path.exists():
            raise SandmleError(f"teacher logs {path} do not exist")
        found += map(str, sorted(path.rglob("*.eval")) if path.is_dir() else [path])
    return found


def write_config(run: Run, name: str, config: dict[str, Any]) -> Path:
    path = run.path("configs", f"{name}.yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def last_checkpoint(folder: Path) -> Path:
    found = saved_checkpoints(folder)
    if not found:
        raise SandmleError(f"training wrote no checkpoint under {folder}")
    return found[-1]


def labelled(folder: Path, kind: str, reward_mode: str | None = None) -> Path:
    """The checkpoint, checked to say what it is: any tool must tell base/SFT/GRPO apart."""
    try:
        info = json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise SandmleError(f"{folder}: no readable {METADATA_FILE}") from None
    if info.get("kind") != kind or info.get("step") is None:
        raise SandmleError(f"{folder}: {METADATA_FILE} says kind {info.get('kind')!r}, not {kind}")
    if reward_mode is not None and info.get("reward_mode") != reward_mode:
        raise SandmleError(f"{folder}: reward_mode {info.get('reward_mode')!r}, not {reward_mode}")
    return folder


def child(run: Run, stage: str, args: list[str]) -> None:
    """``python ARGS`` with output to ``<out>/logs/<stage>.log``; a line every ``HEARTBEAT_S``.
    A rerun appends under a header: an interrupted attempt's log is kept."""
    log = run.path("logs", f"{stage}.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    offset = log.stat().st_size if log.is_file() else 0
    start = time.monotonic()
    with log.open("a", encoding="utf-8") as sink:
        sink.write(f"{'' if offset == 0 else chr(10)}=== {stage}, {time.strftime('%F %T')} ===\n")
        sink.flush()
        launch = run.profile.launch if args[:2] == ["-m", TRAIN_CLI] else None
        proc = subprocess.Popen(
            [*(launch or [sys.executable]), *args], stdout=sink, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        try:
            while proc.poll() is None:
                try:
                    proc.wait(timeout=HEARTBEAT_S)
                except subprocess.TimeoutExpired:
                    elapsed = int(time.monotonic() - start)
                    run.console.print(f"  {stage}: {elapsed // 60}:{elapsed % 60:02d} elapsed, "
                                      f"log {log}", highlight=False)  # fmt: skip
        except BaseException:
            proc.terminate()
            proc.wait()
            raise
    if proc.returncode != 0:
        with log.open("rb") as text:
            text.seek(offset)
            last = reason(text.read().decode("utf-8", errors="replace"))
        raise SandmleError(f"{stage} failed (exit {proc.returncode}): {last} (log: {log})")


def reason(text: str) -> str:
    """The line of a child's log that says why it failed: ``error:`` or the exception line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("error:") or re.match(r"^[A-Za-z_.]*(Error|Exception)\b", line):
            return line[:200]
    return lines[-1][:200] if lines else "no output"


def roles(run: Run) -> dict[str, str]:
    """Role → model folder or id, in the report's order."""
    out = {"base": base_model(run), "SFT": (run.done("sft") or {})["checkpoint"]}
    for arm in run.profile.grpo.arms():
        out[arm.role] = (run.done(arm.stage) or {})["checkpoint"]
    return out


def fixed_roles(run: Run) -> dict[str, str]:
    """Role → Inspect model of each fixed toolkit option the eval runs (``fixed_options``)."""
    from sandmle.harness.automl_program import TOOLKIT_OPTIONS

    spec = run.profile.eval
    if not (run.profile.episode.toolkit and spec.fixed_options and "heldout" in spec.benchmarks):
        return {}
    return {f"{FIXED_PREFIX}{option}": f"sandmle/toolkit/{option}" for option in TOOLKIT_OPTIONS}


def model_name(run: Run, model: str) -> str:
    return f"{run.profile.eval.provider}/{model}"


def benchmark_entries(run: Run) -> list[BenchmarkEntry]:
    chosen = run.profile.replicas.competitions  # named: no warning for each lite one left out
    picked = {"competitions": ",".join(chosen)} if chosen else {}
    data = {"heldout": {"pack": str(run.path("packs", "heldout"))},
            "replicas": {"data_dir": str(run.path("replicas"))} | picked,
            "dojo": {"data_dir": str(run.path("replicas", "mle-dojo"))}}  # fmt: skip
    episode = run.profile.episode.task_args()
    return [
        BenchmarkEntry(name=alias, task=benchmark(alias).task, args={**data[alias], **episode})
        for alias in run.profile.eval.benchmarks
    ]


def eval_model_args(run: Run) -> dict[str, Any]:
    """Every eval model's ``-M`` args, with the episode's sampling as its generate config."""
    from inspect_ai.model import GenerateConfig

    spec = run.profile.eval
    config = GenerateConfig(**run.profile.episode.generate_args(), **spec.generate)
    return {**spec.model_args, "config": config}


def eval_study(run: Run) -> StudyConfig:
    spec = run.profile.eval
    model_args = eval_model_args(run)
    return StudyConfig(
        name=f"{run.profile.name}-eval",
        log_dir=str(run.path("eval")),
        models=[
            ModelEntry(model=model_name(run, m), model_args=model_args)
            for role, m in roles(run).items()
            if role != "base" or spec.base_cells == "all"
        ],
        scaffolds=[
            spec.scaffolds[0].model_copy(update={"args": run.profile.episode.solver_args}),
            *spec.scaffolds[1:],
        ],
        benchmarks=benchmark_entries(run),
        epochs=spec.epochs,
        limit=spec.limit,
        max_samples=spec.max_samples,
        max_tasks=spec.max_tasks,
    )


def held_out_study(
    run: Run, name: str, log_dir: str, models: list[ModelEntry], epochs: int | None
) -> StudyConfig:
    """The eval's trained scaffold on the held-out pack alone, for ``models``, logged in
    ``log_dir`` beside ``eval`` (one ``eval_set`` folder holds one set of tasks)."""
    study = eval_study(run)
    return study.model_copy(
        update={
            "name": f"{run.profile.name}-{name}",
            "log_dir": str(run.path(log_dir)),
            "models": models,
            "scaffolds": [
                study.scaffolds[0].model_copy(update={"epochs": epochs, "benchmarks": None})
            ],
            "benchmarks": [b for b in study.benchmarks if b.key == "heldout"],
        }
    )


def fixed_study(run: Run) -> StudyConfig | None:
    """The fixed toolkit options on the held-out pack, trained scaffold, one epoch (each
    option is one deterministic command), logged in ``eval-fixed``."""
    fixed = fixed_roles(run)
    if not fixed:
        return None
    return held_out_study(
        run, "fixed", FIXED_LOGS, [ModelEntry(model=m) for m in fixed.values()], 1
    )


def base_study(run: Run) -> StudyConfig | None:
    """The base model on the held-out pack under the trained scaffold, with its epochs, logged
    in ``eval-base`` (``eval.base_cells: trained``; with ``all`` it is in ``eval``'s cells)."""
    if run.profile.eval.base_cells == "all":
        return None
    model = ModelEntry(model=model_name(run, base_model(run)), model_args=eval_model_args(run))
    return held_out_study(run, "base", BASE_LOGS, [model], run.profile.eval.scaffolds[0].epochs)


def write_manifest(run: Run) -> Path:
    manifest = {
        "profile": run.profile.name,
        "roles": {role: model_name(run, m) for role, m in roles(run).items()} | fixed_roles(run),
        "trained_scaffold": run.profile.episode.solver,
        "toolkit": run.profile.episode.toolkit,
        "scaffolds": [s.solver for s in run.profile.eval.scaffolds],
        "benchmarks": {benchmark(b).log_name: b for b in run.profile.eval.benchmarks},
        "packs": run.done("packs"),
        "runs": {
            name: str(run.path("runs", name))
            for name in stage_names(run.profile)
            if name.startswith("grpo")
        },  # fmt: skip
    }
    path = run.path(MANIFEST)
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def stage_eval(run: Run) -> dict[str, Any]:
    write_manifest(run)
    studies = [s for s in (eval_study(run), base_study(run), fixed_study(run)) if s is not None]
    cells = sum(len(study.models) * len(study.cells()) for study in studies)
    ok = True
    for study in studies:
        tasks = study_tasks(study)
        total = sample_count(study, tasks)
        folder = study.resolved_log_dir()
        with ProgressLines(folder, total, run.console, enabled=not run.console.is_terminal):
            if run.profile.eval.backend == "ray":
                from sandmle.study.ray_eval import run_study_on_ray

                ok = run_study_on_ray(study, run.profile.eval.ray) and ok
            else:
                ok = run_study(study, display=display(), tasks=tasks) and ok
    health = [eval_health(study.resolved_log_dir()) for study in studies]
    totals = {key: sum(h[key] for h in health) for key in health[0]}
    return {"success": ok, "cells": cells, **totals, "log_dir": str(run.path("eval"))}


def eval_health(log_dir: Path) -> dict[str, int]:
    """Logs, those not ``success``, samples, sample errors, and agent errors (a crashed agent
    whose sample the harness's guard still scored: Inspect's status does not show those)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    counts = dict.fromkeys(("logs", "unfinished", "samples", "sample_errors", "agent_errors"), 0)
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        counts["logs"] += 1
        counts["unfinished"] += log.status != "success"
        for sample in log.samples or []:
            counts["samples"] += 1
            counts["sample_errors"] += sample.error is not None
            counts["agent_errors"] += bool(sample.store.get(AGENT_ERROR_KEY))
    return counts


def stage_report(run: Run) -> dict[str, Any]:
    from sandmle.study.reproduce_report import write_reproduce_report

    write_manifest(run)
    html = write_reproduce_report(run.out, run.console)
    return {"report": str(html)}


def display() -> Any:
    """Inspect's live display needs a terminal; without one, plain lines."""
    return None if sys.stdout.isatty() else "plain"
