"""The one benchmark table: each benchmark's name in profiles and studies, its Inspect task, the
name its logs carry, and how reports label it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sandmle.errors import SandmleError

Alias = Literal["heldout", "replicas", "dojo"]


@dataclass(frozen=True)
class Benchmark:
    alias: Alias
    """Its name in a profile (``eval.benchmarks``, a scaffold entry's ``benchmarks``) and in the
    study a profile runs."""
    task: str
    """The Inspect task (``sandmle/<task>``)."""
    log_name: str
    """The benchmark name the task writes into its logs' metadata."""
    label: str
    """How reports and the leaderboard name it."""


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("heldout", "synthetic", "synthetic", "held-out"),
    Benchmark("replicas", "mle_bench_lite", "mle-bench-lite", "lite"),
    Benchmark("dojo", "mle_dojo", "mle-dojo", "dojo"),
)
"""``heldout``: the held-out synthetic pack; ``replicas``: MLE-bench-lite micro replicas;
``dojo``: the same replicas in MLE-Dojo's layout."""
ALIASES: tuple[Alias, ...] = tuple(b.alias for b in BENCHMARKS)


def benchmark(alias: str) -> Benchmark:
    """The benchmark named ``alias``; an unknown one is a one-line error listing the known."""
    for entry in BENCHMARKS:
        if entry.alias == alias:
            return entry
    raise SandmleError(f"unknown benchmark {alias!r} (known: {', '.join(ALIASES)})")


def by_log_name(log_name: str) -> Benchmark | None:
    """The benchmark whose logs carry ``log_name``; None for one outside the table."""
    return next((b for b in BENCHMARKS if b.log_name == log_name), None)
