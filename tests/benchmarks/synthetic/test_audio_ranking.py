"""Audio and ranking tasks: real WAV files, MAP@k submissions, the same gate as every modality,
and lite seeds that keep their original modality and task type."""

from __future__ import annotations

import importlib.util
import json
import shutil
import wave
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import HiddenRule, PublicData
from sandmle.benchmarks.synthetic.baselines import ladder
from sandmle.benchmarks.synthetic.blueprint import MODALITIES
from sandmle.benchmarks.synthetic.mlops import Ladder, NoisyMilestones, place_milestones
from sandmle.benchmarks.synthetic.modalities import ranking
from sandmle.benchmarks.synthetic.modalities.audio_calls import PATTERNS
from sandmle.benchmarks.synthetic.sanity import check_task
from sandmle.benchmarks.synthetic.seeds import LITE_SEEDS, SEEDS
from sandmle.benchmarks.synthetic.task_files import load_blueprint
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.pack import load_pack, write_manifest

WHALE = "the-icml-2013-whale-challenge-right-whale-redux"
BIRDS = "mlsp-2013-birds"
RANKING = "h-and-m-personalized-fashion-recommendations"
BENCH = Path(__file__).resolve().parents[3] / "bench" / "synth_difficulty.py"


def _task_root(pack: Path, seed_task: str) -> Path:
    entry = next(t for t in load_pack(pack).manifest.tasks if t.seed_task == seed_task)
    return pack / entry.id


# ---- seeds keep their structure ----


def test_every_lite_seed_keeps_its_original_modality():
    assert len(LITE_SEEDS) == 22
    for seed in LITE_SEEDS:
        assert SEEDS[seed].modality == SEEDS[seed].original_modality, seed
    assert "audio" in MODALITIES


def test_audio_seeds_keep_their_task_type_and_metric():
    whale, birds = SEEDS[WHALE], SEEDS[BIRDS]
    assert (whale.modality, whale.task_type, whale.metric) == ("audio", "binary", "roc_auc")
    assert (birds.modality, birds.task_type, birds.metric) == (
        "audio",
        "multilabel",
        "mean_columnwise_roc_auc",
    )
    assert birds.original_outputs == 19


def test_ranking_seed_is_map_at_12_outside_the_lite_set():
    seed = SEEDS[RANKING]
    assert RANKING not in LITE_SEEDS
    assert (seed.task_type, seed.metric, seed.target_kind) == ("ranking", "map_at_12", "ranked")


# ---- audio files ----


def test_audio_task_files_are_real_pcm_wavs(small_pack: Path):
    root = _task_root(small_pack, WHALE)
    bp = load_blueprint(root)
    public = root / "prepared/public"
    ids = pd.concat([pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")])
    ids = ids[bp.domain.id_column].astype(str)
    wavs = sorted((public / "audio").glob("*.wav"))
    assert {p.stem for p in wavs} == set(ids)
    rate, seconds = int(bp.params["sample_rate"]), float(bp.params["seconds"])
    for path in wavs[:25]:
        assert path.read_bytes()[:4] == b"RIFF" and path.read_bytes()[8:12] == b"WAVE"
        with wave.open(str(path), "rb") as handle:
            assert handle.getnchannels() == 1 and handle.getsampwidth() == 2
            assert handle.getframerate() == rate
            assert handle.getnframes() == int(rate * seconds)
            samples = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2")
        assert 0 < np.abs(samples).max() <= 32767 and samples.std() > 100  # not silence
    assert "`audio/`" in (public / "description.md").read_text()


def test_audio_structure_learner_sees_the_mapping_the_generic_one_does_not(small_pack: Path):
    root = _task_root(small_pack, WHALE)
    scores = json.loads((root / "generation/baselines.json").read_text())
    assert scores["constant"] == 0.5  # ROC AUC of a constant
    assert scores["constant"] < scores["generic"] < scores["structure"] <= 1.0
    rule = json.loads((root / "generation/rule.json").read_text())
    patterns = [c["pattern"] for c in rule["params"]["structure"]["calls"]]
    assert len(patterns) == 3 and set(patterns) <= set(PATTERNS)


# ---- the gate, as for every modality ----


@pytest.mark.parametrize("seed_task", [WHALE, RANKING])
def test_gate_accepts_the_generated_task(small_pack: Path, seed_task: str):
    failures = [f for f in check_task(_task_root(small_pack, seed_task)) if f.severity == "error"]
    assert failures == []


@pytest.mark.parametrize("seed_task", [WHALE, RANKING])
def test_gate_rejects_a_structure_learner_no_better_than_the_generic_one(
    small_pack: Path, tmp_path: Path, seed_task: str
):
    original = _task_root(small_pack, seed_task)
    root = Path(shutil.copytree(original, tmp_path / original.name))
    submissions = root / "generation/submissions"
    shutil.copy(submissions / "generic.csv", submissions / "structure.csv")
    reasons = [f.reason for f in check_task(root, ["ladder_medals"])]
    assert any(r.startswith("structure-aware learner scores") for r in reasons)


@pytest.mark.parametrize("seed_task", [WHALE, RANKING])
def test_milestones_refuse_a_ladder_without_room(small_pack: Path, seed_task: str):
    """place_milestones on the task's own ladder accepts; with the structure-aware score moved
    onto the generic one, the bands are thinner than 2 sigma and the task is rejected."""
    root = _task_root(small_pack, seed_task)
    bp = load_blueprint(root)
    ladder_ = Ladder.model_validate_json((root / "generation/ladder.json").read_text())
    assert place_milestones(bp, ladder_).bands_in_sigma[0] >= 2.0
    squeezed = ladder_.model_copy(deep=True)
    squeezed.scores["structure"].score = squeezed.scores["generic"].score
    with pytest.raises(NoisyMilestones, match="too close"):
        place_milestones(bp, squeezed)


# ---- ranking ----


def test_ranking_files_and_sample_follow_map_at_k(small_pack: Path):
    root = _task_root(small_pack, RANKING)
    bp = load_blueprint(root)
    public = root / "prepared/public"
    catalogue = set(bp.domain.class_names)
    assert len(catalogue) == bp.dna.n_outputs == 30
    target = bp.domain.target_columns[0]
    taken = pd.read_csv(public / "train.csv")[target].str.split()
    assert taken.map(len).between(1, ranking.MAX_TAKEN).all()
    assert all(set(row) <= catalogue for row in taken)
    sample = pd.read_csv(public / "sample_submission.csv")
    listed = sample[target].str.split()
    assert listed.map(len).eq(12).all() and all(set(row) <= catalogue for row in listed)
    answers = pd.read_csv(root / "prepared/private/answers.csv")
    assert list(answers.columns) == [bp.domain.id_column, target]
    competition = load_competition(root)
    report = grade_csv(competition.sample_submission_path, competition)
    assert report.valid_submission and not report.above_median


def test_ranking_learners_rank_by_score_and_popularity(small_pack: Path):
    root = _task_root(small_pack, RANKING)
    bp = load_blueprint(root)
    rule = HiddenRule.model_validate_json((root / "generation/rule.json").read_text())
    data = PublicData.from_folder(root / "prepared/public")
    predictions = ladder(bp, rule, data)
    y = tg.encode_train_targets(bp, data.train)
    assert y.shape == (len(data.train), 30) and set(np.unique(y)) <= {0.0, 1.0}
    assert np.allclose(predictions["constant"][0], y.mean(axis=0))  # item popularity
    frame = tg.submission_frame(bp, data.test[bp.domain.id_column], predictions["constant"])
    best = np.array(bp.domain.class_names)[np.argsort(-y.mean(axis=0), kind="stable")[:12]]
    assert frame.iloc[0, 1] == " ".join(best)
    scores = json.loads((root / "generation/baselines.json").read_text())
    for name in ("constant", "generic", "structure"):
        graded = pd.read_csv(root / f"generation/submissions/{name}.csv")
        report = grade_csv(root / f"generation/submissions/{name}.csv", load_competition(root))
        assert report.score == scores[name] and len(graded) == bp.n_test


# ---- the difficulty bench ----


def test_synth_difficulty_reports_audio_and_ranking(small_pack: Path, tmp_path: Path):
    pack = load_pack(small_pack)
    keep = [t for t in pack.manifest.tasks if t.seed_task in (WHALE, RANKING)]
    for task in keep:
        shutil.copytree(small_pack / task.id, tmp_path / task.id)
    write_manifest(pack.manifest.model_copy(update={"tasks": keep}), tmp_path)
    spec = importlib.util.spec_from_file_location("synth_difficulty", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.difficulty(tmp_path)
    assert result["tasks"] == 2
    assert {key.split("/")[0] for key in result["by_modality"]} == {"audio", "tabular"}
    assert "tabular/ranking" in result["by_modality"]
    for group in result["by_modality"].values():
        assert group["structure"]["gold"] == 1 and group["constant"]["none"] == 1
        assert group["forest"]["invalid"] == 0
