"""Micro replicas of the tabular competitions (grading spec §3.9, 3.11, 3.12, 3.18, 3.19).

Features are noise plus a linear signal of the target, so a model can learn something.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_bench.competitions import get_competition
from sandmle.benchmarks.mle_bench.replicas.files import (
    ReplicaDir,
    both_classes,
    image_bytes,
    write_bytes,
    write_csv,
)

N_TRAIN = 60
N_TEST = 40


def _signal(
    r: ReplicaDir, target: np.ndarray, columns: list[str], scale: float = 1.0
) -> pd.DataFrame:
    """Numeric features: Gaussian noise, each with a random share of ``target``."""
    weights = r.rng.normal(0, 1, len(columns))
    noise = r.rng.normal(0, 1, (len(target), len(columns)))
    values = np.round((noise + np.outer(target, weights)) * scale, 6)
    return pd.DataFrame(values, columns=columns)


def leaf(r: ReplicaDir) -> None:
    """§3.9: integer ids, 192 shape features, 99 species; images/ holds train and test ids."""
    species = list(get_competition("leaf-classification").target_columns)
    n = N_TRAIN + N_TEST
    ids = sorted(int(v) for v in r.rng.choice(np.arange(1, 1600), n, replace=False))
    ids = [int(v) for v in r.rng.permutation(ids)]
    labels = r.rng.integers(0, 12, n)  # a dozen of the 99 species occur
    features = [f"{kind}{k}" for kind in ("margin", "shape", "texture") for k in range(1, 65)]
    table = _signal(r, labels / 12, features, 0.01).abs()
    train = pd.concat(
        [pd.DataFrame({"id": ids, "species": [species[k] for k in labels]}), table], axis=1
    )[:N_TRAIN]
    test = pd.concat([pd.DataFrame({"id": ids}), table], axis=1)[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test)
    test_ids = ids[N_TRAIN:]
    sample = pd.DataFrame({"id": test_ids, **dict.fromkeys(species, 1 / len(species))})
    write_csv(r.public / "sample_submission.csv", sample)
    for value in ids:
        write_bytes(r.public / "images" / f"{value}.jpg", image_bytes(r.rng, "JPEG"))
    hot = np.zeros((N_TEST, len(species)), dtype=np.int64)
    hot[np.arange(N_TEST), labels[N_TRAIN:]] = 1
    answers = pd.DataFrame(hot, columns=species).assign(id=test_ids)[["id", *species]]
    write_csv(r.private / "test.csv", answers)
    (r.private / "images").mkdir(parents=True, exist_ok=True)  # MLE-bench leaves it empty


NYC_COLUMNS = [
    "key",
    "fare_amount",
    "pickup_datetime",
    "pickup_longitude",
    "pickup_latitude",
    "dropoff_longitude",
    "dropoff_latitude",
    "passenger_count",
]


def nyc_taxi(r: ReplicaDir) -> None:
    """§3.11: labels.csv is the training set; keys are text timestamps with a fraction."""
    n = N_TRAIN + N_TEST
    seconds = r.rng.choice(10**8, n, replace=False) + 1_230_000_000
    times = pd.to_datetime(seconds, unit="s")
    keys = [f"{t:%Y-%m-%d %H:%M:%S}.{k + 1:07d}" for k, t in enumerate(times)]
    pickup = r.rng.normal([-73.98, 40.75], 0.02, (n, 2))
    dropoff = pickup + r.rng.normal(0, 0.02, (n, 2))
    distance = np.abs(pickup - dropoff).sum(axis=1)
    frame = pd.DataFrame(
        {
            "key": keys,
            "fare_amount": np.round(2.5 + 150 * distance + r.rng.normal(0, 1, n), 2),
            "pickup_datetime": [f"{t:%Y-%m-%d %H:%M:%S} UTC" for t in times],
            "pickup_longitude": np.round(pickup[:, 0], 6),
            "pickup_latitude": np.round(pickup[:, 1], 6),
            "dropoff_longitude": np.round(dropoff[:, 0], 6),
            "dropoff_latitude": np.round(dropoff[:, 1], 6),
            "passenger_count": r.rng.integers(1, 6, n),
        }
    )[NYC_COLUMNS]
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "labels.csv", train)
    write_csv(r.public / "test.csv", test.drop(columns="fare_amount"))
    write_csv(r.public / "sample_submission.csv", test[["key"]].assign(fare_amount=11.35))
    write_bytes(r.public / "GCP-Coupons-Instructions.rtf", b"{\\rtf1\\ansi Coupons.}\n")
    write_csv(r.private / "test.csv", test)


NOMAD_FEATURES = [
    "spacegroup",
    "number_of_total_atoms",
    "percent_atom_al",
    "percent_atom_ga",
    "percent_atom_in",
    "lattice_vector_1_ang",
    "lattice_vector_2_ang",
    "lattice_vector_3_ang",
    "lattice_angle_alpha_degree",
    "lattice_angle_beta_degree",
    "lattice_angle_gamma_degree",
]


def nomad(r: ReplicaDir) -> None:
    """§3.12: ids 1..n per split, geometry.xyz per material, answers graded by row order."""
    n = N_TRAIN + N_TEST
    al = r.rng.uniform(0, 1, n)
    frame = pd.DataFrame(
        {
            "spacegroup": r.rng.choice([12, 33, 167, 194, 206, 227], n),
            "number_of_total_atoms": r.rng.choice([10.0, 20.0, 30.0, 40.0, 80.0], n),
            "percent_atom_al": np.round(al, 4),
            "percent_atom_ga": np.round((1 - al) / 2, 4),
            "percent_atom_in": np.round((1 - al) / 2, 4),
            **{c: np.round(r.rng.uniform(3, 25, n), 4) for c in NOMAD_FEATURES[5:8]},
            **{c: np.round(r.rng.uniform(85, 120, n), 4) for c in NOMAD_FEATURES[8:]},
            "formation_energy_ev_natom": np.round(0.05 + 0.25 * al + r.rng.uniform(0, 0.05, n), 4),
            "bandgap_energy_ev": np.round(1.0 + 3.5 * al + r.rng.uniform(0, 0.3, n), 4),
        }
    )
    train = frame[:N_TRAIN].reset_index(drop=True)
    test = frame[N_TRAIN:].reset_index(drop=True)
    train.insert(0, "id", range(1, N_TRAIN + 1))
    test.insert(0, "id", range(1, N_TEST + 1))
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test[["id", *NOMAD_FEATURES]])
    sample = test[["id"]].assign(formation_energy_ev_natom=0.1779, bandgap_energy_ev=1.8892)
    write_csv(r.public / "sample_submission.csv", sample)
    for split, part in (("train", train), ("test", test)):
        for value in part["id"]:
            write_bytes(r.public / split / str(value) / "geometry.xyz", _geometry(r))
    write_csv(r.private / "test.csv", test)


def _geometry(r: ReplicaDir) -> bytes:
    lines = [
        "#=======================================================",
        "#Created by a micro replica",
    ]
    lines += [
        f"lattice_vector {' '.join(f'{v:.8f}' for v in r.rng.uniform(0, 10, 3))} " for _ in range(3)
    ]
    lines += [
        f"atom {' '.join(f'{v:.8f}' for v in r.rng.uniform(0, 10, 3))} {el}"
        for el in ("Al", "Ga", "O")
    ]
    return ("\n".join(lines) + "\n").encode()


def _tps_dec_columns() -> list[str]:
    numeric = [
        "Elevation",
        "Aspect",
        "Slope",
        "Horizontal_Distance_To_Hydrology",
        "Vertical_Distance_To_Hydrology",
        "Horizontal_Distance_To_Roadways",
        "Hillshade_9am",
        "Hillshade_Noon",
        "Hillshade_3pm",
        "Horizontal_Distance_To_Fire_Points",
    ]
    return (
        numeric
        + [f"Wilderness_Area{k}" for k in range(1, 5)]
        + [f"Soil_Type{k}" for k in range(1, 41)]
    )


def tps_dec_2021(r: ReplicaDir) -> None:
    """§3.18: integer Id, 54 features, Cover_Type 1-7; answers hold every column."""
    n = N_TRAIN + N_TEST
    cover = r.rng.integers(1, 8, n)
    columns = _tps_dec_columns()
    numeric = _signal(r, cover.astype(float), columns[:10], 100).round().astype(np.int64)
    flags = pd.DataFrame(r.rng.integers(0, 2, (n, 44)), columns=columns[10:])
    ids = r.rng.choice(10**6, n, replace=False)
    frame = pd.concat([pd.DataFrame({"Id": ids}), numeric, flags], axis=1).assign(Cover_Type=cover)
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test.drop(columns="Cover_Type"))
    write_csv(r.public / "sample_submission.csv", test[["Id"]].assign(Cover_Type=2))
    write_csv(r.private / "test.csv", test)


def tps_may_2022(r: ReplicaDir) -> None:
    """§3.19: ids renumbered (train first), f_00..f_30 with f_27 a 10-letter string."""
    n = N_TRAIN + N_TEST
    target = both_classes(r.rng, n, 0.5)
    columns = [f"f_{k:02d}" for k in range(31)]
    frame = _signal(r, target.astype(float), columns)
    frame["f_27"] = ["".join(r.rng.choice(list("ABCDEFGHIJKLMNOPQRST"), 10)) for _ in range(n)]
    frame.insert(0, "id", range(n))
    frame["target"] = target
    train, test = frame[:N_TRAIN], frame[N_TRAIN:]
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test.drop(columns="target"))
    write_csv(r.public / "sample_submission.csv", test[["id"]].assign(target=0.5))
    write_csv(r.private / "test.csv", test)
    write_csv(r.private / "gold_submission.csv", test[["id", "target"]])
