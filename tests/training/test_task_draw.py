"""GRPO's generation batches drawn across modalities (``rollout.task_draw: by_modality``)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from sandmle.training.task_draw import modality_batches
from tests.conftest import FIXTURES
from tests.training.conftest import TASKS

# the composition of a 24-task pack of every modality the generator made (seed 404)
POOL = {"audio": 2, "image": 6, "tabular": 7, "text": 6, "time-series": 3}


def pool() -> dict[str, str | None]:
    return {f"{m}-{i}": m for m, n in POOL.items() for i in range(n)}


def batches(rows: list[str], size: int) -> list[list[str]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


@pytest.mark.parametrize("per_batch", [2, 4, 5])
def test_each_batch_spans_distinct_modalities_and_all_are_drawn_alike(per_batch: int) -> None:
    tasks = pool()
    rows = modality_batches(tasks, per_batch, 20, seed=3)
    assert len(rows) == 20 * per_batch
    for batch in batches(rows, per_batch):
        assert len({tasks[t] for t in batch}) == per_batch
    drawn = Counter(tasks[t] for t in rows)
    assert max(drawn.values()) - min(drawn.values()) <= 1


def test_a_batch_larger_than_the_modalities_repeats_them_evenly_with_distinct_tasks() -> None:
    tasks = pool()
    for batch in batches(modality_batches(tasks, 8, 10, seed=0), 8):
        assert len(set(batch)) == 8
        per_modality = Counter(tasks[t] for t in batch).values()
        assert len(per_modality) == 5 and max(per_modality) == 2


def test_a_modality_deals_every_task_before_any_twice() -> None:
    tasks = pool()
    rows = modality_batches(tasks, 5, 12, seed=1)
    tabular = [t for t in rows if tasks[t] == "tabular"]
    assert len(set(tabular[:7])) == 7 and set(tabular[7:]) <= set(tabular[:7])


def test_the_seed_decides_the_order() -> None:
    tasks = pool()
    assert modality_batches(tasks, 4, 6, seed=7) == modality_batches(tasks, 4, 6, seed=7)
    assert modality_batches(tasks, 4, 6, seed=7) != modality_batches(tasks, 4, 6, seed=8)


def test_tasks_without_a_modality_are_a_group_of_their_own() -> None:
    tasks = {"a": "text", "b": None, "c": None}
    rows = modality_batches(tasks, 2, 6, seed=0)
    for batch in batches(rows, 2):
        assert "a" in batch  # one of the two groups in every batch: text has one task


def test_trl_samples_the_rows_in_the_drawn_order(tiny_model: Path, tmp_path: Path) -> None:
    pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
    from sandmle.errors import SandmleError
    from sandmle.training.grpo import build_trainer, load_grpo_config, training_rows
    from tests.training.test_grpo import CONFIG

    pack = tmp_path / "pack"
    for name in TASKS:
        shutil.copytree(FIXTURES / name, pack / name)
    run = yaml.safe_load(CONFIG.read_text())
    run["model"] = str(tiny_model)
    run["rollout"].update(pack=str(pack), task_draw="by_modality")
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run))
    config = load_grpo_config(tmp_path / "run.yaml", output_dir=str(tmp_path / "out"), max_steps=6)
    assert config.shuffle_dataset is False
    with pytest.raises(SandmleError, match="names no task's modality"):
        training_rows(config)

    modality = {"plant-watering": "tabular", "bike-rentals": "time-series"}
    manifest = {"name": "two", "tasks": [{"id": t, "modality": m} for t, m in modality.items()]}
    (pack / "pack.yaml").write_text(yaml.safe_dump(manifest))
    trainer = build_trainer(config)
    rows = trainer.train_dataset["prompt"]
    assert len(rows) == 6  # one task a generation batch, one batch a step
    assert all(a != b for a, b in zip(rows, rows[1:], strict=False))  # modalities alternate
    sampled = [rows[i] for i in trainer._get_train_sampler(trainer.train_dataset)]
    firsts = [t for i, t in enumerate(sampled) if i == 0 or sampled[i - 1] != t]
    assert firsts == rows  # TRL's sampler kept the order (its shuffle is off)


def test_two_ranks_together_generate_each_drawn_batch(
    world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under several processes TRL's sampler (shuffle off) and accelerate's sharding hand each
    rank part of one drawn batch: the ranks' groups of one generation round, which one update
    averages over, are exactly that batch."""
    pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
    from types import SimpleNamespace

    from accelerate.data_loader import BatchSamplerShard
    from torch.utils.data import BatchSampler
    from trl import GRPOTrainer

    from sandmle.training import grpo
    from tests.training.test_grpo import CONFIG

    world(2)
    tasks = {f"{m}-{i}": m for m in ("tabular", "image", "text") for i in range(3)}
    monkeypatch.setattr(grpo, "task_modalities", lambda _settings: tasks)
    run = yaml.safe_load(CONFIG.read_text())
    run["rollout"]["task_draw"] = "by_modality"
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run))
    config = grpo.load_grpo_config(
        tmp_path / "run.yaml", output_dir=str(tmp_path / "out"), max_steps=3, num_generations=2,
        per_device_train_batch_size=2, steps_per_generation=2, gradient_accumulation_steps=2,
    )  # fmt: skip
    rows = grpo.training_rows(config)
    per_batch = config.generation_batch_size // config.num_generations
    assert per_batch == 4  # all processes together: 2 per device x 2 ranks x 2 steps / 2
    trainer = SimpleNamespace(
        args=config, num_generations=2, num_iterations=1, shuffle_dataset=config.shuffle_dataset
    )
    sampler = GRPOTrainer._get_train_sampler(trainer, rows)  # TRL's own sampler
    batches = BatchSampler(sampler, config.per_device_train_batch_size * 2, drop_last=False)
    shards = [list(BatchSamplerShard(batches, num_processes=2, process_index=r)) for r in (0, 1)]
    for step in range(len(rows) // per_batch):
        generated = {rows[i] for shard in shards for i in shard[2 * step]}  # a round's first
        drawn = rows[step * per_batch : (step + 1) * per_batch]
        assert generated == set(drawn) and len({tasks[t] for t in drawn}) == 3
