"""Difficulty: three independent learners on a synthetic pack, medal distribution per modality.

Each learner reads only the task's public files (train.csv, test.csv, images) and, for the
structure-aware one, the rule's *form* from generation/rule.json (never its weights, never
the answers). Their submissions are graded by the real grader. Prints JSON:

* per modality and learner, the number of tasks at each tier (gold/silver/bronze/
  above_median/none); besides the generator's three learners, ``forest`` is a random forest
  on the same generic features that the generator never runs (an outside check that the
  median-to-gold band is not tuned to one model family);
* the acceptance figures: the constant never above median, the generic learner between
  median and gold on >= 70% of tasks, the structure-aware learner gold on >= 90%, and every
  band between adjacent milestones >= 2 bootstrap sds (sigma re-estimated here from the
  generic and structure-aware submissions on 60 resamples of the test rows, or of whole
  pages / sentences where rows are not independent).

Usage: python bench/synth_difficulty.py [PACK_DIR]   (default: a fresh 40-task pack, seed 123)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import HiddenRule, PublicData
from sandmle.benchmarks.synthetic.baselines import LEARNERS, ladder
from sandmle.benchmarks.synthetic.mlops import bootstrap_ladder
from sandmle.benchmarks.synthetic.modalities.registry import modality_of
from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.benchmarks.synthetic.pipeline import row_groups
from sandmle.benchmarks.synthetic.task_files import load_blueprint
from sandmle.harness.grading.reading import read_csv_reference
from sandmle.harness.grading.report import grade_frame
from sandmle.harness.pack import load_pack

TIERS = ("gold", "silver", "bronze", "above_median", "none")
SIZE, SEED = 40, 123


def _tier(report) -> str:
    if not report.valid_submission:
        return "invalid"
    for tier in TIERS[:-1]:
        if getattr(report, f"{tier}_medal" if tier != "above_median" else tier):
            return tier
    return "none"


def task_result(competition) -> dict:
    """Tiers of the three learners and the band widths in sigma for one task."""
    bp = load_blueprint(competition.root)
    rule = HiddenRule.model_validate_json(
        (competition.root / "generation/rule.json").read_text(encoding="utf-8")
    )
    rule = HiddenRule(kind=rule.kind, summary="", params={"structure": rule.params["structure"]})
    public = PublicData.from_folder(competition.public_dir)
    predictions = ladder(bp, rule, public)
    forest = _forest(bp, public)
    if forest is not None:
        predictions["forest"] = forest
    ids = public.test[bp.domain.id_column]
    frames = {}
    tiers = {"forest": "n/a"}
    for name in predictions:
        frame = tg.submission_frame(bp, ids, predictions[name])
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as handle:
            frame.to_csv(handle.name, index=False, float_format="%.8g")
            frames[name] = read_csv_reference(handle.name)
        tiers[name] = _tier(grade_frame(frames[name], competition))
    answers = read_csv_reference(competition.answers_path)
    spread = bootstrap_ladder(
        competition.config,
        answers,
        {k: frames[k] for k in ("generic", "structure")},
        np.random.default_rng(0),
        row_groups(bp.dna.task_type, answers[bp.domain.id_column]),  # pages, sentences
    )
    t = competition.config.thresholds
    values = [t.median, t.bronze, t.silver, t.gold]
    bands = [abs(b - a) / spread.sigma for a, b in zip(values, values[1:], strict=False)]
    return {"modality": _kind(bp), "tiers": tiers, "min_band_sigma": round(min(bands), 3)}


def _kind(bp) -> str:
    """The modality, or modality/task type for task types with their own module (seq2seq)."""
    own = modality_of(bp.dna).plan is not None
    return f"{bp.dna.modality}/{bp.dna.task_type}" if own else bp.dna.modality


def _forest(bp, public: PublicData) -> np.ndarray | None:
    """A random forest on the modality's generic features (not a model the generator uses);
    None where targets are not numbers (seq2seq texts)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    if bp.dna.task_type == "seq2seq":
        return None
    x, x_test = modality_of(bp.dna).features(bp, public)
    y = tg.encode_train_targets(bp, public.train)
    k = bp.dna.n_outputs
    if tg.is_classification(bp):
        model = RandomForestClassifier(300, min_samples_leaf=2, random_state=0).fit(x, y)
        proba = np.zeros((len(x_test), k))
        proba[:, model.classes_] = model.predict_proba(x_test)
        proba = np.clip(proba, 1e-3, None)
        return proba / proba.sum(axis=1, keepdims=True)
    if bp.dna.task_type == "multilabel":
        model = RandomForestClassifier(300, min_samples_leaf=2, random_state=0)
        model.fit(x, y.astype(int))
        columns = [
            p[:, list(c).index(1)] if 1 in c else np.zeros(len(x_test))
            for p, c in zip(model.predict_proba(x_test), model.classes_, strict=True)
        ]
        return np.column_stack(columns)
    # fewer trees on image-to-image tasks (a row per pixel)
    model = RandomForestRegressor(100 if len(x) > 5000 else 300, min_samples_leaf=2, random_state=0)
    pred = model.fit(x, y if y.shape[1] > 1 else y.ravel()).predict(x_test)
    return pred.reshape(len(x_test), -1)


def difficulty(pack_dir: Path) -> dict:
    pack = load_pack(pack_dir)
    rows = [task_result(c) for c in pack.competitions]
    result: dict = {"tasks": len(rows), "by_modality": {}}
    for modality in sorted({r["modality"] for r in rows}):
        group = [r for r in rows if r["modality"] == modality]
        result["by_modality"][modality] = {
            "tasks": len(group),
            **{
                name: {t: sum(r["tiers"][name] == t for r in group) for t in (*TIERS, "invalid")}
                for name in (*LEARNERS, "forest")
            },
            "forest_not_applicable": sum(r["tiers"]["forest"] == "n/a" for r in group),
        }
    n = len(rows)
    between = sum(r["tiers"]["generic"] in ("above_median", "bronze", "silver") for r in rows)
    forests = [r for r in rows if r["tiers"]["forest"] != "n/a"] or rows
    result["acceptance"] = {
        "constant_above_median": sum(r["tiers"]["constant"] not in ("none",) for r in rows),
        "generic_between_median_and_gold_share": round(between / n, 3),
        "structure_gold_share": round(sum(r["tiers"]["structure"] == "gold" for r in rows) / n, 3),
        "min_band_sigma": min(r["min_band_sigma"] for r in rows),
        "tasks_with_band_below_2_sigma": sum(r["min_band_sigma"] < 2 for r in rows),
        "forest_between_median_and_gold_share": round(
            sum(r["tiers"]["forest"] in ("above_median", "bronze", "silver") for r in forests)
            / len(forests),
            3,
        ),
        "forest_gold_share": round(
            sum(r["tiers"]["forest"] == "gold" for r in forests) / len(forests), 3
        ),
    }
    return result


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps(difficulty(Path(sys.argv[1])), indent=2))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            spec = PackSpec(n=SIZE, seed=SEED, secret="synth-difficulty-bench-secret")
            outcomes = generate_pack(spec, Path(tmp) / "p", workers=2, progress=False)
            generated = time.perf_counter() - start
            report = difficulty(Path(tmp) / "p")
            report["generation_seconds"] = round(generated, 1)
            report["rejected_attempts"] = sum(len(o.rejections) for o in outcomes)
            report["empty_slots"] = sum(o.task_id is None for o in outcomes)
            print(json.dumps(report, indent=2))
