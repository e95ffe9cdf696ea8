"""AIDE's decisions replay aideml's own runs, step for step (AIRA's: ``test_replay_aira``).

``fixtures/replay/aideml_journal.json`` was recorded by running aideml's ``Agent.step``
(WecoAI/aideml @ 9643875) from its unmodified source, with a scripted model whose review of
the i-th node returns the i-th scheduled outcome (buggy, or good with a metric), under
``random.seed(seed)``; ``record_aideml.py`` there is the recorder (the README says how to run
it). Replaying the same outcomes under the same seed through ``aide_choice`` must give the
same operators on the same parents.

Both references draw from the one global RNG also when writing a prompt: aideml shuffles its
11-name package list in every draft prompt (``Agent._prompt_environment``), aira-dojo in every
draft, improve and debug prompt (``cfg.available_packages``). The replay makes the same draws
so the policy's own draws line up; sandmle's prompts list the installed packages unshuffled.
"""

from __future__ import annotations

import json
from pathlib import Path
from random import Random

import pytest

from sandmle.harness.search_tree import SearchNode
from sandmle.scaffolds.aide import aide_choice
from sandmle.scaffolds.search import Journal

FIXTURES = Path(__file__).parent / "fixtures" / "replay"
REFERENCE_PACKAGES = 11
"""Length of the package list both references shuffle."""


def replay(run: dict, shuffling: set[str]) -> tuple[list[str], list[int | None]]:
    rng, journal = Random(run["seed"]), Journal(lower_is_better=False)
    operators, parents = [], []
    for step, (is_bug, metric) in enumerate(run["outcomes"]):
        operator, parent = aide_choice(journal, rng, **run["search"])
        if operator in shuffling:
            rng.shuffle(list(range(REFERENCE_PACKAGES)))
        journal.add(
            SearchNode(
                id=step,
                parent=None if parent is None else parent.id,
                parents=[] if parent is None else [parent.id],
                operator=operator,
                step=step,
                is_bug=is_bug,
                metric=metric,
            )
        )
        operators.append(operator)
        parents.append(None if parent is None else parent.id)
    return operators, parents


def runs(name: str) -> list[dict]:
    return json.loads((FIXTURES / name).read_text())["runs"]


@pytest.mark.parametrize("run", runs("aideml_journal.json"), ids=lambda r: f"seed{r['seed']}")
def test_aide_replays_an_aideml_journal(run: dict):
    assert replay(run, {"draft"}) == (run["operators"], run["parents"])


def test_the_aideml_fixture_exercises_every_branch():
    every = [op for r in runs("aideml_journal.json") for op in r["operators"]]
    assert {"draft", "improve", "debug"} <= set(every)
