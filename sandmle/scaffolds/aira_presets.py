"""The AIRA scaffolds' presets: aira-dojo's released MLE-bench configs, value for value.

Source: facebookresearch/aira-dojo @ c795d86, ``src/dojo/configs/solver/`` (``mlebench/*.yaml``
over the base ``greedy.yaml``, ``mcts.yaml``, ``evo.yaml``); the file and line of each value is
written next to it and pinned by ``tests/scaffolds/test_presets.py``. A solver argument left at
None takes its preset's value. One value is not aira-dojo's: ``exec_timeout`` is None, the
task's ``command_timeout`` (the task states the clock the agent runs on).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal, TypeVar

Preset = Literal["reference"]


@dataclass(frozen=True)
class Sampling:
    """Sampling of the operator calls, the analysis and (evo) the crossover (None: client's)."""

    temperature: float | None = None
    top_p: float | None = None
    analyze_temperature: float | None = 0.5  # aide_operators/analyze.yaml:10
    crossover_temperature: float | None = None


@dataclass(frozen=True)
class GreedySettings:
    steps: int = 500  # greedy.yaml:12 step_limit (the blank root takes step 0)
    num_drafts: int = 5  # mlebench/greedy.yaml:20
    debug_prob: float = 1.0  # mlebench/greedy.yaml:17
    max_debug_depth: int = 20  # mlebench/greedy.yaml:16
    exec_timeout: int | None = None  # the task's clock (greedy.yaml:14 says 14400)
    time_limit: float | None = 86400  # greedy.yaml:15 time_limit_secs
    use_complexity: bool = False  # greedy.yaml:26
    retries: int = 3  # mlebench/greedy.yaml:21 max_llm_call_retries
    # aira_operators/{draft,improve,debug}.yaml:9 generation_kwargs {}; analyze 0.5
    sampling: Sampling = Sampling()


@dataclass(frozen=True)
class MctsSettings:
    steps: int = 10000  # mlebench/mcts.yaml:17 step_limit (the blank root takes step 0)
    num_children: int = 5  # mlebench/mcts.yaml:18
    uct_c: float = 0.25  # mlebench/mcts.yaml:19
    max_debug_depth: int = 20  # mlebench/mcts.yaml:20
    max_debug_time: float | None = 1e9  # mlebench/mcts.yaml:22 ("disabled")
    exec_timeout: int | None = None  # the task's clock (mcts.yaml:32 says 14400)
    time_limit: float | None = 86400  # mcts.yaml:33
    use_complexity: bool = False  # mlebench/mcts.yaml:25
    retries: int = 3  # mcts.yaml:20
    # mlebench/mcts.yaml:27-46: draft/improve/debug 0.6 / 0.95, analyze 0.5
    sampling: Sampling = Sampling(temperature=0.6, top_p=0.95)


@dataclass(frozen=True)
class EvoSettings:
    steps: int = 10000  # mlebench/evo.yaml:14 step_limit (the blank root takes step 0)
    num_islands: int = 1  # mlebench/evo.yaml:16
    max_island_size: int = 500  # mlebench/evo.yaml:17
    crossover_prob: float = 0.5  # mlebench/evo.yaml:18
    migration_prob: float = 0.0  # mlebench/evo.yaml:19
    initial_temp: float = 1.0  # mlebench/evo.yaml:20
    final_temp: float = 1.0  # mlebench/evo.yaml:21
    num_generations_till_migration: int = 999  # mlebench/evo.yaml:22
    num_generations_till_crossover: int = 2  # mlebench/evo.yaml:23
    num_generations: int = 100  # mlebench/evo.yaml:24
    individuals_per_generation: int = 5  # mlebench/evo.yaml:25
    max_debug_depth: int = 10  # mlebench/evo.yaml:27
    max_debug_time: float | None = 21600  # mlebench/evo.yaml:28
    exec_timeout: int | None = None  # the task's clock (evo.yaml:42 says 14400)
    time_limit: float | None = 86400  # evo.yaml:43
    use_complexity: bool = False  # mlebench/evo.yaml:31
    retries: int = 3  # evo.yaml:38
    # mlebench/evo.yaml:33-56: operators 0.6 / 0.95, analyze and crossover 0.5
    sampling: Sampling = Sampling(temperature=0.6, top_p=0.95, crossover_temperature=0.5)


GREEDY: dict[Preset, GreedySettings] = {"reference": GreedySettings()}
MCTS: dict[Preset, MctsSettings] = {"reference": MctsSettings()}
EVO: dict[Preset, EvoSettings] = {"reference": EvoSettings()}

S = TypeVar("S", GreedySettings, MctsSettings, EvoSettings)


def resolve(presets: dict[Preset, S], preset: str, **overrides: Any) -> S:
    """The preset's settings with every non-None override applied."""
    if preset not in presets:
        raise ValueError(f"unknown AIRA preset {preset!r}: use one of {', '.join(presets)}")
    base = presets[preset]  # type: ignore[index,unused-ignore]  # a str, checked above
    known = {f.name for f in fields(base)}
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"unknown AIRA settings: {', '.join(sorted(unknown))}")
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})
