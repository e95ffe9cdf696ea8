"""Seed DNA: every MLE-bench-lite competition, interleaved selection."""

from __future__ import annotations

import pytest

from sandmle.benchmarks.synthetic.blueprint import MODALITIES, TaskRequest
from sandmle.benchmarks.synthetic.planning import BINARY_TABLE_TEST_FACTOR, binary_table
from sandmle.benchmarks.synthetic.seeds import LITE_SEEDS, SEEDS, select_seeds
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.errors import SandmleError


def test_all_22_lite_competitions_are_seeds():
    assert len(LITE_SEEDS) == 22
    assert SEEDS["dog-breed-identification"].original_outputs == 120
    assert SEEDS["the-icml-2013-whale-challenge-right-whale-redux"].modality == "audio"


def test_selection_interleaves_modalities():
    first = [s.modality for s in select_seeds()[: len(MODALITIES)]]
    assert first == list(MODALITIES)


def test_unknown_seed_raises_user_error():
    with pytest.raises(SandmleError, match="unknown seed task"):
        select_seeds(seed_ids=["nope"])


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_blueprints_are_micro_and_deterministic(seed):
    request = TaskRequest(index=3, dna=SEEDS[seed], entropy=[9, 3, 0])
    bp = plan(request)
    assert bp == plan(request)
    if bp.dna.task_type == "image-to-image":  # rows are pixels: micro means a few small images
        assert bp.params["n_train_images"] <= 16 and 96 <= bp.params["n_test_images"] <= 144
        assert bp.n_test == bp.params["n_test_images"] * bp.params["size"] ** 2
    else:
        # micro, but medals above noise; binary tables (one yes/no per row) need more test rows
        most = 1200 * (BINARY_TABLE_TEST_FACTOR if binary_table(bp.dna) else 1)
        assert bp.n_train <= 4000 and 150 <= bp.n_test <= most
    assert bp.form  # the rule's form is drawn from the modality's library
    assert bp.task_id.endswith("-003")


# MLE-bench-lite's task types as the seed table names them (ordinal is multiclass + a flag,
# several regression targets are one regression task with several outputs).
LITE_TASK_TYPES = {
    "binary-classification": "binary",
    "multiclass-classification": "multiclass",
    "ordinal-classification": "multiclass",
    "multilabel-classification": "multilabel",
    "regression": "regression",
    "multi-target-regression": "regression",
    "image-to-image-regression": "image-to-image",
    "sequence-to-sequence": "seq2seq",
}


def test_every_lite_seed_keeps_its_modality_and_task_type():
    """Audio stays audio, seq2seq stays seq2seq, image-to-image stays image-to-image."""
    import csv
    from pathlib import Path

    table = Path(__file__).parents[2] / "fixtures/mlebench/lite-competitions.csv"
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert {r["id"] for r in rows} == set(LITE_SEEDS)
    for row in rows:
        seed = SEEDS[row["id"]]
        assert seed.modality == row["modality"], row["id"]
        assert seed.task_type == LITE_TASK_TYPES[row["task_type"]], row["id"]
        assert seed.ordinal == (row["task_type"] == "ordinal-classification"), row["id"]
