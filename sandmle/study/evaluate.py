"""``sandmle eval``: a thin wrapper over Inspect's ``eval_set`` for users who prefer one command.

``eval_set`` writes to a log dir and, run again on the same dir, resumes: finished samples are
kept and only missing work runs. Everything else is Inspect's own behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sandmle.errors import SandmleError

if TYPE_CHECKING:
    from inspect_ai.util import DisplayType

PACKAGE = "sandmle"


def parse_kv(pairs: list[str], flag: str) -> dict[str, Any]:
    """``["k=v", ...]`` → ``{k: yaml(v)}``, as Inspect's ``-T``/``-S``/``-M`` parse values."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SandmleError(f"{flag} expects key=value, got {pair!r}")
        try:
            out[key] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[key] = value
    return out


def _ours(name: str, args: dict[str, Any]) -> Any | None:
    """Build one of sandmle's registered tasks/solvers by name, or None if it is not ours.

    Built here rather than by name in Inspect, because a ``sandmle/`` folder in the working
    dir (a checkout) would make Inspect read ``sandmle/<name>`` as a file path."""
    import sandmle._registry as registry

    if "/" in name and not name.startswith(f"{PACKAGE}/"):
        return None
    factory = getattr(registry, name.removeprefix(f"{PACKAGE}/"), None)
    return factory(**args) if callable(factory) else None


def build_task(benchmark: str, task_args: dict[str, Any]) -> Any:
    task = _ours(benchmark, task_args)
    if task is None:
        raise SandmleError(f"unknown benchmark {benchmark!r}; for other tasks use `inspect eval`")
    return task


def build_solver(name: str | None, solver_args: dict[str, Any]) -> Any:
    """A solver object: ours by name, ``file.py@function`` from a file, else Inspect's spec."""
    if name is None:
        return None
    ours = _ours(name, solver_args)
    if ours is not None:
        return ours
    path, sep, function = name.partition("@")
    if sep and path.endswith(".py"):
        return _from_file(Path(path), function)(**solver_args)
    from inspect_ai.solver import SolverSpec

    return SolverSpec(name, solver_args)


def _from_file(path: Path, function: str) -> Any:
    import importlib.util

    if not path.is_file():
        raise SandmleError(f"solver file {path} does not exist")
    spec = importlib.util.spec_from_file_location(f"sandmle_user_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    factory = getattr(module, function, None)
    if not callable(factory):
        raise SandmleError(f"{path} has no solver {function!r}")
    return factory


def run_eval(
    benchmark: str,
    *,
    model: str,
    solver: str | None,
    task_args: dict[str, Any],
    solver_args: dict[str, Any],
    model_args: dict[str, Any],
    log_dir: Path,
    limit: int | None = None,
    epochs: int | None = None,
    max_samples: int | None = None,
    max_sandboxes: int | None = None,
    display: DisplayType | None = None,
) -> bool:
    """Run (or resume) one benchmark under one model and solver; True when all succeeded."""
    from inspect_ai import eval_set

    success, _ = eval_set(
        tasks=build_task(benchmark, task_args),
        model=model,
        model_args=model_args,
        solver=build_solver(solver, solver_args),
        log_dir=str(log_dir),
        limit=limit,
        epochs=epochs,
        max_samples=max_samples,
        max_sandboxes=max_sandboxes,
        display=display,
    )
    return bool(success)
