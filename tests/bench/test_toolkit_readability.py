"""bench/toolkit_readability.py: the call it scores is the one the model's template writes, and
supervision on the right family raises that family's probability on the prompts it saw."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.bench import bench_script

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

readability = bench_script("toolkit_readability")


def test_the_scored_call_is_the_templates_assistant_tool_call(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from sandmle.env.chat import parse_tool_calls
    from sandmle.training.tiny import build_tiny_model

    tokenizer = AutoTokenizer.from_pretrained(build_tiny_model(tmp_path / "model"))
    text = tokenizer.decode(readability.call_ids(tokenizer, "images"))
    assert text.endswith(tokenizer.eos_token)
    _, [call] = parse_tool_calls(text.removesuffix(tokenizer.eos_token))
    assert (call.function, call.arguments) == ("bash", {"command": "python automl.py images"})


def test_supervision_raises_the_right_familys_probability(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandmle.training.tiny import build_tiny_model
    from tests.conftest import FIXTURES

    pack = tmp_path / "pack"
    for task in ("plant-watering", "bike-rentals"):  # both tabular: the right call is `table`
        shutil.copytree(FIXTURES / task, pack / task)
    model = build_tiny_model(tmp_path / "model")
    argv = ["toolkit_readability.py", str(pack), str(pack), str(model), "--profile", "cpu-micro"]
    monkeypatch.setattr(sys, "argv", [*argv, "--steps", "12", "--lr", "3e-3"])
    readability.main()
    result = json.loads(capsys.readouterr().out)
    before, after = result["before"]["all"], result["after"]["heldout"]["all"]
    assert before["n"] == after["n"] == 2 and len(result["losses"]) == 12
    assert after["p_right"] > max(before["p_right"], 0.5)
    assert result["after"]["train"]["tabular"]["top_right"] == 1.0
