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
