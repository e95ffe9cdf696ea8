"""GRPO with TRL on real sandbox episodes: two steps, the env mask in the loss, a checkpoint
that Inspect's ``hf/`` provider evaluates."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

import pytest
import yaml

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from sandmle.training.generators import EngineClock
from sandmle.training.grpo import build_trainer, load_grpo_config
from tests.conftest import FIXTURES
from tests.training.conftest import SCRIPT, TASKS, ScriptedGenerator

CONFIG = Path(__file__).resolve().parents[2] / "sandmle" / "configs" / "train" / "tiny-cpu.yaml"


def tiny_config(tiny_model: Path, pack: Path, out: Path, **training):
    config = load_grpo_config(CONFIG, output_dir=str(out), **training)
    config.model_name_or_path = str(tiny_model)
    config.rollout = config.rollout.model_copy(update={"pack": str(pack)})
    return config


@pytest.fixture(scope="module")
def module_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pack")
    for name in TASKS:
        shutil.copytree(FIXTURES / name, root / name)
    return root


@pytest.fixture(scope="module")
def trained(tiny_model: Path, module_pack: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("grpo")
    trainer = build_trainer(tiny_config(tiny_model, module_pack, out))
    trainer.train()
    return trainer, out


def test_two_steps_on_two_tasks_reward_real_episodes(trained) -> None:
    from inspect_ai.log import read_eval_log

    trainer, out = trained
    assert trainer.state.global_step == 2
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2
    for key in (
        "rewards/valid_reward/mean",
        "rewards/tier_reward/mean",
        "rewards/format_reward/mean",
    ):
        assert all(key in h for h in logged)
    assert all(h["rollout/dropped"] == 0 for h in logged)
    logs = sorted((out / "rollouts").rglob("*.eval"))
    assert len(logs) == 2  # one Inspect eval per step
    graded = {}
    for path in logs:
        for sample in read_eval_log(str(path)).samples:
            assert "valid_submission" in sample.scores["medal_scorer"].value
            graded[sample.metadata["competition_id"]] = (
                graded.get(sample.metadata["competition_id"], 0) + 1
            )
    assert graded == {"plant-watering": 2, "bike-rentals": 2}  # group of 2 per task


def test_checkpoint_is_a_plain_hf_folder_with_metadata(trained) -> None:
    _, out = trained
    folder = out / "checkpoint-2"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "generation_config.json"):
        assert (folder / name).is_file(), name
    from transformers import AutoTokenizer

    assert "tool_call" in AutoTokenizer.from_pretrained(folder).chat_template
    meta = json.loads((folder / "sandmle_checkpoint.json").read_text())
    assert meta["step"] == 2 and meta["kind"] == "grpo" and meta["reward_mode"] == "dense"

    from sandmle.specs.checkpoint import checkpoint_info, checkpoint_label

    assert checkpoint_info(f"hf/{folder}").step == 2
    assert checkpoint_label(checkpoint_info(f"hf/{folder}")) == "GRPO step 2"


def test_checkpoint_runs_under_inspect_hf_provider(
    trained, module_pack: Path, tmp_path: Path
) -> None:
    _, out = trained
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [
        sys.executable, "-m", "inspect_ai", "eval", "sandmle/synthetic",
        "-T", f"pack={module_pack}", "-T", "tasks=plant-watering", "-T", "message_limit=4",
        "--model", f"hf/{out / 'checkpoint-2'}", "-M", "device=cpu",
        "--max-tokens", "8", "--log-dir", str(tmp_path / "logs"), "--display", "none",
    ]  # fmt: skip
    # run outside the repo: there, 'sandmle/synthetic' would name the source folder
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    from inspect_ai.log import read_eval_log

    (log,) = [read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval")]
    assert log.status == "success"
    assert "valid_submission" in log.samples[0].scores["medal_scorer"].value


@pytest.mark.parametrize("bf16", [False, True])
def test_rollouts_sample_in_the_trainers_precision(
    tiny_model: Path, module_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bf16: bool
) -> None:
    """Under ``bf16: true`` the in-process engine samples through the policy's autocast forward
    (accelerate wraps it when training starts; TRL's own generation does the same), so sampling
    and the loss see the same logprobs; held-out eval (Inspect's hf provider) runs float32:
    docs/training.md says so."""
    import torch

    from sandmle.training import grpo

    seen: list[tuple[torch.dtype, torch.dtype]] = []
    real = grpo._generation

    def watched(trainer, threads):
        generator, clock, running = real(trainer, threads)
        model = generator.engine.model
        weights = next(model.parameters()).dtype
        layer = model.model.layers[0].mlp.down_proj
        layer.register_forward_hook(lambda _m, _i, out: seen.append((weights, out.dtype)))
        return generator, clock, running

    monkeypatch.setattr(grpo, "_generation", watched)
    config = tiny_config(tiny_model, module_pack, tmp_path, max_steps=1, bf16=bf16, use_cpu=False)
    build_trainer(config).train()
    activations = torch.bfloat16 if bf16 else torch.float32
    assert seen and set(seen) == {(torch.float32, activations)}  # float32 weights either way


def test_env_mask_keeps_environment_tokens_out_of_the_loss(
    tiny_model: Path, module_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from sandmle.training import grpo

    config = tiny_config(tiny_model, module_pack, tmp_path, max_steps=1)
    config.rollout = config.rollout.model_copy(update={"max_turns": 5, "max_turn_tokens": 256})
    trainer = build_trainer(config)
    tokenizer = trainer.processing_class
    scripted = ScriptedGenerator(tokenizer, SCRIPT)
    monkeypatch.setattr(
        grpo, "_generation", lambda t, threads: (scripted, EngineClock(), nullcontext())
    )
    inputs = trainer._generate_and_score_completions([{"prompt": "plant-watering"}] * 2)

    mask = inputs["tool_mask"] * inputs["completion_mask"]
    env = (inputs["completion_mask"] == 1) & (inputs["tool_mask"] == 0)
    assert env.any() and mask.any()
    policy_text = tokenizer.decode(inputs["completion_ids"][0][mask[0].bool()])
    assert policy_text == "<|im_end|>".join(SCRIPT) + "<|im_end|>"
    assert "SANDBOX-SAYS-HI" in tokenizer.decode(inputs["completion_ids"][0][env[0]])

    inputs["advantages"] = torch.tensor([1.0, -1.0])
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
    attention = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    with torch.no_grad():
        logps = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, attention, inputs["completion_ids"].size(1)
        )[0]

    def loss(old: torch.Tensor) -> float:
        with torch.no_grad():
            return trainer._compute_loss(
                trainer.model, {**inputs, "old_per_token_logps": old}
            ).item()

    base = loss(logps)
    assert loss(logps + 5.0 * env) == pytest.approx(base, abs=1e-7)  # env tokens: no effect
    one_policy_token = torch.zeros_like(logps)
    one_policy_token[0, mask[0].nonzero()[0]] = 0.1
    assert loss(logps + one_policy_token) != pytest.approx(base, abs=1e-6)


def test_a_groups_prompt_runs_once_with_the_same_loss_and_gradient(
    tiny_model: Path, module_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """share_prompt_prefix in the trainer itself, on real multi-turn episodes (environment
    tokens inside the completion): TRL's loss and gradient, fewer tokens through the model."""
    import torch

    from sandmle.training import grpo
    from sandmle.training.shared_prefix import PrefixSharingGRPOTrainer

    config = tiny_config(tiny_model, module_pack, tmp_path, max_steps=1, share_prompt_prefix=True)
    config.rollout = config.rollout.model_copy(update={"max_turns": 5, "max_turn_tokens": 256})
    trainer = build_trainer(config)
    assert isinstance(trainer, PrefixSharingGRPOTrainer)
    scripted = ScriptedGenerator(trainer.processing_class, SCRIPT)
    monkeypatch.setattr(
        grpo, "_generation", lambda t, threads: (scripted, EngineClock(), nullcontext())
    )
    inputs = trainer._generate_and_score_completions([{"prompt": "plant-watering"}] * 2)
    inputs["advantages"] = torch.tensor([1.0, -0.5])
    model = trainer.model

    def run(share: bool) -> tuple[float, dict, int]:
        trainer.args.share_prompt_prefix = share
        tokens: list[int] = []
        hook = model.get_input_embeddings().register_forward_hook(
            lambda _m, args, _o: tokens.append(args[0].numel())
        )
        try:
            loss = trainer._compute_loss(model, inputs)
        finally:
            hook.remove()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad(set_to_none=True)
        return loss.item(), grads, sum(tokens)

    per_row, shared = run(False), run(True)
    assert shared[0] == pytest.approx(per_row[0], rel=1e-4, abs=1e-6)
    assert shared[1].keys() == per_row[1].keys() and per_row[1]
    for name, grad in per_row[1].items():
        torch.testing.assert_close(shared[1][name], grad, rtol=1e-3, atol=1e-6, msg=name)
    prompt = int(inputs["prompt_mask"][0].sum())
    assert shared[2] == per_row[2] - (prompt - 1)  # the second row's prompt did not run


def test_sparse_mode_swaps_the_reward_functions(
    tiny_model: Path, module_pack: Path, tmp_path: Path
) -> None:
    data = yaml.safe_load(CONFIG.read_text())
    data["reward"] = {"mode": "sparse", "sparse_gold_weight": 0.8}
    (tmp_path / "sparse.yaml").write_text(yaml.safe_dump(data))
    config = load_grpo_config(tmp_path / "sparse.yaml", output_dir=str(tmp_path / "out"))
    config.model_name_or_path = str(tiny_model)
    config.rollout = config.rollout.model_copy(update={"pack": str(module_pack)})
    trainer = build_trainer(config)
    assert [f.__name__ for f in trainer.reward_funcs] == ["format_reward", "gold_reward"]
    assert trainer.reward_weights.tolist() == pytest.approx([0.1, 0.8])


def test_config_errors_say_what_to_change(tmp_path: Path) -> None:
    from sandmle.errors import SandmleError

    data = yaml.safe_load(CONFIG.read_text())
    data["training"]["num_generationz"] = 4
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(SandmleError, match="num_generationz"):
        load_grpo_config(tmp_path / "bad.yaml")
    data = yaml.safe_load(CONFIG.read_text())
    data["reward"]["mode"] = "medium"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(SandmleError, match="reward.mode"):
        load_grpo_config(tmp_path / "bad.yaml")
