"""Micro replicas of the image competitions, one writer per competition (grading spec §3.x).

Each writer fills ``<id>/prepared/{public,private}`` with exactly the files MLE-bench's
``prepare.py`` writes, a few dozen tiny images where the real one has thousands.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.media import png_bytes
from sandmle.benchmarks.mle_bench.competitions import get_competition
from sandmle.benchmarks.mle_bench.replicas.files import (
    ReplicaDir,
    both_classes,
    hex_ids,
    image_bytes,
    one_hot,
    pixels,
    tfrecord_bytes,
    write_bytes,
    write_csv,
    write_zip,
)

N_TRAIN = 40
N_TEST = 30


def _targets(competition_id: str) -> list[str]:
    return list(get_competition(competition_id).target_columns)


def _images(r: ReplicaDir, folder: str, names: list[str], fmt: str) -> None:
    for name in names:
        write_bytes(r.public / folder / name, image_bytes(r.rng, fmt))


def aerial_cactus(r: ReplicaDir) -> None:
    """§3.1: images at the root of train.zip/test.zip; ids are file names; no public test.csv."""
    ids = [f"{h}.jpg" for h in hex_ids(r.rng, N_TRAIN + N_TEST, 32)]
    y = both_classes(r.rng, len(ids), 0.75)
    train = pd.DataFrame({"id": ids[:N_TRAIN], "has_cactus": y[:N_TRAIN]})
    test = pd.DataFrame({"id": ids[N_TRAIN:], "has_cactus": y[N_TRAIN:]})
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "sample_submission.csv", test.assign(has_cactus=0.5))
    write_zip(r.public / "train.zip", {i: image_bytes(r.rng, "JPEG") for i in train["id"]})
    write_zip(r.public / "test.zip", {i: image_bytes(r.rng, "JPEG") for i in test["id"]})
    write_csv(r.private / "test.csv", test)


def aptos(r: ReplicaDir) -> None:
    """§3.2: 12-hex id_code, PNG folders, diagnosis 0-4."""
    ids = hex_ids(r.rng, N_TRAIN + N_TEST, 12)
    grades = np.concatenate([np.arange(5), r.rng.integers(0, 5, len(ids) - 5)])
    frame = pd.DataFrame({"id_code": ids, "diagnosis": r.rng.permutation(grades)})
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test[["id_code"]])
    write_csv(r.public / "sample_submission.csv", test.assign(diagnosis=0))
    _images(r, "train_images", [f"{i}.png" for i in train["id_code"]], "PNG")
    _images(r, "test_images", [f"{i}.png" for i in test["id_code"]], "PNG")
    write_csv(r.private / "test.csv", test)


def denoising(r: ReplicaDir) -> None:
    """§3.3: noisy/clean PNG pairs with integer stems; one answers row per test pixel."""
    stems = [int(s) for s in r.rng.choice(np.arange(1, 200), 8, replace=False)]
    clean: dict[int, np.ndarray] = {}
    for k, stem in enumerate(stems):
        clean[stem] = pixels(r.rng, 8)[:6, :]  # 6 rows x 8 columns
        noise = r.rng.integers(-40, 40, clean[stem].shape)
        noisy = np.clip(clean[stem].astype(int) + noise, 0, 255).astype(np.uint8)
        split = "train" if k < 5 else "test"
        write_bytes(r.public / split / f"{stem}.png", png_bytes(noisy))
        if split == "train":
            write_bytes(r.public / "train_cleaned" / f"{stem}.png", png_bytes(clean[stem]))
    rows: list[tuple[str, float]] = []
    for stem in sorted(stems[5:], key=lambda s: f"{s}.png"):  # sorted file order, row-major
        image = clean[stem]
        rows += [
            (f"{stem}_{y + 1}_{x + 1}", float(image[y, x]) / 255)
            for y in range(image.shape[0])
            for x in range(image.shape[1])
        ]
    answers = pd.DataFrame(rows, columns=["id", "value"])
    write_csv(r.public / "sampleSubmission.csv", answers.assign(value=1))
    write_csv(r.private / "answers.csv", answers)


def dog_breed(r: ReplicaDir) -> None:
    """§3.5: labels.csv, 32-hex ids, 120 breed columns (uniform sample), one-hot answers."""
    breeds = _targets("dog-breed-identification")
    ids = hex_ids(r.rng, N_TRAIN + N_TEST, 32)
    labels = [breeds[k] for k in r.rng.integers(0, 8, len(ids))]  # a handful of breeds
    write_csv(
        r.public / "labels.csv", pd.DataFrame({"id": ids[:N_TRAIN], "breed": labels[:N_TRAIN]})
    )
    _images(r, "train", [f"{i}.jpg" for i in ids[:N_TRAIN]], "JPEG")
    _images(r, "test", [f"{i}.jpg" for i in ids[N_TRAIN:]], "JPEG")
    test_ids = ids[N_TRAIN:]
    uniform = pd.DataFrame({"id": test_ids, **{b: 1 / len(breeds) for b in breeds}})
    write_csv(r.public / "sample_submission.csv", uniform)
    hot = np.zeros((N_TEST, len(breeds)), dtype=np.int64)
    hot[np.arange(N_TEST), [breeds.index(b) for b in labels[N_TRAIN:]]] = 1
    write_csv(
        r.private / "test.csv",
        pd.DataFrame(hot, columns=breeds).assign(id=test_ids)[["id", *breeds]],
    )


def dogs_vs_cats(r: ReplicaDir) -> None:
    """§3.6: cat.<k>.jpg/dog.<k>.jpg in train/ and train.zip, 1..n.jpg in test/ and test.zip
    (MLE-bench zips each folder and keeps it), label = P(dog)."""
    kinds = both_classes(r.rng, N_TRAIN, 0.5)
    counters = {0: 0, 1: 0}
    train: dict[str, bytes] = {}
    for kind in kinds:
        train[f"{('cat', 'dog')[kind]}.{counters[kind]}.jpg"] = image_bytes(r.rng, "JPEG")
        counters[kind] += 1
    test_ids = list(range(1, N_TEST + 1))
    test = {f"{i}.jpg": image_bytes(r.rng, "JPEG") for i in test_ids}
    for folder, files in (("train", train), ("test", test)):
        write_zip(r.public / f"{folder}.zip", files)
        for name, data in files.items():
            write_bytes(r.public / folder / name, data)
    answers = pd.DataFrame({"id": test_ids, "label": both_classes(r.rng, N_TEST, 0.5)})
    write_csv(r.public / "sample_submission.csv", answers.assign(label=0.5))
    write_csv(r.private / "answers.csv", answers)


def histopathologic(r: ReplicaDir) -> None:
    """§3.7: 40-hex ids, .tif patches, train_labels.csv, answers in private/answers.csv."""
    ids = hex_ids(r.rng, N_TRAIN + N_TEST, 40)
    y = both_classes(r.rng, len(ids), 0.4)
    frame = pd.DataFrame({"id": ids, "label": y})
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train_labels.csv", train)
    write_csv(r.public / "sample_submission.csv", test.assign(label=0))
    _images(r, "train", [f"{i}.tif" for i in train["id"]], "TIFF")
    _images(r, "test", [f"{i}.tif" for i in test["id"]], "TIFF")
    write_csv(r.private / "answers.csv", test)


def plant_pathology(r: ReplicaDir) -> None:
    """§3.13: Train_<k>/Test_<k> ids, images/ folder, 4 one-hot classes (each present in test)."""
    classes = _targets("plant-pathology-2020-fgvc7")
    train_ids = [f"Train_{k}" for k in range(N_TRAIN)]
    test_ids = [f"Test_{k}" for k in range(N_TEST)]
    train = pd.DataFrame(one_hot(r.rng, N_TRAIN, 4, 8), columns=classes)
    test = pd.DataFrame(one_hot(r.rng, N_TEST, 4, 8), columns=classes)
    write_csv(r.public / "train.csv", train.assign(image_id=train_ids)[["image_id", *classes]])
    write_csv(r.public / "test.csv", pd.DataFrame({"image_id": test_ids}))
    sample = pd.DataFrame({"image_id": test_ids, **dict.fromkeys(classes, 0.25)})
    write_csv(r.public / "sample_submission.csv", sample)
    _images(r, "images", [f"{i}.jpg" for i in train_ids + test_ids], "JPEG")
    write_csv(r.private / "test.csv", test.assign(image_id=test_ids)[["image_id", *classes]])


RANZCR_LABELS = (
    "ETT - Abnormal",
    "ETT - Borderline",
    "ETT - Normal",
    "NGT - Abnormal",
    "NGT - Borderline",
    "NGT - Incompletely Imaged",
    "NGT - Normal",
    "CVC - Abnormal",
    "CVC - Borderline",
    "CVC - Normal",
    "Swan Ganz Catheter Present",
)


def ranzcr(r: ReplicaDir) -> None:
    """§3.15: 11 labels + PatientID in train/answers, only the first 9 in the sample."""
    n = N_TRAIN + N_TEST
    uids = [f"1.2.826.0.1.3680043.8.498.{v}" for v in r.rng.choice(10**11, n, replace=False)]
    labels = {name: both_classes(r.rng, n, 0.3) for name in RANZCR_LABELS}
    for name in RANZCR_LABELS:  # both classes in the test rows too
        labels[name][N_TRAIN], labels[name][N_TRAIN + 1] = 1, 0
    patients = [f"ec{v:07d}" for v in r.rng.integers(0, 10**7, n)]
    frame = pd.DataFrame({"StudyInstanceUID": uids, **labels, "PatientID": patients})
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    notes = pd.DataFrame(
        {
            "StudyInstanceUID": train["StudyInstanceUID"][:10],
            "label": "CVC - Normal",
            "data": "[[1487, 1279], [1477, 1168]]",
        }
    )
    write_csv(r.public / "train_annotations.csv", notes)
    graded = list(RANZCR_LABELS[:9])
    write_csv(
        r.public / "sample_submission.csv",
        test[["StudyInstanceUID", *graded]].assign(**dict.fromkeys(graded, 0)),
    )
    _images(r, "train", [f"{u}.jpg" for u in train["StudyInstanceUID"]], "JPEG")
    _images(r, "test", [f"{u}.jpg" for u in test["StudyInstanceUID"]], "JPEG")
    write_csv(r.private / "test.csv", test)


def siim_isic(r: ReplicaDir) -> None:
    """§3.16: ISIC_<7 digits> names, .dcm and jpeg/ folders, tfrecords/ shards (each a few
    TFRecord-framed records; the payloads are short labels, not ``tf.train.Example`` protos)."""
    n = N_TRAIN + N_TEST
    names = [f"ISIC_{v:07d}" for v in r.rng.choice(10**7, n, replace=False)]
    target = both_classes(r.rng, n, 0.2)
    frame = pd.DataFrame(
        {
            "image_name": names,
            "patient_id": [f"IP_{v:07d}" for v in r.rng.integers(0, 10**7, n)],
            "sex": r.rng.choice(["male", "female"], n),
            "age_approx": r.rng.choice([30.0, 45.0, 60.0, 75.0], n),
            "anatom_site_general_challenge": r.rng.choice(
                ["torso", "head/neck", "lower extremity"], n
            ),
            "diagnosis": np.where(target == 1, "melanoma", "nevus"),
            "benign_malignant": np.where(target == 1, "malignant", "benign"),
            "target": target,
        }
    )
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test[list(frame.columns[:5])])
    write_csv(r.public / "sample_submission.csv", test[["image_name"]].assign(target=0))
    for split, part in (("train", train), ("test", test)):
        for name in part["image_name"]:
            write_bytes(r.public / split / f"{name}.dcm", b"\0" * 128 + b"DICM")
        _images(r, f"jpeg/{split}", [f"{name}.jpg" for name in part["image_name"]], "JPEG")
    shards = [f"train{k:02d}-2071.tfrec" for k in range(14)] + [
        "test00-2071.tfrec",
        "test01-2071.tfrec",
    ]
    for shard in shards:
        payloads = [f"{shard}:{k}".encode() for k in range(3)]
        write_bytes(r.public / "tfrecords" / shard, tfrecord_bytes(payloads))
    write_csv(r.private / "test.csv", test[["image_name", "target"]])
