"""Micro replicas of MLE-bench's seven ``dev`` competitions (graded by MLE-bench's own graders).

Each writes what that competition's ``prepare.py`` writes (openai/mle-bench 783b15a), with a
few dozen synthetic rows: the same file names, folders, columns, id formats and answers, so
``sandmle/mle_bench -T split=dev`` runs offline where ``mlebench`` is importable.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_bench.replicas.files import (
    ReplicaDir,
    both_classes,
    csv_bytes,
    hex_ids,
    image_bytes,
    write_bytes,
    write_csv,
    write_zip,
)

N_TRAIN = 40
N_TEST = 24

DEV_OVERVIEWS = {
    "invasive-species-monitoring": (
        "Photographs taken in a forest: predict the probability that each test image shows "
        "the invasive hydrangea. Metric: ROC AUC."
    ),
    "ml2021spring-hw2": (
        "Frame-level phoneme classification from MFCC features of 11 neighbouring frames "
        "(429 values per row, NumPy arrays). Predict the phoneme class of each test frame. "
        "Metric: accuracy."
    ),
    "movie-review-sentiment-analysis-kernels-only": (
        "Phrases parsed from movie-review sentences, each to be rated on a five-step sentiment "
        "scale from 0 (negative) to 4 (positive). Metric: accuracy."
    ),
    "paddy-disease-classification": (
        "Images of rice plants: name the disease (or normal) of each test image. Training "
        "images sit in one folder per label. Metric: accuracy."
    ),
    "plant-seedlings-classification": (
        "Photographs of seedlings of twelve species: name the species of each test image. "
        "Training images sit in one folder per species. Metric: micro-averaged F1."
    ),
    "playground-series-s3e18": (
        "Molecular descriptors of enzyme substrates: predict the probabilities of the two "
        "enzyme classes EC1 and EC2. Metric: mean ROC AUC of the two."
    ),
    "spaceship-titanic": (
        "Passenger records from a damaged spaceship: predict whether each test passenger was "
        "transported to another dimension. Metric: accuracy."
    ),
}


def spaceship_titanic(r: ReplicaDir) -> None:
    n = N_TRAIN + N_TEST
    groups = r.rng.choice(9000, n, replace=False)
    frame = pd.DataFrame(
        {
            "PassengerId": [f"{g:04d}_01" for g in groups],
            "HomePlanet": r.rng.choice(["Earth", "Europa", "Mars"], n),
            "CryoSleep": r.rng.random(n) < 0.3,
            "Cabin": [f"{d}/{k}/{s}" for d, k, s in zip(r.rng.choice(list("ABCDEFG"), n),
                                                       r.rng.integers(0, 2000, n),
                                                       r.rng.choice(["P", "S"], n), strict=True)],
            "Destination": r.rng.choice(["TRAPPIST-1e", "55 Cancri e", "PSO J318.5-22"], n),
            "Age": r.rng.integers(0, 80, n).astype(float),
            "VIP": r.rng.random(n) < 0.05,
            **{c: np.round(r.rng.exponential(200, n)) for c in
               ("RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck")},
            "Name": [f"Name{k} Surname{k % 7}" for k in range(n)],
            "Transported": both_classes(r.rng, n, 0.5).astype(bool),
        }
    )  # fmt: skip
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test.drop(columns="Transported"))
    write_csv(r.public / "sample_submission.csv", test[["PassengerId"]].assign(Transported=False))
    write_csv(r.private / "test.csv", test)


def playground_s3e18(r: ReplicaDir) -> None:
    n = N_TRAIN + N_TEST
    features = [f"f{k:02d}" for k in range(31)]
    frame = pd.DataFrame(np.round(r.rng.normal(size=(n, 31)), 4), columns=features)
    frame.insert(0, "id", r.rng.choice(15000, n, replace=False))
    for k in range(1, 7):
        frame[f"EC{k}"] = both_classes(r.rng, n, 0.5)
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test.drop(columns=[f"EC{k}" for k in range(1, 7)]))
    write_csv(r.public / "sample_submission.csv", test[["id"]].assign(EC1=0.5, EC2=0.5))
    write_csv(r.private / "test.csv", test)


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def ml2021spring_hw2(r: ReplicaDir) -> None:
    folder = r.public / "timit_11" / "timit_11"
    labels = r.rng.integers(0, 39, N_TRAIN + N_TEST)
    write_bytes(folder / "train_11.npy", _npy(r.rng.normal(size=(N_TRAIN, 429)).astype("float32")))
    write_bytes(folder / "train_label_11.npy", _npy(labels[:N_TRAIN].astype(str)))
    write_bytes(folder / "test_11.npy", _npy(r.rng.normal(size=(N_TEST, 429)).astype("float32")))
    answers = pd.DataFrame({"Id": range(N_TEST), "ClassId": labels[N_TRAIN:]})
    write_csv(r.public / "sampleSubmission.csv", answers.assign(ClassId=0))
    write_csv(r.private / "answers.csv", answers)


def movie_review(r: ReplicaDir) -> None:
    n = N_TRAIN + N_TEST
    words = ["good", "bad", "film", "plot", "dull", "great", "acting", "the", "a", "story"]
    frame = pd.DataFrame(
        {
            "PhraseId": np.arange(1, n + 1),
            "SentenceId": np.arange(n) // 4 + 1,
            "Phrase": [" ".join(r.rng.choice(words, 4)) for _ in range(n)],
            "Sentiment": r.rng.integers(0, 5, n),
        }
    )
    train, answers = frame[:N_TRAIN], frame[N_TRAIN:]
    for name, table in (("train.tsv", train), ("test.tsv", answers.drop(columns="Sentiment"))):
        text = table.to_csv(index=False, sep="\t", lineterminator="\n").encode()
        write_zip(r.public / f"{name}.zip", {name: text})
    write_csv(r.public / "sampleSubmission.csv", answers[["PhraseId"]].assign(Sentiment=2))
    write_csv(r.private / "answers.csv", answers)


def paddy(r: ReplicaDir) -> None:
    n = N_TRAIN + N_TEST
    labels = ["bacterial_leaf_blight", "blast", "brown_spot", "normal", "tungro"]
    frame = pd.DataFrame(
        {
            "image_id": [f"{100000 + k}.jpg" for k in r.rng.choice(900000, n, replace=False)],
            "label": r.rng.choice(labels, n),
            "variety": r.rng.choice(["ADT45", "KarnatakaPonni", "Ponni"], n),
            "age": r.rng.integers(45, 82, n),
        }
    )
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    for label, image_id in zip(train["label"].tolist(), train["image_id"].tolist(), strict=True):
        write_bytes(r.public / "train_images" / label / image_id, image_bytes(r.rng, "JPEG"))
    for image_id in test["image_id"].tolist():
        write_bytes(r.public / "test_images" / image_id, image_bytes(r.rng, "JPEG"))
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "sample_submission.csv", test[["image_id"]].assign(label="normal"))
    write_csv(r.private / "test.csv", test)


def plant_seedlings(r: ReplicaDir) -> None:
    species = ["Black-grass", "Charlock", "Cleavers", "Common Chickweed", "Maize", "Fat Hen"]
    files = [f"{h}.png" for h in hex_ids(r.rng, N_TRAIN + N_TEST, 9)]
    labels = r.rng.choice(species, len(files))
    for name, label in zip(files[:N_TRAIN], labels[:N_TRAIN], strict=True):
        write_bytes(r.public / "train" / label / name, image_bytes(r.rng, "PNG"))
    for name in files[N_TRAIN:]:
        write_bytes(r.public / "test" / name, image_bytes(r.rng, "PNG"))
    answers = pd.DataFrame({"file": files[N_TRAIN:], "species": labels[N_TRAIN:]})
    write_csv(r.public / "sample_submission.csv", answers.assign(species="Maize"))
    write_csv(r.private / "answers.csv", answers)


def invasive_species(r: ReplicaDir) -> None:
    names = np.arange(1, N_TRAIN + N_TEST + 1)
    invasive = both_classes(r.rng, len(names), 0.4)
    frame = pd.DataFrame({"name": names, "invasive": invasive})
    train, answers = frame[:N_TRAIN], frame[N_TRAIN:]
    for split, part in (("train", train), ("test", answers)):
        for name in part["name"]:
            write_bytes(r.public / split / f"{name}.jpg", image_bytes(r.rng, "JPEG"))
    write_csv(r.public / "train_labels.csv", train)
    sample = answers.assign(invasive=0.5)
    write_bytes(r.public / "sample_submission.csv", csv_bytes(sample))
    write_csv(r.private / "sample_submission.csv", sample)
    write_csv(r.private / "answers.csv", answers)


DEV_BUILDERS = {
    "invasive-species-monitoring": invasive_species,
    "ml2021spring-hw2": ml2021spring_hw2,
    "movie-review-sentiment-analysis-kernels-only": movie_review,
    "paddy-disease-classification": paddy,
    "plant-seedlings-classification": plant_seedlings,
    "playground-series-s3e18": playground_s3e18,
    "spaceship-titanic": spaceship_titanic,
}


def dev_description(competition_id: str) -> str:
    return (
        f"# {competition_id}\n\n{DEV_OVERVIEWS[competition_id]}\n\n"
        "This is a micro replica with a few dozen synthetic rows in the layout MLE-bench's "
        "`prepare.py` writes; scores on it say nothing about skill on the real competition. "
        "Write your submission in the sample submission's format.\n"
    )
