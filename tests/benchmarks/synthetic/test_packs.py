"""Packs: manifest, coverage, determinism, the 100-task pack."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sandmle.benchmarks.synthetic.blueprint import GENERATOR_VERSION, MODALITIES
from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.benchmarks.synthetic.pipeline import row_groups
from sandmle.benchmarks.synthetic.planning import BINARY_TABLE_TEST_FACTOR
from sandmle.benchmarks.synthetic.sanity import check_directory
from sandmle.benchmarks.synthetic.task_files import file_digests, load_blueprint
from sandmle.errors import SandmleError
from sandmle.harness.pack import load_pack
from tests.benchmarks.synthetic.conftest import SMALL_SEEDS


def test_pack_manifest_lists_tasks_with_baselines(small_pack):
    pack = load_pack(small_pack)
    manifest = pack.manifest
    assert (manifest.name, manifest.seed, manifest.generator_version) == (
        "small",
        11,
        GENERATOR_VERSION,
    )
    assert len(pack) == len(SMALL_SEEDS)
    for task in manifest.tasks:
        assert set(task.baselines) == {"constant", "generic", "structure", "oracle"}
        assert all(v is not None for v in task.baselines.values())


def test_every_modality_and_task_type_present(small_pack):
    pack = load_pack(small_pack)
    assert {c.config.modality for c in pack.competitions} == set(MODALITIES)
    assert {c.config.task_type for c in pack.competitions} == {
        "binary",
        "multiclass",
        "multilabel",
        "regression",
        "forecasting",
        "image-to-image",
        "ranking",
    }


def test_role_artifacts_sit_beside_prepared_not_in_public(small_pack):
    for competition in load_pack(small_pack).competitions:
        names = {p.name for p in (competition.root / "generation").iterdir()}
        assert {"blueprint.json", "rule.json", "baselines.json", "ladder.json"} <= names
        assert {"milestones.json", "rejections.json"} <= names
        public = {p.name for p in competition.public_dir.rglob("*")}
        assert not public & {"answers.csv", "rule.json", "oracle.csv"}


def test_tasks_are_micro_with_test_sets_large_enough_for_medals(small_pack):
    """Sizes in independent units: rows, or pages of an image-to-image task (its rows are
    pixels; the bootstrap that sets its medals resamples pages)."""
    for competition in load_pack(small_pack).competitions:
        public = competition.public_dir
        if competition.config.task_type == "image-to-image":
            train, test = (
                set(row_groups("image-to-image", pd.read_csv(public / name)["id"]))
                for name in ("train.csv", "test.csv")
            )
            pages = 150 * load_blueprint(competition.root).design.test_factor
            assert 5 <= len(train) <= 20 and 90 <= len(test) <= pages, competition.id
            continue
        train = sum(1 for _ in open(public / "train.csv")) - 1
        test = sum(1 for _ in open(public / "test.csv")) - 1
        assert 150 <= train <= 4000, competition.id
        # one yes/no per row is a noisy score: binary tables get more test rows
        binary_table = (competition.config.modality, competition.config.task_type) == (
            "tabular",
            "binary",
        )
        most = 1200 * (BINARY_TABLE_TEST_FACTOR if binary_table else 1)
        # a redrawn slot may ask for more test rows (generation/blueprint.json's design)
        most *= load_blueprint(competition.root).design.test_factor
        assert 150 <= test <= most, competition.id


def test_same_seed_same_bytes_whatever_the_workers(tmp_path: Path):
    spec = PackSpec(name="twice", n=4, seed=5, secret="a-test-secret-of-16+")
    generate_pack(spec, tmp_path / "a", workers=1, progress=False)
    generate_pack(spec, tmp_path / "b", workers=2, progress=False)
    digests = file_digests(tmp_path / "a")
    assert digests == file_digests(tmp_path / "b")
    assert any(p.endswith(".png") for p in digests)


def test_different_seed_different_bytes(tmp_path: Path):
    generate_pack(PackSpec(n=1, seed=1), tmp_path / "a", workers=1, progress=False)
    generate_pack(PackSpec(n=1, seed=2), tmp_path / "b", workers=1, progress=False)
    assert file_digests(tmp_path / "a") != file_digests(tmp_path / "b")


def test_non_empty_output_folder_is_refused(tmp_path: Path):
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(SandmleError, match="not empty"):
        generate_pack(PackSpec(n=1), tmp_path, progress=False)


def test_unknown_modality_is_a_user_error(tmp_path: Path):
    with pytest.raises(SandmleError, match="unknown modality 'video'"):
        generate_pack(PackSpec(n=1, modalities=["video"]), tmp_path / "p", progress=False)


@pytest.mark.slow
def test_hundred_task_pack_passes_checks(tmp_path: Path):
    generate_pack(PackSpec(n=100, seed=3), tmp_path / "big", workers=2, progress=False)
    pack = load_pack(tmp_path / "big")
    assert len(pack) == 100
    assert {c.config.modality for c in pack.competitions} == set(MODALITIES)
    failures = check_directory(tmp_path / "big")
    assert not [f for fs in failures.values() for f in fs if f.severity == "error"]
