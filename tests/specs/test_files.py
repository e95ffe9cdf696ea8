"""One loader for every user file: run files, SFT files, profiles and studies report an unknown
key, a bad type and a missing ``base:`` file in the same one-line format, through the same
function each command uses to read them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandmle.errors import SandmleError
from sandmle.specs.files import load_file, merge
from sandmle.specs.profile import PROFILE_DIR, load_profile
from sandmle.specs.study import load_study
from sandmle.specs.training import GRPORunFile, SFTRunFile

CONFIGS = PROFILE_DIR.parent


def _grpo(path: Path) -> Any:
    return load_file(GRPORunFile, path)


def _sft(path: Path) -> Any:
    return load_file(SFTRunFile, path)


# kind: (loader, a valid file of that kind, an unknown key at a nested path, a bad type)
KINDS: dict[str, tuple[Callable[[Path], Any], Path, dict[str, Any], dict[str, Any]]] = {
    "run file": (_grpo, CONFIGS / "train" / "tiny-cpu.yaml",
                 {"rollout": {"paralel_sandboxes": 2}}, {"rollout": {"max_turns": "many"}}),
    "sft file": (_sft, CONFIGS / "train" / "sft-smollm2-cpu.yaml",
                 {"teacher": {"model": "x"}}, {"keep": 3}),
    "profile": (lambda p: load_profile(p)[0], PROFILE_DIR / "toy.yaml",
                {"sft": {"kep": "valid"}}, {"packs": {"train": {"n": "two"}}}),
    "study": (load_study, CONFIGS / "study" / "cpu-reference.yaml",
              {"models": [{"model": "sandmle/heuristic", "modle_args": {}}]}, {"epochs": "x"}),
}  # fmt: skip
WHERE = {
    ("run file", "unknown"): "rollout.paralel_sandboxes",
    ("sft file", "unknown"): "teacher.model",
    ("profile", "unknown"): "sft.kep",
    ("study", "unknown"): "models.0.modle_args",
    ("run file", "type"): "rollout.max_turns",
    ("sft file", "type"): "keep",
    ("profile", "type"): "packs.train.n",
    ("study", "type"): "epochs",
}


def _write(tmp_path: Path, source: Path, change: dict[str, Any]) -> Path:
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    if isinstance(data.get("base"), str):  # keep the chain: its base relative to the source
        data["base"] = str((source.parent / data["base"]).resolve())
    grpo_base = (data.get("grpo") or {}).get("run", {}).get("base")
    if grpo_base:
        data["grpo"]["run"]["base"] = str((source.parent / grpo_base).resolve())
    path = tmp_path / "user.yaml"
    path.write_text(yaml.safe_dump(merge(data, change)), encoding="utf-8")
    return path


def _one_line(load: Callable[[Path], Any], path: Path) -> str:
    with pytest.raises(SandmleError) as err:
        load(path)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    return message.removeprefix(f"{path}: ")


@pytest.mark.parametrize("kind", KINDS)
def test_every_user_file_reports_errors_in_one_format(kind: str, tmp_path: Path) -> None:
    load, source, unknown, bad_type = KINDS[kind]
    load(source)  # the shipped file itself is valid
    message = _one_line(load, _write(tmp_path, source, unknown))
    assert message.startswith(f"{WHERE[kind, 'unknown']}: Extra inputs are not permitted")
    message = _one_line(load, _write(tmp_path, source, bad_type))
    assert message.startswith(f"{WHERE[kind, 'type']}: "), message
    missing = tmp_path / "user.yaml"
    missing.write_text("base: nowhere.yaml\n", encoding="utf-8")
    message = _one_line(load, missing)
    assert message == f"base: nowhere.yaml does not exist ({tmp_path / 'nowhere.yaml'})"


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_file_and_broken_yaml_are_one_line(kind: str, tmp_path: Path) -> None:
    load = KINDS[kind][0]
    assert _one_line(load, tmp_path / "absent.yaml") == "file does not exist"
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [1, 2\n", encoding="utf-8")
    assert _one_line(load, broken).startswith("not valid YAML (")


def test_a_profile_grpo_base_chain_is_read_relative_to_the_profile(tmp_path: Path) -> None:
    """``grpo.run.base`` names a run file beside the profile; a missing one says which."""
    data = yaml.safe_load((PROFILE_DIR / "toy.yaml").read_text(encoding="utf-8"))
    data["grpo"]["run"]["base"] = "train.yaml"
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    message = _one_line(lambda p: load_profile(p), path)
    assert message == f"grpo.run.base: train.yaml does not exist ({tmp_path / 'train.yaml'})"
    (tmp_path / "train.yaml").write_text(
        (CONFIGS / "train" / "tiny-cpu.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    profile, _ = load_profile(path)
    assert profile.grpo.run.training["loss_type"] == "dapo"  # from the base file
