"""The schema of a study file (``sandmle/configs/study/<name>.yaml``): models × scaffolds ×
benchmarks, run by ``sandmle study``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from sandmle.specs.files import Strict, load_file
from sandmle.specs.training import RayCluster


class ModelEntry(Strict):
    """One model (checkpoint) of the study."""

    model: str
    """Inspect model string, e.g. ``vllm/checkpoints/grpo-step-200`` or ``sandmle/heuristic``."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    """Model arguments (``-M``)."""


class ScaffoldEntry(Strict):
    """One scaffold (solver) of the study."""

    solver: str
    """A sandmle scaffold (react, aide, aira_greedy, aira_mcts, aira_evo) or any Inspect solver."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Solver arguments (``-S``)."""
    epochs: int | None = Field(default=None, ge=1)
    """Epochs of this scaffold's cells (the study's when None): a paired test on the scaffold
    that matters most may need more samples than the rest can afford."""
    benchmarks: list[str] | None = Field(default=None, min_length=1)
    """Names of the study's benchmarks this scaffold runs on; every benchmark when None. A
    slow search scaffold can then run on a few replicas while the paired tests get the big pack."""
    limit: int | None = Field(default=None, ge=1)
    """Only the first N samples of each of this scaffold's benchmarks (within the study's
    ``limit``): a slow search scaffold on part of a pack whose every task the paired test of
    the trained scaffold needs."""


class BenchmarkEntry(Strict):
    """One benchmark of the study."""

    task: str
    """A sandmle task: synthetic, mle_bench_lite, mle_bench, mle_dojo."""
    name: str | None = None
    """How scaffold entries name it (two benchmarks of one task need two names); the task when
    omitted."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Task arguments (``-T``), e.g. ``pack`` or ``data_dir``."""

    @property
    def key(self) -> str:
        """The benchmark's name in the study."""
        return self.name or self.task


class StudyConfig(Strict):
    """A cross-scaffold generalization study."""

    name: str
    """Study name; names the default log dir."""
    models: list[ModelEntry] = Field(min_length=1)
    """Models to compare."""
    scaffolds: list[ScaffoldEntry] = Field(min_length=1)
    """Scaffolds each model runs under."""
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)
    """Benchmarks each (model, scaffold) is judged on (a scaffold may name a subset)."""
    log_dir: str | None = None
    """Where logs go (default ``logs/study-<name>``); rerunning resumes there."""
    epochs: int = Field(default=1, ge=1)
    """Runs per sample."""
    limit: int | None = None
    """Only the first N samples of each benchmark."""
    sandbox: Literal["bwrap", "docker", "local"] = "bwrap"
    """Sandbox for every benchmark (a benchmark's own ``args.sandbox`` wins)."""
    max_samples: int | None = None
    """Samples run at once per task."""
    max_tasks: int | None = None
    """Tasks (cells of the matrix) run at once."""
    log_buffer: int | None = 1
    """Samples buffered before each log write; 1 loses the least work to an interruption."""
    retry_attempts: int = 3
    """How often eval_set retries failed work within one invocation."""

    @model_validator(mode="after")
    def _scaffold_benchmarks_exist(self) -> StudyConfig:
        keys = [bench.key for bench in self.benchmarks]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        if twice:
            raise ValueError(f"benchmarks {twice} appear twice: give each a name")
        tasks = set(keys)
        for scaffold in self.scaffolds:
            unknown = sorted(set(scaffold.benchmarks or ()) - tasks)
            if unknown:
                raise ValueError(
                    f"scaffold {scaffold.solver}: benchmarks {unknown} are not among the study's "
                    f"({sorted(tasks)})"
                )
        return self

    def cells(self) -> list[tuple[BenchmarkEntry, ScaffoldEntry]]:
        """The (benchmark, scaffold) pairs the study runs, in order."""
        return [(bench, scaffold) for bench in self.benchmarks for scaffold in self.scaffolds
                if scaffold.benchmarks is None or bench.key in scaffold.benchmarks]  # fmt: skip

    def resolved_log_dir(self) -> Path:
        return Path(self.log_dir or f"logs/study-{self.name}")


def load_study(path: str | Path) -> StudyConfig:
    """Read and validate a study file; one-line errors for bad input."""
    return load_file(StudyConfig, path)


class EvalRay(RayCluster):
    """The Ray cluster an evaluation's cells run on (``eval.backend: ray``): each (model,
    benchmark, scaffold) cell is one Ray task, Inspect's ``eval_set`` on one node, placed by
    Ray's scheduler with the resources it declares; a cell whose node died runs again on
    another and resumes from its log (which must be on a folder every node shares)."""

    cpus_per_cell: float = Field(default=1.0, ge=0)
    gpus_per_cell: float = Field(default=0.0, ge=0)
    """GPUs a cell's model needs (``vllm``/``hf`` on a GPU node)."""
    memory_per_cell_mb: int = Field(default=0, ge=0)
    """Memory a cell declares (0: none declared)."""
