"""Micro replicas of the audio competitions (grading spec §3.10 mlsp-2013-birds, §3.22 whales).

Clips are 0.1 s of noise: the graders never open them, agents only need the files to exist.
"""

from __future__ import annotations

import pandas as pd

from sandmle.benchmarks.mle_bench.replicas.files import (
    ReplicaDir,
    aiff_bytes,
    both_classes,
    image_bytes,
    wav_bytes,
    write_bytes,
    write_csv,
    write_zip,
)

SPECIES = 19
BIRD_RECORDINGS = 12
BIRD_TEST = 4
SUPPLEMENTAL_IMAGES = (
    "filtered_spectrograms",
    "segmentation_examples",
    "spectrograms",
    "supervised_segmentation",
)
HISTOGRAM_HEADER = "rec_id,[histogram of segment features]"
HISTOGRAM_BINS = 100
SEGMENT_FEATURES = 38


def _lines(path_text: list[str]) -> bytes:
    return ("\n".join(path_text) + "\n").encode()


def _segment_tables(r: ReplicaDir, recs: list[int]) -> dict[str, list[str]]:
    """The supplemental tables in their source shapes: a 100-bin histogram per recording; per
    segment (1 to 3 a recording), 38 features and a bounding box (min_x, max_x, min_y, max_y)."""
    histogram = [
        f"{rec}," + ",".join(f"{v:.6f}" for v in r.rng.random(HISTOGRAM_BINS)) for rec in recs
    ]
    features, rectangles = [], []
    for rec in recs:
        for segment in range(int(r.rng.integers(1, 4))):
            values = ",".join(f"{v:.6f}" for v in r.rng.random(SEGMENT_FEATURES))
            features.append(f"{rec},{segment},{values}")
            x0, y0 = int(r.rng.integers(0, 1000)), int(r.rng.integers(0, 200))
            box = (x0, x0 + int(r.rng.integers(5, 80)), y0, y0 + int(r.rng.integers(5, 50)))
            rectangles.append(f"{rec},{segment}," + ",".join(map(str, box)))
    return {
        "histogram_of_segments.txt": histogram,
        "segment_features.txt": features,
        "segment_rectangles.txt": rectangles,
    }


def mlsp_birds(r: ReplicaDir) -> None:
    """§3.10: essential_data/ text files and wavs, supplemental_data/ spectrograms and features,
    answers with ``Id = rec_id * 100 + species``."""
    recs = list(range(BIRD_RECORDINGS))
    test = set(int(v) for v in r.rng.choice(recs, BIRD_TEST, replace=False))
    names = [
        f"PC{1 + rec % 9}_2009{6 + rec % 3:02d}{10 + rec:02d}_0500{rec:02d}_0010" for rec in recs
    ]
    presence = {rec: both_classes(r.rng, SPECIES, 0.15) for rec in recs}
    essential = r.public / "essential_data"
    folds = ["rec_id,fold"] + [f"{rec},{int(rec in test)}" for rec in recs]
    write_bytes(essential / "CVfolds_2.txt", _lines(folds))
    write_bytes(
        essential / "rec_id2filename.txt",
        _lines(["rec_id,filename"] + [f"{rec},{names[rec]}" for rec in recs]),
    )
    labels = ["rec_id,[labels]"]
    for rec in recs:
        present = [str(s) for s in range(SPECIES) if presence[rec][s]]
        labels.append(f"{rec},?" if rec in test else ",".join([str(rec), *present]))
    write_bytes(essential / "rec_labels_test_hidden.txt", _lines(labels))
    species = ["class_id,code,species"] + [f"{s},SP{s:02d},Species {s}" for s in range(SPECIES)]
    write_bytes(essential / "species_list.txt", _lines(species))
    supplemental = r.public / "supplemental_data"
    for rec in recs:
        write_bytes(essential / "src_wavs" / f"{names[rec]}.wav", wav_bytes(r.rng))
        for folder in SUPPLEMENTAL_IMAGES:
            write_bytes(supplemental / folder / f"{names[rec]}.bmp", image_bytes(r.rng, "BMP"))
    for name in ("segment_clusters.bmp", "segment_mosaic.bmp"):
        write_bytes(supplemental / name, image_bytes(r.rng, "BMP"))
    for name, rows in _segment_tables(r, recs).items():
        # MLE-bench rewrites all three with the histogram file's header.
        write_bytes(supplemental / name, _lines([HISTOGRAM_HEADER, *rows]))
    test_recs = sorted(test)
    answers = pd.DataFrame(
        [(rec * 100 + s, int(presence[rec][s])) for rec in test_recs for s in range(SPECIES)],
        columns=["Id", "Probability"],
    )
    answers.loc[0, "Probability"], answers.loc[1, "Probability"] = 1, 0  # both classes
    write_csv(r.public / "sample_submission.csv", answers.assign(Probability=0))
    write_csv(r.private / "answers.csv", answers)


WHALE_TRAIN = 40
WHALE_TEST = 30


def right_whale(r: ReplicaDir) -> None:
    """§3.22: train2.zip (``..._TRAIN<k>_<label>.aif``) and test2.zip (``...Test<k>.aif``)."""
    train: dict[str, bytes] = {}
    for k, label in enumerate(both_classes(r.rng, WHALE_TRAIN, 0.3)):
        day = 28 + k * 2 // WHALE_TRAIN
        stem = f"200903{day:02d}_{k * 97 % 86400:06d}_{k % 60:03d}s{k % 10}ms"
        train[f"train2/{stem}_TRAIN{k}_{label}.aif"] = aiff_bytes(r.rng)
    clips, test = [], {}
    for k in range(WHALE_TEST):
        day = 30 + k * 2 // WHALE_TEST
        clip = f"200903{day:02d}_{k * 89 % 86400:06d}_{k % 60:03d}s{k % 10}ms_Test{k}.aif"
        clips.append(clip)
        test[f"test2/{clip}"] = aiff_bytes(r.rng)
    write_zip(r.public / "train2.zip", train)
    write_zip(r.public / "test2.zip", test)
    answers = pd.DataFrame({"clip": clips, "probability": both_classes(r.rng, WHALE_TEST, 0.3)})
    write_csv(r.public / "sampleSubmission.csv", answers.assign(probability=0))
    write_csv(r.private / "test.csv", answers)
