"""Every preset value pinned against the reference config it comes from (file and line).

AIRA: facebookresearch/aira-dojo @ c795d86, ``src/dojo/configs/solver/`` (a ``mlebench/`` file
merged over its base, as Hydra composes them). AIDE ``reference``: WecoAI/aideml @ 9643875
``aide/utils/config.yaml``; ``mle-bench``: openai/mle-bench main (``agents/aide/config.yaml``
as of a0e3b23, unchanged at 783b15a). A preset field with no pin here fails, so a new
setting must name its source.

TASK_CLOCK: no preset sets ``exec_timeout``: a script run gets the seconds per command the task
states (``-T command_timeout`` or its profile's), so the agent is told the clock that runs
(``tests/scaffolds/test_command_clock.py``); the references' own values are named in the pins.
"""

from __future__ import annotations

from dataclasses import asdict, fields

import pytest

from sandmle.scaffolds import aira_presets
from sandmle.scaffolds.aide import PRESETS as AIDE
from sandmle.scaffolds.aide import resolve_settings

AIRA_SAMPLING_DEFAULT = {"temperature": None, "top_p": None}  # generation_kwargs: {}
PINS: dict[str, dict[str, dict[str, object]]] = {
    "aira_greedy/reference": {
        "steps": 500,  # greedy.yaml:12 step_limit
        "num_drafts": 5,  # mlebench/greedy.yaml:20
        "debug_prob": 1.0,  # mlebench/greedy.yaml:17
        "max_debug_depth": 20,  # mlebench/greedy.yaml:16
        "exec_timeout": None,  # the task's clock, not greedy.yaml:14's 14400 (see TASK_CLOCK)
        "time_limit": 86400,  # greedy.yaml:15 time_limit_secs
        "use_complexity": False,  # greedy.yaml:26
        "retries": 3,  # mlebench/greedy.yaml:21 max_llm_call_retries
        "sampling": {
            **AIRA_SAMPLING_DEFAULT,  # operators/mlebench/aira_operators/{draft,improve,debug}.yaml:9
            "analyze_temperature": 0.5,  # operators/mlebench/aide_operators/analyze.yaml:10
            "crossover_temperature": None,  # greedy has no crossover
        },
    },
    "aira_mcts/reference": {
        "steps": 10000,  # mlebench/mcts.yaml:17
        "num_children": 5,  # mlebench/mcts.yaml:18
        "uct_c": 0.25,  # mlebench/mcts.yaml:19
        "max_debug_depth": 20,  # mlebench/mcts.yaml:20
        "max_debug_time": 1e9,  # mlebench/mcts.yaml:22
        "exec_timeout": None,  # the task's clock, not mcts.yaml:32's 14400
        "time_limit": 86400,  # mcts.yaml:33
        "use_complexity": False,  # mlebench/mcts.yaml:25
        "retries": 3,  # mcts.yaml:20
        "sampling": {
            "temperature": 0.6,  # mlebench/mcts.yaml:31 (draft; improve :36, debug :41)
            "top_p": 0.95,  # mlebench/mcts.yaml:32 (improve :37, debug :42)
            "analyze_temperature": 0.5,  # mlebench/mcts.yaml:46
            "crossover_temperature": None,  # MCTS has no crossover
        },
    },
    "aira_evo/reference": {
        "steps": 10000,  # mlebench/evo.yaml:14
        "num_islands": 1,  # mlebench/evo.yaml:16
        "max_island_size": 500,  # mlebench/evo.yaml:17
        "crossover_prob": 0.5,  # mlebench/evo.yaml:18
        "migration_prob": 0.0,  # mlebench/evo.yaml:19
        "initial_temp": 1.0,  # mlebench/evo.yaml:20
        "final_temp": 1.0,  # mlebench/evo.yaml:21
        "num_generations_till_migration": 999,  # mlebench/evo.yaml:22
        "num_generations_till_crossover": 2,  # mlebench/evo.yaml:23
        "num_generations": 100,  # mlebench/evo.yaml:24
        "individuals_per_generation": 5,  # mlebench/evo.yaml:25
        "max_debug_depth": 10,  # mlebench/evo.yaml:27 (over evo.yaml:37's 5)
        "max_debug_time": 21600,  # mlebench/evo.yaml:28
        "exec_timeout": None,  # the task's clock, not evo.yaml:42's 14400
        "time_limit": 86400,  # evo.yaml:43
        "use_complexity": False,  # mlebench/evo.yaml:31
        "retries": 3,  # evo.yaml:38
        "sampling": {
            "temperature": 0.6,  # mlebench/evo.yaml:37 (draft; improve :42, debug :47)
            "top_p": 0.95,  # mlebench/evo.yaml:38 (improve :43, debug :48)
            "analyze_temperature": 0.5,  # mlebench/evo.yaml:52
            "crossover_temperature": 0.5,  # mlebench/evo.yaml:56
        },
    },
    "aide/reference": {
        "steps": 20,  # aide/utils/config.yaml:36 agent.steps
        "num_drafts": 5,  # aide/utils/config.yaml:58
        "debug_prob": 0.5,  # aide/utils/config.yaml:57
        "max_debug_depth": 3,  # aide/utils/config.yaml:56
        "exec_timeout": None,  # the task's clock, not aide/utils/config.yaml:23's 3600
        "time_limit": None,  # aideml has no search time limit
        "temperature": 0.5,  # aide/utils/config.yaml:47 (code), :52 (feedback)
        "mle_bench_fork": False,  # aideml itself: aide/agent.py:95-115, :328-332
    },
    "aide/mle-bench": {
        "steps": 500,  # agents/aide/config.yaml:2 step_count (agent.steps :26)
        "num_drafts": 5,  # not overridden there: aideml's config.yaml:58
        "debug_prob": 1.0,  # agents/aide/config.yaml:15
        "max_debug_depth": 20,  # agents/aide/config.yaml:14
        "exec_timeout": None,  # the task's: agents/aide/config.yaml:17's 32400 is the
        # mle-bench profile's command_timeout, so -T profile=mle-bench runs what MLE-bench ran
        "time_limit": 86400,  # agents/aide/config.yaml:3 (agent.time_limit :16)
        "temperature": 0.5,  # not overridden for gpt-4o: aideml's config.yaml:47, :52
        "mle_bench_fork": True,  # agents/aide/additional_notes.txt:4-7 (time, steps each step)
    },
}


def shipped() -> dict[str, dict[str, object]]:
    presets = {f"aira_greedy/{k}": v for k, v in aira_presets.GREEDY.items()}
    presets |= {f"aira_mcts/{k}": v for k, v in aira_presets.MCTS.items()}
    presets |= {f"aira_evo/{k}": v for k, v in aira_presets.EVO.items()}
    presets |= {f"aide/{k}": v for k, v in AIDE.items()}
    return {name: asdict(settings) for name, settings in presets.items()}


@pytest.mark.parametrize("name", sorted(shipped()))
def test_every_preset_value_is_the_reference_value(name: str):
    assert name in PINS, f"preset {name} has no pinned source"
    assert shipped()[name] == PINS[name]


def test_every_pinned_preset_ships():
    assert set(PINS) == set(shipped())


def test_solver_arguments_left_out_take_the_preset():
    with pytest.raises(ValueError, match="unknown AIRA settings"):
        aira_presets.resolve(aira_presets.MCTS, "reference", depth=3)
    with pytest.raises(ValueError, match="unknown AIRA preset"):
        aira_presets.resolve(aira_presets.EVO, "mle-bench")
    mcts = aira_presets.resolve(aira_presets.MCTS, "reference", uct_c=None, num_children=2)
    assert (mcts.uct_c, mcts.num_children) == (0.25, 2)
    assert resolve_settings("mle-bench", steps=None) == AIDE["mle-bench"]
    assert {f.name for f in fields(aira_presets.Sampling)} == set(AIRA_SAMPLING_DEFAULT) | {
        "analyze_temperature",
        "crossover_temperature",
    }


def test_sampling_reaches_the_calls():
    from sandmle.scaffolds.aira import model_settings

    evo = model_settings(aira_presets.EVO["reference"].sampling, 3, 16_000, False)
    assert (evo.code.temperature, evo.code.top_p, evo.review.temperature) == (0.6, 0.95, 0.5)
    assert evo.per_operator["crossover"].temperature == 0.5
    greedy = model_settings(aira_presets.GREEDY["reference"].sampling, 3, 16_000, False)
    assert (greedy.code.temperature, greedy.code.top_p, greedy.per_operator) == (None, None, {})
