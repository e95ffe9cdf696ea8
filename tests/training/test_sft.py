"""SFT from a real Inspect log: a scripted mockllm episode of the synthetic task → one step."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.training.sft import SFTRunFile, train_sft, trajectories

COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"


def scripted(tool: str, arguments: dict) -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", tool, arguments)
    output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return output


def episode_log(pack: Path, out: Path) -> Path:
    model = get_model(
        "mockllm/model",
        custom_outputs=[
            scripted("bash", {"command": COPY}),
            scripted("submit", {"answer": "done"}),
        ],
    )
    inspect_eval(
        synthetic(pack=str(pack), tasks="plant-watering"),
        model=model,
        log_dir=str(out),
        display="none",
    )
    return out


def test_trajectories_keep_valid_episodes_as_chat_rows(pack_dir: Path, tmp_path: Path) -> None:
    logs = episode_log(pack_dir, tmp_path / "logs")
    (row,) = trajectories([logs], keep="valid")
    roles = [m["role"] for m in row["messages"]]
    assert roles[:2] == ["system", "user"] and roles.count("tool") == 2
    call = row["messages"][2]["tool_calls"][0]["function"]
    assert call["name"] == "bash" and json.loads(call["arguments"]) == {"command": COPY}
    assert {t["function"]["name"] for t in json.loads(row["tools"])} >= {"bash", "submit"}
    assert trajectories([logs], keep="medal") == []  # the sample submission wins no medal


def test_one_sft_step_on_a_real_log(tiny_model: Path, pack_dir: Path, tmp_path: Path) -> None:
    logs = episode_log(pack_dir, tmp_path / "logs")
    run = SFTRunFile(
        model=str(tiny_model),
        logs=[str(logs)],
        training={
            "output_dir": str(tmp_path / "sft"),
            "max_steps": 1,
            "per_device_train_batch_size": 1,
            "learning_rate": 1e-3,
            "assistant_only_loss": True,
            "max_length": 8192,
            "use_cpu": True,
            "report_to": "none",
            "save_strategy": "no",
        },
    )
    folder = train_sft(run)
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    assert (folder / "model.safetensors").read_bytes() != (
        tiny_model / "model.safetensors"
    ).read_bytes()
    from sandmle.specs.checkpoint import checkpoint_info, checkpoint_label

    info = checkpoint_info(f"hf/{folder}")
    assert info.kind == "sft" and info.step == 1 and info.data == str(logs)
    assert info.base_model == str(tiny_model) and checkpoint_label(info) == "SFT step 1"


def test_teacher_reasoning_is_kept_and_trained_with_qwen3s_template(tiny_model: Path) -> None:
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
    )
    from transformers import AutoTokenizer
    from trl.chat_template_utils import get_training_chat_template

    from sandmle.env.chat import chat_dicts
    from tests.training.test_chat import qwen3_template

    teacher = ChatMessageAssistant(
        content=[
            ContentReasoning(reasoning="a forest fits this"),
            ContentText(text="Training now."),
        ]
    )
    messages = chat_dicts([ChatMessageUser(content="Solve it."), teacher])
    assert messages[1]["content"] == "<think>\na forest fits this\n</think>\n\nTraining now."
    other = chat_dicts([teacher], reasoning_tag="thought")[0]["content"]
    assert other.startswith("<thought>\na forest fits this\n</thought>")

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.chat_template = qwen3_template()
    marked = get_training_chat_template(
        tokenizer
    )  # what SFTTrainer swaps in for assistant_only_loss
    out = tokenizer.apply_chat_template(
        messages, chat_template=marked, return_dict=True, return_assistant_tokens_mask=True
    )
    trained = [t for t, m in zip(out["input_ids"], out["assistant_masks"], strict=True) if m]
    text = tokenizer.decode(trained)
    assert "a forest fits this" in text and "Training now." in text and "Solve it" not in text


def test_sft_runs_a_toolkit_teacher_from_a_run_file(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    """``sandmle train sft --config FILE`` with a toolkit teacher: its episodes run the run
    file's episode spec (the toolkit in the sandbox, named in the prompt, one turn), and SFT
    learns the ``python automl.py FAMILY`` call from them."""
    import yaml
    from inspect_ai.log import read_eval_log
    from typer.testing import CliRunner

    from sandmle.training.cli import train_app

    run = {
        "model": str(tiny_model),
        "keep": "valid",
        "teacher": {
            "models": ["sandmle/toolkit/table"],  # one episode: a family the task has
            "pack": str(pack_dir),
            "tasks": ["plant-watering"],
            "episode": {"solver": "react", "max_turns": 1, "limits": {"toolkit": True}},
        },
        "training": {
            "output_dir": str(tmp_path / "sft"),
            "max_steps": 1,
            "per_device_train_batch_size": 1,
            "max_length": 8192,
            "use_cpu": True,
            "report_to": "none",
            "save_strategy": "no",
        },
    }
    config = tmp_path / "sft.yaml"
    config.write_text(yaml.safe_dump(run), encoding="utf-8")
    result = CliRunner().invoke(train_app, ["sft", "--config", str(config)])
    assert result.exit_code == 0, result.output
    (log_file,) = (tmp_path / "sft" / "teacher-logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.eval.task_args["toolkit"] is True and log.eval.model == "sandmle/toolkit/table"
    (sample,) = log.samples
    task_text = next(m.text for m in sample.messages if m.role == "user")
    assert "automl.py" in task_text  # the toolkit's prompt
    calls = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
    assert "automl.py" in str(calls[0].arguments)
    assert len(calls) == 1  # max_turns 1: the episode ends after the call, as the eval's does
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0
    assert (tmp_path / "sft" / "final" / "model.safetensors").is_file()
