"""``sandmle reproduce``: profiles, resumption and the stage wiring (fast; the toy run is slow)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandmle.errors import SandmleError
from sandmle.specs.profile import PROFILE_DIR, GRPOArm, load_profile
from sandmle.study import reproduce

SHIPPED = ("toy", "cpu-micro", "cpu-smollm2", "gpu-1", "paper")
TOOLKIT_PROFILES = ("cpu-micro", "cpu-smollm2")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_profiles_validate(name: str) -> None:
    profile, path = load_profile(name)
    assert path == PROFILE_DIR / f"{name}.yaml" and profile.name == name
    assert profile.eval.scaffolds[0].solver == profile.trained_scaffold == "react"
    assert profile.packs.train.seed != profile.packs.heldout.seed
    # the rollouts run the profile's episode, whatever the run file's base chain said
    assert profile.grpo.run.rollout.episode().model_dump() == profile.episode.model_dump()


def test_every_scaffold_and_benchmark_in_the_larger_profiles() -> None:
    solvers = {"react", "aide", "aira_greedy", "aira_mcts", "aira_evo", "dojo"}
    for name in SHIPPED:
        profile, _ = load_profile(name)
        assert {s.solver for s in profile.eval.scaffolds} == solvers, name
        assert set(profile.eval.benchmarks) == {"heldout", "replicas", "dojo"}, name


def _profile_file(tmp_path: Path, **changes: Any) -> Path:
    data = yaml.safe_load((PROFILE_DIR / "toy.yaml").read_text())
    data["grpo"]["run"]["base"] = str(PROFILE_DIR.parent / "train" / "tiny-cpu.yaml")
    data.update(changes)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_unknown_key_is_a_one_line_error(tmp_path: Path) -> None:
    path = _profile_file(tmp_path, sft={"kep": "valid"})
    with pytest.raises(SandmleError) as err:
        load_profile(path)
    assert "sft.kep" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("part", "change", "word"),
    [
        # one turn budget: a message limit beside max_turns cannot be written
        ("episode", {"limits": {"message_limit": 10}}, "episode.limits: message_limit is the turn"),
        # the rollouts' episode is the profile's: restating a field of it is refused
        ("grpo", {"run": {"rollout": {"max_turns": 3}}}, "grpo.run.rollout.max_turns: the episode"),
        (
            "grpo",
            {"run": {"rollout": {"limits": {"toolkit": True}}}},
            "rollout.limits: the episode",
        ),
        # the eval and the teacher take the episode's task limits and sampling
        ("eval", {"task_args": {"toolkit": True}}, "eval.task_args: Extra inputs"),
        ("eval", {"generate": {"max_tokens": 8}}, "max_tokens: the episode's sampling"),
        ("teacher", {"task_args": {"message_limit": 4}}, "teacher.task_args: Extra inputs"),
        ("teacher", {"episode": {"max_turns": 4}}, "teacher: Value error, episode: set by the"),
    ],
)
def test_one_episode_is_written_once(
    tmp_path: Path, part: str, change: dict[str, Any], word: str
) -> None:
    data = yaml.safe_load((PROFILE_DIR / "toy.yaml").read_text())
    merged = {**data[part], **change} if part != "grpo" else data[part]
    if part == "grpo":
        merged["run"]["rollout"] = {**merged["run"]["rollout"], **change["run"]["rollout"]}
    with pytest.raises(SandmleError) as err:
        load_profile(_profile_file(tmp_path, **{part: merged}))
    assert word.replace("Value error, ", "") in str(err.value) and "\n" not in str(err.value)


def test_unknown_profile_names_the_shipped_ones() -> None:
    with pytest.raises(SandmleError, match="shipped: cpu-micro, cpu-smollm2, gpu-1, paper, toy"):
        load_profile("nope")


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every stage replaced by a recorder (the real ones run in the slow toy test)."""
    calls: list[str] = []

    def stage(name: str, outcome: dict[str, Any]):
        def run(run: reproduce.Run, *args: GRPOArm) -> dict[str, Any]:
            calls.append(name if not args else f"{name}-{args[0].mode}-{args[0].start}")
            return dict(outcome)

        return run

    for name in ("packs", "replicas", "base", "teacher", "sft", "report"):
        monkeypatch.setattr(reproduce, f"stage_{name}", stage(name, {"checkpoint": name}))
    monkeypatch.setattr(reproduce, "stage_grpo", stage("grpo", {"checkpoint": "g"}))
    monkeypatch.setattr(reproduce, "stage_eval", stage("eval", {"success": True}))
    return calls


def test_a_rerun_skips_finished_stages(tmp_path: Path, stubbed: list[str]) -> None:
    profile = _profile_file(tmp_path)
    assert reproduce.run_reproduce(profile, tmp_path / "out")
    assert stubbed == ["packs", "replicas", "base", "teacher", "sft", "grpo-dense-sft",
                       "grpo-sparse-sft", "eval", "report"]  # fmt: skip
    stubbed.clear()
    (tmp_path / "out" / "stages" / "grpo-sparse.json").unlink()  # as if killed in that stage
    assert reproduce.run_reproduce(profile, tmp_path / "out")
    assert stubbed == ["grpo-sparse-sft", "report"]  # the report is always rewritten


def test_an_unfinished_eval_runs_again(
    tmp_path: Path, stubbed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reproduce, "stage_eval", lambda run: {"success": False})
    profile = _profile_file(tmp_path)
    assert not reproduce.run_reproduce(profile, tmp_path / "out")
    assert not (tmp_path / "out" / "stages" / "eval.json").exists()


def test_an_out_dir_belongs_to_one_profile(tmp_path: Path, stubbed: list[str]) -> None:
    reproduce.run_reproduce(_profile_file(tmp_path), tmp_path / "out")
    other = _profile_file(tmp_path, packs={"train": {"n": 3}, "heldout": {"n": 2, "seed": 9}})
    with pytest.raises(SandmleError, match="another profile"):
        reproduce.run_reproduce(other, tmp_path / "out")


def test_a_setting_added_since_at_its_default_resumes(tmp_path: Path, stubbed: list[str]) -> None:
    """A run saved before a setting existed (here: rollout.backend) is the same profile."""
    reproduce.run_reproduce(_profile_file(tmp_path), tmp_path / "out")
    saved = tmp_path / "out" / "profile.yaml"
    data = yaml.safe_load(saved.read_text(encoding="utf-8"))
    del data["grpo"]["run"]["rollout"]["backend"]
    saved.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert reproduce.run_reproduce(_profile_file(tmp_path), tmp_path / "out")
    data["grpo"]["run"]["rollout"]["backend"] = "server"
    saved.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(SandmleError, match="another profile"):
        reproduce.run_reproduce(_profile_file(tmp_path), tmp_path / "out")


def _toy_run_after_sft(out: Path) -> reproduce.Run:
    profile, path = load_profile("toy")
    run = reproduce.Run(profile, path, out, reproduce.Console())
    run.finish("sft", {"checkpoint": str(out / "sft")})
    return run


def test_a_changed_save_cadence_is_the_same_profile(tmp_path: Path, stubbed: list[str]) -> None:
    """How often training saves or logs changes no result: a run resumes under new ones."""
    reproduce.run_reproduce(_profile_file(tmp_path), tmp_path / "out")
    saved = tmp_path / "out" / "profile.yaml"
    data = yaml.safe_load(saved.read_text(encoding="utf-8"))
    data["grpo"]["run"]["training"].update(save_steps=99, save_total_limit=3, logging_steps=7)
    data["sft"]["training"]["save_steps"] = 99
    saved.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert reproduce.run_reproduce(_profile_file(tmp_path), tmp_path / "out")
    data["grpo"]["run"]["training"]["learning_rate"] = 0.5  # what is trained: refused
    saved.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(SandmleError, match="another profile"):
        reproduce.run_reproduce(_profile_file(tmp_path), tmp_path / "out")


def test_grpo_runs_differ_only_in_reward_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dense and sparse start from the same SFT checkpoint with the same budget."""
    run = _toy_run_after_sft(tmp_path)
    written: list[dict] = []

    def fake_child(run: reproduce.Run, stage: str, args: list[str]) -> None:
        written.append(yaml.safe_load(Path(args[-1]).read_text()))
        folder = tmp_path / "runs" / stage / "checkpoint-2"
        folder.mkdir(parents=True)
        mode = written[-1]["reward"]["mode"]
        info = {"kind": "grpo", "step": 2, "reward_mode": mode}
        (folder / "sandmle_checkpoint.json").write_text(json.dumps(info))

    monkeypatch.setattr(reproduce, "child", fake_child)
    dense = reproduce.stage_grpo(run, GRPOArm("dense", "sft"))
    sparse = reproduce.stage_grpo(run, GRPOArm("sparse", "sft"))
    assert dense["checkpoint"].endswith("grpo-dense/checkpoint-2")
    assert sparse["reward_mode"] == "sparse"
    a, b = written
    assert a["model"] == b["model"] == str(tmp_path / "sft")
    assert a["rollout"]["pack"] == str(tmp_path / "packs" / "train")
    a["reward"].pop("mode"), b["reward"].pop("mode")
    a["training"].pop("output_dir"), b["training"].pop("output_dir")
    assert a == b


def _grpo_pack_run(tmp_path: Path) -> reproduce.Run:
    one = {"n": 1}
    packs = {"train": one, "heldout": {**one, "seed": 1}, "grpo": {**one, "seed": 2}}
    profile, path = load_profile(_profile_file(tmp_path, packs=packs))
    return reproduce.Run(profile, path, tmp_path / "out", reproduce.Console())


def test_a_grpo_pack_has_its_own_secret_feeds_grpo_alone_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _grpo_pack_run(tmp_path)
    outcome = reproduce.stage_packs(run)
    assert outcome["grpo_tasks"] == outcome["train_tasks"] == 1
    assert len({outcome[f"{p}_secret"] for p in ("train", "heldout", "grpo")}) == 3
    run.finish("sft", {"checkpoint": str(tmp_path / "sft")})
    written: list[dict] = []

    def fake_child(run: reproduce.Run, stage: str, args: list[str]) -> None:
        written.append(yaml.safe_load(Path(args[-1]).read_text()))
        folder = run.path("runs", stage, "checkpoint-1")
        folder.mkdir(parents=True)
        info = {"kind": "grpo", "step": 1, "reward_mode": "dense"}
        (folder / "sandmle_checkpoint.json").write_text(json.dumps(info))

    monkeypatch.setattr(reproduce, "child", fake_child)
    reproduce.stage_grpo(run, GRPOArm("dense", "sft"))
    assert written[0]["rollout"]["pack"] == str(run.path("packs", "grpo"))
    # an interrupted packs stage keeps the packs it finished
    shutil.rmtree(run.path("packs", "heldout"))  # as if killed while making it
    again = reproduce.stage_packs(run)
    assert again["train_secret"] == outcome["train_secret"] and again["heldout_tasks"] == 1
    assert again["heldout_secret"] != outcome["heldout_secret"]  # a fresh one
    train = run.path("packs", "train", "generation", "secret.txt")
    shutil.copy(train, run.path("packs", "grpo", "generation", "secret.txt"))
    with pytest.raises(SandmleError, match="share a secret"):
        reproduce.stage_packs(run)


def test_an_interrupted_grpo_stage_resumes_from_its_last_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _toy_run_after_sft(tmp_path)
    saved = tmp_path / "runs" / "grpo-dense" / "checkpoint-1"
    saved.mkdir(parents=True)
    (saved / "trainer_state.json").write_text("{}")
    (saved.parent / "checkpoint-2").mkdir()  # a save cut short: not where it resumes
    written: list[dict] = []

    def fake_child(run: reproduce.Run, stage: str, args: list[str]) -> None:
        written.append(yaml.safe_load(Path(args[-1]).read_text()))
        info = {"kind": "grpo", "step": 2, "reward_mode": "dense"}
        (saved.parent / "checkpoint-2" / "sandmle_checkpoint.json").write_text(json.dumps(info))

    monkeypatch.setattr(reproduce, "child", fake_child)
    outcome = reproduce.stage_grpo(run, GRPOArm("dense", "sft"))
    assert written[0]["training"]["resume_from_checkpoint"] is True
    assert written[0]["training"]["output_dir"] == str(saved.parent)
    assert outcome["resumed_at_step"] == 1
    assert outcome["checkpoint"].endswith("grpo-dense/checkpoint-2")


def test_a_rerun_child_keeps_the_earlier_log_and_names_its_own_error(tmp_path: Path) -> None:
    profile, path = load_profile("toy")
    run = reproduce.Run(profile, path, tmp_path, reproduce.Console())
    with pytest.raises(SandmleError, match="ValueError: first"):
        reproduce.child(run, "sft", ["-c", "raise ValueError('first')"])
    with pytest.raises(SandmleError, match=r"\(exit 2\): second attempt"):
        reproduce.child(run, "sft", ["-c", "import sys; print('second attempt'); sys.exit(2)"])
    log = (tmp_path / "logs" / "sft.log").read_text()
    assert "ValueError: first" in log and "second attempt" in log
    assert log.count("=== sft, ") == 2


def test_a_checkpoint_must_say_what_it_is(tmp_path: Path) -> None:
    (tmp_path / "sandmle_checkpoint.json").write_text(json.dumps({"kind": "grpo", "step": 2,
                                                                  "reward_mode": "dense"}))  # fmt: skip
    assert reproduce.labelled(tmp_path, "grpo", "dense") == tmp_path
    with pytest.raises(SandmleError, match="reward_mode 'dense', not sparse"):
        reproduce.labelled(tmp_path, "grpo", "sparse")
    with pytest.raises(SandmleError, match="not sft"):
        reproduce.labelled(tmp_path, "sft")


def test_a_failed_child_names_its_error_line() -> None:
    log = "Traceback (most recent call last):\n  File x\nValueError: bad\n  more detail\n"
    assert reproduce.reason(log) == "ValueError: bad"
    assert reproduce.reason("step 1\nerror: no episodes passed keep='valid'\n").startswith("error:")


@pytest.mark.parametrize("name", SHIPPED)
def test_teacher_rollouts_and_eval_run_one_episode(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run file GRPO reads back, the teacher's cells and the eval's trained-scaffold cells
    hold the same task limits, turn budget, scaffold and sampling (the profile's episode)."""
    from sandmle.specs.files import load_file
    from sandmle.specs.training import GRPORunFile

    profile, path = load_profile(name)
    run = reproduce.Run(profile, path, tmp_path, reproduce.Console())
    for stage in ("sft", *(arm.stage for arm in profile.grpo.arms())):
        run.finish(stage, {"checkpoint": str(tmp_path / stage)})
    written: list[Path] = []
    monkeypatch.setattr(reproduce, "child", lambda run, stage, args: written.append(Path(args[-1])))
    monkeypatch.setattr(reproduce, "labelled", lambda folder, *a: folder)
    monkeypatch.setattr(reproduce, "last_checkpoint", lambda folder: folder)
    reproduce.stage_grpo(run, GRPOArm("dense", "sft"))
    rollout = load_file(GRPORunFile, written[-1]).rollout
    data_args = {"pack", "data_dir", "competitions"}
    study = reproduce.eval_study(run)
    trained = [(b, s) for b, s in study.cells() if s.solver == rollout.solver]
    assert trained and all(s.args == rollout.solver_args for _, s in trained)
    for bench, _ in trained:
        args = {k: v for k, v in bench.args.items() if k not in data_args}
        assert args == rollout.task_args(), (name, bench.key)
    config = study.models[0].model_args["config"]
    assert (config.max_tokens, config.temperature) == (
        rollout.max_turn_tokens,
        rollout.temperature,
    )
    teacher_study: list[Any] = []
    monkeypatch.setattr(reproduce, "run_study", lambda s, **kw: teacher_study.append(s) or True)
    reproduce.stage_teacher(run)
    (bench,) = teacher_study[0].benchmarks
    assert {k: v for k, v in bench.args.items() if k != "pack"} == rollout.task_args()
    assert teacher_study[0].scaffolds[0].solver == rollout.solver


def trained_run(name: str, tmp_path: Path) -> reproduce.Run:
    """A run of profile ``name`` whose training stages are marked done (checkpoints named)."""
    from rich.console import Console

    profile, path = load_profile(name)
    run = reproduce.Run(profile, path, tmp_path, Console())
    for stage in ("sft", *(arm.stage for arm in profile.grpo.arms())):
        run.finish(stage, {"checkpoint": str(tmp_path / stage)})
    return run


@pytest.mark.parametrize("name", TOOLKIT_PROFILES)
def test_toolkit_profiles_give_the_paired_test_40_held_out_tasks(name: str, tmp_path: Path) -> None:
    """Their GRPO-vs-SFT test pairs per-task means: 40 held-out tasks (cpu-micro twice each,
    cpu-smollm2 once, its model calls being ~10 s); the other scaffolds run one epoch."""
    run = trained_run(name, tmp_path)
    study = reproduce.eval_study(run)
    epochs = {s.solver: s.epochs or study.epochs for s in study.scaffolds}
    assert epochs.pop("react") == {"cpu-micro": 2, "cpu-smollm2": 1}[name]
    assert set(epochs.values()) == {1} and len(epochs) == 5
    assert run.profile.packs.heldout.n == 40 and study.scaffolds[0].limit is None


@pytest.mark.parametrize("name", TOOLKIT_PROFILES)
def test_toolkit_profiles_run_the_transfer_scaffolds_on_the_held_out_pack(
    name: str, tmp_path: Path
) -> None:
    """Their budgets (90 and 150 minutes) hold only with the slower searches kept to the
    replicas; the transfer rows (AIDE, AIRA greedy) and the trained scaffold get the held-out
    pack."""
    run = trained_run(name, tmp_path)
    study = reproduce.eval_study(run)
    on_heldout = {s.solver for b, s in study.cells() if b.key == "heldout"}
    assert on_heldout == {"react", "aide", "aira_greedy"}
    on_replicas = {s.solver for b, s in study.cells() if b.key == "replicas"}
    assert len(on_replicas) == 6 and len(study.cells()) == 3 + 6 + 6


def test_a_bad_scaffold_entry_is_refused_before_any_stage(tmp_path: Path) -> None:
    data = yaml.safe_load((PROFILE_DIR / "toy.yaml").read_text())
    for bad, word in (
        ({"solver": "react", "epochs": 0}, "eval.scaffolds.0.epochs"),
        ({"solver": "react", "x": 1}, "eval.scaffolds.0.x"),
        ({"solver": "react", "benchmarks": ["heldot"]}, r"benchmarks \['heldot'\] are not"),
        ({"solver": "aide"}, r"scaffolds\[0\] \(aide\) must be the episode's"),
    ):
        data["eval"]["scaffolds"] = [bad]
        with pytest.raises(SandmleError, match=word):
            load_profile(_profile_file(tmp_path, eval=data["eval"]))


@pytest.mark.parametrize("name", TOOLKIT_PROFILES)
def test_toolkit_profiles_run_each_fixed_option_on_the_held_out_pack(
    name: str, tmp_path: Path
) -> None:
    """The report's `best fixed` row: every toolkit option as its own model, once per held-out
    task under the trained scaffold, logged beside the eval; none where the episode has no
    toolkit."""
    from sandmle.policies.toolkit import OPTIONS

    run = trained_run(name, tmp_path)
    study = reproduce.fixed_study(run)
    assert study is not None
    assert [m.model for m in study.models] == [f"sandmle/toolkit/{o}" for o in OPTIONS]
    assert [(b.key, s.solver, s.epochs) for b, s in study.cells()] == [("heldout", "react", 1)]
    assert study.resolved_log_dir() == tmp_path / "eval-fixed"
    assert reproduce.fixed_roles(run)["fixed: images"] == "sandmle/toolkit/images"
    assert not load_profile("toy")[0].episode.toolkit
    assert reproduce.fixed_study(trained_run("toy", tmp_path)) is None


def test_cpu_smollm2_runs_its_base_model_on_the_held_out_pack_alone(tmp_path: Path) -> None:
    """Its base model (0 valid everywhere in four runs) pairs with nothing, so it gets only the
    trained scaffold's cells on the held-out pack, with their epochs and tasks, logged in
    ``eval-base``; the manifest still names it, and the other roles keep every cell."""
    run = trained_run("cpu-smollm2", tmp_path)
    base = reproduce.model_name(run, reproduce.base_model(run))
    study = reproduce.eval_study(run)
    assert base not in [m.model for m in study.models] and len(study.models) == 2
    alone = reproduce.base_study(run)
    assert alone is not None and [m.model for m in alone.models] == [base]
    react = run.profile.eval.scaffolds[0]
    assert [(b.key, s.solver, s.epochs, s.limit) for b, s in alone.cells()] == [
        ("heldout", "react", react.epochs, react.limit)
    ]
    assert alone.models[0].model_args == study.models[0].model_args  # same sampling
    assert alone.resolved_log_dir() == tmp_path / "eval-base"
    assert reproduce.write_manifest(run).read_text().count(base) == 1
    toy = trained_run("toy", tmp_path / "toy")  # base_cells: all (the default)
    assert reproduce.base_study(toy) is None
    assert reproduce.model_name(toy, reproduce.base_model(toy)) in [
        m.model for m in reproduce.eval_study(toy).models
    ]


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"eval": {"benchmarks": ["replicas"]}}, "leaves out"),
        ({"grpo": {"from_base": True}}, "GRPO-from-base"),
    ],
)
def test_base_cells_trained_is_refused_where_it_would_lose_a_row(
    change: dict[str, Any], word: str, tmp_path: Path
) -> None:
    data = yaml.safe_load((PROFILE_DIR / "cpu-smollm2.yaml").read_text())
    data["eval"]["scaffolds"] = [{"solver": "react", "epochs": 2}]
    for key, values in change.items():
        data[key].update(values)
    path = tmp_path / "p.yaml"
    data["grpo"]["run"]["base"] = str(PROFILE_DIR.parent / "train" / "tiny-cpu.yaml")
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SandmleError, match=word):
        load_profile(path)


def test_cpu_smollm2_pairs_on_every_held_out_task_and_transfers_on_some() -> None:
    """Its paired test's units are tasks: the trained scaffold (and so the fixed options and
    the base model) runs every held-out task, while the slower transfer scaffolds run a part of
    the pack that is still the first tasks of the same pack, so their pairs share tasks."""
    profile, _ = load_profile("cpu-smollm2")
    trained, *others = profile.eval.scaffolds
    assert trained.limit is None and profile.eval.limit is None
    transfer = [s for s in others if s.benchmarks is None or "heldout" in s.benchmarks]
    assert {s.solver for s in transfer} == {"aide", "aira_greedy"}
    assert all(s.limit is not None and s.limit < profile.packs.heldout.n for s in transfer)


def test_cpu_smollm2_runs_as_is_on_a_gpu() -> None:
    """Sized for 2 CPU cores, but nothing pins the CPU: SFT and GRPO leave the device to the
    trainer (cuda when there is one) and the eval names none (Inspect's hf provider then takes
    cuda:0); its replicas' prompts fit SmolLM2's 8,192-token context (leaf-classification's
    does not)."""
    profile, _ = load_profile("cpu-smollm2")
    assert profile.model == "smollm2" and profile.episode.toolkit
    assert "use_cpu" not in profile.sft.training
    assert profile.grpo.run.training["use_cpu"] is False
    assert "device" not in profile.eval.model_args
    assert "leaf-classification" not in (profile.replicas.competitions or [])


def test_cpu_smollm2_trains_in_bf16_only_where_it_is_native(tmp_path: Path) -> None:
    """``bf16: auto``: its GRPO run file, as the stage writes it, trains in bf16 on a GPU or a
    CPU that computes it, in float32 where autocast would emulate it (16x slower, AVX2)."""
    import torch

    from sandmle.training.grpo import load_grpo_config, native_bf16

    profile, _ = load_profile("cpu-smollm2")
    path = tmp_path / "grpo.yaml"
    path.write_text(yaml.safe_dump(profile.grpo.run.model_dump(mode="json", exclude_none=True)))
    config = load_grpo_config(path, output_dir=str(tmp_path / "out"))
    assert config.bf16 is native_bf16(on_cpu=not torch.cuda.is_available())


def test_cpu_smollm2_trains_one_group_at_a_time_on_five_groups_a_step(tmp_path: Path) -> None:
    """Micro-batches of one group, its prompt run once (share_prompt_prefix: a group's
    policy forward and backward 3.9x faster than its episodes one at a time,
    bench/training_shared_prefix.py, docs/performance.md); the step still trains on 5 groups
    of 4, in one optimizer update, so DAPO's loss (normalised by the generation batch's
    tokens) is the same sum."""
    from sandmle.training.grpo import load_grpo_config

    profile, _ = load_profile("cpu-smollm2")
    path = tmp_path / "grpo.yaml"
    path.write_text(yaml.safe_dump(profile.grpo.run.model_dump(mode="json", exclude_none=True)))
    config = load_grpo_config(path, output_dir=str(tmp_path / "out"))
    assert config.share_prompt_prefix
    assert config.per_device_train_batch_size == config.num_generations  # one whole group
    assert config.generation_batch_size == 20 and config.num_generations == 4
    assert config.gradient_accumulation_steps == config.steps_per_generation
    assert config.loss_type == "dapo"
