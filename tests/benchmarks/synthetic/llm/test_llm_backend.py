"""The llm backend end to end on a scripted mockllm: a passing task, and sanity rejections."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import GenerateConfig, get_model
from typer.testing import CliRunner

from sandmle.benchmarks.synthetic.cli import synth_app
from sandmle.benchmarks.synthetic.llm.backend import ProviderError
from sandmle.benchmarks.synthetic.pipeline import TaskOutcome, generate_task
from sandmle.benchmarks.synthetic.sanity import check_task
from sandmle.benchmarks.synthetic.seeds import get_seed
from tests.benchmarks.synthetic.llm import scripted

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
SEED_TASK = "tabular-playground-series-may-2022"


def _generate(tmp_path: Path, answers: list[str]) -> TaskOutcome:
    model = get_model("mockllm/model", custom_outputs=[scripted.output(a) for a in answers])
    return generate_task(
        get_seed(SEED_TASK), 0, 3, tmp_path, "llm", max_attempts=1,
        backend_options={"model": model},
    )  # fmt: skip


def test_scripted_answers_make_a_passing_task(tmp_path: Path):
    answers = [
        '{"domain": {"slug": "Not A Slug"}}',  # rejected once: the retry gets the error
        scripted.blueprint_answer(),
        scripted.code_answer(),
        scripted.description(),
    ]
    outcome = _generate(tmp_path, answers)
    assert outcome.rejections == [] and outcome.task_id == "bridge-corrosion-000"
    root = tmp_path / outcome.task_id
    assert [f for f in check_task(root) if f.severity == "error"] == []  # replays the code too
    assert set(outcome.baselines) == {"constant", "generic", "structure", "oracle"}
    rule = json.loads((root / "generation/rule.json").read_text())
    assert rule["kind"] == "llm-code" and "default_rng(7)" in rule["params"]["code"]
    blueprint = json.loads((root / "generation/blueprint.json").read_text())
    assert blueprint["backend"] == "llm" and blueprint["dna"]["seed_task"] == SEED_TASK
    assert "is_corroded" not in pd.read_csv(root / "prepared/public/test.csv").columns
    assert len(pd.read_csv(root / "prepared/private/answers.csv")) == 1000
    assert not list(tmp_path.glob(".staging-*"))


def test_code_that_leaks_the_label_is_rejected(tmp_path: Path):
    answers = [
        scripted.blueprint_answer(),
        scripted.code_answer(leak=True),
        scripted.description(leak=True),
    ]
    outcome = _generate(tmp_path, answers)
    assert outcome.task_id is None
    [rejection] = outcome.rejections
    rules = {f.rule for f in rejection.failures}
    assert "no_answer_leak" in rules
    assert any("is_corroded" in f.reason for f in rejection.failures)
    assert list(tmp_path.iterdir()) == []  # never kept


def test_an_uninformed_oracle_breaks_the_thresholds(tmp_path: Path):
    answers = [
        scripted.blueprint_answer(),
        scripted.code_answer(oracle="0.5"),
        scripted.description(),
    ]
    outcome = _generate(tmp_path, answers)
    assert outcome.task_id is None
    [failure] = outcome.rejections[0].failures
    assert failure.rule == "noise_bands" and "too close to generic" in failure.reason
    assert list(tmp_path.iterdir()) == []


def test_invalid_json_twice_is_rejected_with_the_error(tmp_path: Path):
    outcome = _generate(tmp_path, ["not json at all", '{"domain": 3}'])
    [failure] = outcome.rejections[0].failures
    assert failure.rule == "generation_runs"
    assert "strategist answer rejected twice" in failure.reason


def test_failing_code_gets_one_retry_then_rejects(tmp_path: Path):
    crash = "```python\nraise SystemExit('no data today')\n```"
    outcome = _generate(tmp_path, [scripted.blueprint_answer(), crash, crash])
    [failure] = outcome.rejections[0].failures
    assert "developer answer rejected twice" in failure.reason
    assert "no data today" in failure.reason


def test_cli_llm_backend_needs_a_model(tmp_path: Path):
    result = CliRunner().invoke(
        synth_app, ["generate", "--n", "1", "--out", str(tmp_path / "p"), "--backend", "llm"]
    )
    assert result.exit_code != 0
    assert "--backend llm needs --model" in str(result.exception)


def test_an_oracle_equal_to_the_answers_is_rejected(tmp_path: Path):
    answers = [
        scripted.blueprint_answer(),
        scripted.code_answer(oracle="y[n_train:]"),
        scripted.description(),
    ]
    outcome = _generate(tmp_path, answers)
    assert outcome.task_id is None
    rules = {f.rule: f.reason for f in outcome.rejections[0].failures}
    assert rules.get("oracle_not_answers") == "the oracle's submission equals the answers"


def test_a_provider_error_is_raised_as_such_not_recorded_as_a_rejection(tmp_path: Path):
    def failing():
        raise ConnectionError("connection refused by provider")
        yield  # a generator, as custom_outputs expects

    model = get_model("mockllm/model", custom_outputs=failing())
    with pytest.raises(ProviderError, match="model provider error .*connection refused"):
        generate_task(
            get_seed(SEED_TASK), 0, 3, tmp_path, "llm", max_attempts=3,
            backend_options={"model": model},
        )  # fmt: skip


class Recording:
    """An Inspect model stand-in that answers from a script and keeps each call's config."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.configs: list[GenerateConfig | None] = []

    async def generate(self, messages: object, config: GenerateConfig | None = None) -> object:
        self.configs.append(config)
        return scripted.output(self.answers.pop(0))


def test_max_tokens_reaches_every_role_call(tmp_path: Path):
    answers = [scripted.blueprint_answer(), scripted.code_answer(), scripted.description()]
    model = Recording(answers)
    outcome = generate_task(
        get_seed(SEED_TASK), 0, 3, tmp_path, "llm", max_attempts=1,
        backend_options={"model": model, "max_tokens": 77},
    )  # fmt: skip
    assert outcome.task_id == "bridge-corrosion-000"
    assert [c.max_tokens if c else None for c in model.configs] == [77, 77, 77]


def test_cli_max_tokens_goes_to_the_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from sandmle.benchmarks.synthetic.llm.backend import LLMBackend

    seen: list[int | None] = []

    def stop(self: LLMBackend, messages: object) -> str:
        seen.append(self.max_tokens)
        raise ProviderError("scripted provider failure")

    monkeypatch.setattr(LLMBackend, "_generate", stop)
    args = ["generate", "--out", str(tmp_path / "p"), "--n", "1", "--backend", "llm",
            "--model", "mockllm/model", "--seeds", SEED_TASK, "--max-tokens", "9"]  # fmt: skip
    result = CliRunner().invoke(synth_app, args)
    assert result.exit_code != 0 and "scripted provider failure" in str(result.exception)
    assert seen == [9]
    procedural = ["generate", "--out", str(tmp_path / "q"), "--n", "1", "--max-tokens", "9"]
    refused = CliRunner().invoke(synth_app, procedural)
    assert refused.exit_code != 0 and "use it with --backend llm" in str(refused.exception)
