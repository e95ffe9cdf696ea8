"""Replicas against the committed manifest of what ``mlebench prepare`` writes."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from sandmle.benchmarks.mle_bench.competitions import lite_competitions
from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
from sandmle.benchmarks.mle_bench.replicas.manifest import MANIFEST, check_prepared, load_manifest


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replicas")
    build_replicas(out)
    return out


def test_manifest_covers_the_lite_competitions_and_says_how_it_was_derived() -> None:
    assert sorted(load_manifest()) == sorted(lite_competitions())
    header = MANIFEST.read_text().split("\n\n", 1)[0]
    assert "checksums.yaml" in header and "prepare.py" in header


@pytest.mark.parametrize("competition_id", sorted(lite_competitions()))
def test_replica_matches_the_manifest(replicas: Path, competition_id: str) -> None:
    assert check_prepared(replicas / competition_id, competition_id) == []


def _copy(replicas: Path, competition_id: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(replicas / competition_id, tmp_path / competition_id))


def test_the_check_finds_each_kind_of_mismatch(replicas: Path, tmp_path: Path) -> None:
    pizza = _copy(replicas, "random-acts-of-pizza", tmp_path)
    (pizza / "prepared/public/test.json").write_text('[{"request_id": "t3_x"}]')
    (pizza / "prepared/public/extra.csv").write_text("a\n1\n")
    (pizza / "prepared/public/train.zip").unlink()
    assert check_prepared(pizza, "random-acts-of-pizza") == [
        "public/train.zip: missing",
        "public/extra.csv: not written by prepare.py",
        "public/test.json: records have [1] fields, not 17",
    ]
    siim = _copy(replicas, "siim-isic-melanoma-classification", tmp_path)
    (siim / "prepared/public/tfrecords/train00-2071.tfrec").write_bytes(b"")
    assert check_prepared(siim, "siim-isic-melanoma-classification") == [
        "public/tfrecords: 1 empty file(s), e.g. train00-2071.tfrec"
    ]


def test_the_check_reads_quoting_columns_and_zip_members(replicas: Path, tmp_path: Path) -> None:
    text = _copy(replicas, "text-normalization-challenge-english-language", tmp_path)
    (text / "prepared/private/answers.csv").write_text("id,after\n0_0,x\n")
    whale = _copy(replicas, "the-icml-2013-whale-challenge-right-whale-redux", tmp_path)
    with zipfile.ZipFile(whale / "prepared/public/test2.zip", "w") as archive:
        archive.writestr("clip.aif", b"x")
    (whale / "prepared/private/test.csv").write_text("clip,p\nx,1\n")
    assert check_prepared(text, "text-normalization-challenge-english-language") == [
        "private/answers.csv: header quoting is not nonnumeric"
    ]
    problems = check_prepared(whale, "the-icml-2013-whale-challenge-right-whale-redux")
    assert problems[0] == "public/test2.zip: members ['clip.aif'] do not match 'test2/*.aif'"
    assert problems[1].startswith("private/test.csv: columns ['clip', 'p']")


def test_descriptions_are_written_for_sandmle(replicas: Path) -> None:
    for cid in lite_competitions():
        text = (replicas / cid / "prepared/public/description.md").read_text()
        assert "## Evaluation" in text and "## Submission" in text and "## Files" in text
        assert "micro replica" in text
