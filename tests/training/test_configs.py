"""Every shipped run file builds a valid ``GRPOConfig`` at 1, 8 and 16 processes, carries no
score oracle, and makes clip-higher bite; every training command in the README names one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from sandmle.errors import SandmleError
from sandmle.specs.files import read_chain
from sandmle.training.grpo import load_grpo_config

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "sandmle" / "configs" / "train"
GRPO_FILES = sorted(p for p in TRAIN.glob("*.yaml") if not p.name.startswith("sft-"))
GPU_FILES = [p for p in GRPO_FILES if p.name.startswith("qwen3-")]


@pytest.mark.parametrize("processes", [1, 8, 16])
@pytest.mark.parametrize("path", GRPO_FILES, ids=lambda p: p.stem)
def test_run_file_builds_a_grpo_config(path: Path, processes: int, world, tmp_path: Path) -> None:
    world(processes)
    config = load_grpo_config(path, output_dir=str(tmp_path))
    assert config.generation_batch_size % config.num_generations == 0
    # evaluation has no score oracle; training neither
    assert not config.rollout.solver_args.get("score_feedback", False)
    if (
        config.epsilon_high or config.epsilon
    ) > config.epsilon:  # clip-higher needs the policy to move in between
        assert config.steps_per_generation > config.gradient_accumulation_steps


@pytest.mark.parametrize("path", GPU_FILES, ids=lambda p: p.stem)
def test_gpu_run_files_carry_the_paper_settings(path: Path, world, tmp_path: Path) -> None:
    layout = path.stem.rsplit("-", 1)[-1]
    processes = {"colocate": 8, "server": 4}.get(layout, 8)
    world(processes)
    c = load_grpo_config(path, output_dir=str(tmp_path))
    assert (c.num_generations, c.learning_rate, c.epsilon_high, c.beta) == (4, 1e-6, 0.28, 0.0)
    assert c.rollout.max_episode_tokens >= 32768 and c.reward.reasoning_tag == "think"
    if layout in ("colocate", "server"):
        assert c.use_vllm and c.vllm_mode == layout
        per_step = c.per_device_train_batch_size * processes * c.gradient_accumulation_steps
        assert per_step == 16  # the paper's 16 trajectories per optimizer step
        assert c.steps_per_generation // c.gradient_accumulation_steps == 4


def test_30b_runs_only_in_server_mode() -> None:
    sizes = {p.stem for p in GPU_FILES if "30b" in p.stem}
    assert sizes == {"qwen3-30b-a3b", "qwen3-30b-a3b-server"}


def test_overlays_are_small_and_inherit_their_base() -> None:
    for path in GPU_FILES:
        data = yaml.safe_load(path.read_text())
        assert "base" in data, path.name
        own = sum(len(v) if isinstance(v, dict) else 1 for v in data.values())
        assert own <= 16, f"{path.name}: {own} settings; put shared ones in its base"
    merged = read_chain(TRAIN / "qwen3-8b-server.yaml")
    assert merged["model"] == "Qwen/Qwen3-8B" and merged["training"]["vllm_mode"] == "server"
    assert merged["training"]["learning_rate"] == 1e-6  # from grpo-paper.yaml


def test_clip_higher_without_several_steps_is_refused(tmp_path: Path) -> None:
    from sandmle.errors import SandmleError

    data = yaml.safe_load((TRAIN / "tiny-cpu.yaml").read_text())
    data["training"]["epsilon_high"] = 0.28
    (tmp_path / "clip.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(SandmleError, match="epsilon_high .* no effect"):
        load_grpo_config(tmp_path / "clip.yaml", output_dir=str(tmp_path))


def test_a_base_that_includes_itself_is_an_error(tmp_path: Path) -> None:
    from sandmle.errors import SandmleError

    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\n")
    with pytest.raises(SandmleError, match="includes itself"):
        load_grpo_config(tmp_path / "a.yaml")


def test_readme_training_commands_name_run_files_that_validate(world, tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"--config (sandmle/configs/train/[\w.-]+\.yaml)", readme))
    assert named, "the README names no run file"
    world(8)
    for name in sorted(named):
        path = ROOT / name
        assert path.is_file(), name
        if path.name.startswith("sft-"):
            from sandmle.training.sft import load_sft_run

            load_sft_run(path)
        else:
            load_grpo_config(path, output_dir=str(tmp_path))


def test_too_few_tasks_for_a_generation_batch_is_refused(world, tmp_path: Path) -> None:
    """One task and two processes of one group each: TRL's sampler would yield no batch and the
    run would save the untouched model as step 0; it is refused up front instead."""
    from sandmle.errors import SandmleError
    from sandmle.training.grpo import enough_tasks

    pack = ROOT / "tests" / "fixtures" / "competitions"
    run = {"rollout": {"pack": str(pack)}, "training": {"output_dir": str(tmp_path)}}
    world(1)
    config = load_grpo_config(TRAIN / "tiny-cpu-learn.yaml", **run["training"])
    config.rollout = config.rollout.model_copy(update=run["rollout"])
    assert enough_tasks(config) == ["plant-watering"]
    world(2)
    config = load_grpo_config(TRAIN / "tiny-cpu-learn.yaml", **run["training"])
    config.rollout = config.rollout.model_copy(update=run["rollout"])
    with pytest.raises(SandmleError, match="1 task\\(s\\) to train on.* needs 2 distinct tasks"):
        enough_tasks(config)


def _cpu_flags() -> set[str]:
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        pytest.skip("reads /proc/cpuinfo (Linux)")
    lines = [line for line in cpuinfo.read_text().splitlines() if line.startswith("flags")]
    return set(lines[0].split(":", 1)[1].split()) if lines else set()


def test_bf16_native_on_the_cpu_is_what_the_cpu_flags_say() -> None:
    """AVX512-BF16 or AMX, as the kernel lists them; this project's 2-core machines have had
    both kinds (an AVX2-only one ran GRPO's forward and backward 16x slower in bf16)."""
    from sandmle.training.grpo import native_bf16

    assert native_bf16(on_cpu=True) is bool({"avx512_bf16", "amx_tile"} & _cpu_flags())


@pytest.mark.parametrize("native", [False, True])
def test_bf16_auto_is_bf16_only_where_it_is_native(
    native: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from sandmle.training import grpo

    monkeypatch.setattr(grpo, "native_bf16", lambda on_cpu: native)
    tiny = Path(__file__).resolve().parents[2] / "sandmle" / "configs" / "train" / "tiny-cpu.yaml"
    config = load_grpo_config(tiny, output_dir=str(tmp_path), bf16="auto", use_cpu=False)
    assert config.bf16 is native
    assert f"bf16: auto: {'bf16' if native else 'float32'}" in capsys.readouterr().err
    if not native:  # asked for outright, it is kept, and the cost is said
        with pytest.warns(UserWarning, match="emulates it"):
            assert load_grpo_config(tiny, output_dir=str(tmp_path), bf16=True, use_cpu=True).bf16
        with pytest.warns(UserWarning, match="emulates it"):  # unset: TRL's default, bf16
            assert load_grpo_config(tiny, output_dir=str(tmp_path), bf16=None, use_cpu=True).bf16
    with pytest.raises(SandmleError, match="bf16: 'yes': true, false or auto"):
        load_grpo_config(tiny, output_dir=str(tmp_path), bf16="yes")


def test_bf16_without_a_gpu_trains_on_the_cpu(tmp_path: Path) -> None:
    """A profile says ``use_cpu: false`` (cuda when there is one) and may say ``bf16: true``:
    without a GPU that is bf16 autocast on the CPU, not transformers' refusal."""
    import torch

    tiny = Path(__file__).resolve().parents[2] / "sandmle" / "configs" / "train" / "tiny-cpu.yaml"
    config = load_grpo_config(tiny, output_dir=str(tmp_path), bf16=True, use_cpu=False)
    assert config.bf16 and config.use_cpu is (not torch.cuda.is_available())
