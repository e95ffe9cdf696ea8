"""Ranking tasks (MAP@k): recommend each user's next items from their profile.

As in Kaggle's recommendation competitions (H&M: MAP@12), ``train.csv`` has one row per user
with profile columns and the space-separated ids of the items they took; a submission has one
row per test user and up to k item ids, best first. The items form a catalogue whose ids are
``domain.class_names``; they carry no public features (cells are written and read by
:mod:`..ranked_cells`).

The hidden rule reuses the tabular rule library: the strategist's form (linear terms plus some
of a product, a step, a sine, a square, a group effect, missingness that carries signal) maps
a user's columns to a taste over a few hidden item groups. An item's appeal is its popularity
plus the taste for its group; each user takes 1-6 items drawn without replacement by appeal
(Plackett-Luce), and a ``label_noise`` share of takes is swapped for a random item.
``rule.params["structure"]`` records the form only (columns, cuts, periods): the
structure-aware learner fits one logistic model per item on the rule's basis; the generic one
fits per-item models on the one-hot profile columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule
from sandmle.benchmarks.synthetic.blueprint import Blueprint, MutatedDomain, TaskRequest
from sandmle.benchmarks.synthetic.domains import CATEGORY_NAMES, DomainPool
from sandmle.benchmarks.synthetic.modalities import tabular
from sandmle.benchmarks.synthetic.modalities.contract import Modality
from sandmle.benchmarks.synthetic.modalities.tabular_terms import (
    N_LEVELS,
    basis_matrix,
    informative_frame,
    rule_terms,
    signal_missingness,
    term_weights,
    visible_frame,
)
from sandmle.benchmarks.synthetic.planning import draw_form, draw_noise, draw_size, new_blueprint
from sandmle.benchmarks.synthetic.rows import make_ids, split_rows
from sandmle.benchmarks.synthetic.streams import STRATEGIST, role_rng

MAX_TAKEN = 6
GROUPS = (3, 4, 5)
POOLS = (
    DomainPool(
        "boutique-picks",
        "Boutique Next-Week Picks",
        "customer",
        ("age", "income_k", "tenure_months", "dependants", "savings_k", "distance_km", "rating"),
        ("sku",),
        "purchased",
    ),
    DomainPool(
        "library-loans",
        "Library Loan Suggestions",
        "library member",
        ("age", "tenure_months", "distance_km", "rating", "dependants", "late_payments"),
        ("book",),
        "borrowed",
    ),
    DomainPool(
        "playlist-tracks",
        "Playlist Track Suggestions",
        "listener",
        ("age", "tenure_months", "rating", "income_k", "distance_km", "prior_loans"),
        ("track",),
        "played",
    ),
    DomainPool(
        "workshop-reorders",
        "Workshop Part Reorders",
        "workshop",
        ("batch_size", "queue_len", "driver_years", "distance_km", "load_pct", "stops"),
        ("part",),
        "ordered",
    ),
)


# ---------------------------------------------------------------- planning


def plan(request: TaskRequest, backend: str) -> Blueprint:
    """Blueprint: a pool, profile columns, the item catalogue and the rule's form."""
    rng = role_rng(request.entropy, STRATEGIST)
    dna = request.dna
    pool = POOLS[int(rng.integers(len(POOLS)))]
    noise = draw_noise(dna, rng).model_copy(update={"n_correlated": 0, "n_irrelevant": 0})
    n_train, n_test, params = draw_size(dna, rng)
    params["groups"] = int(rng.choice(GROUPS))
    numeric = [str(c) for c in rng.permutation(pool.features)[: dna.n_numeric]]
    categorical = [str(c) for c in rng.permutation(CATEGORY_NAMES)[: dna.n_categorical]]
    numbers = np.sort(rng.choice(np.arange(1000, 10000), dna.n_outputs, replace=False))
    domain = MutatedDomain(
        title=pool.title,
        slug=pool.slug,
        entity=pool.entity,
        id_column="id" if rng.random() < 0.5 else f"{pool.entity.split()[-1]}_id",
        feature_columns=numeric + categorical,
        target_columns=[pool.target],
        class_names=[f"{pool.classes[0]}_{n}" for n in numbers],
    )
    return new_blueprint(
        request, backend, domain, noise, (n_train, n_test), params, draw_form(dna, rng)
    )


# ---------------------------------------------------------------- data


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, d, c = bp.n_train + bp.n_test, bp.dna.n_numeric, bp.dna.n_categorical
    x = rng.standard_normal((n, d))
    x[bp.n_train :, 0] += bp.noise.shift  # covariate shift on one profile column
    cats = rng.integers(0, N_LEVELS, (n, c))
    names = bp.domain.feature_columns
    clean = informative_frame(bp, x, cats)
    structure = rule_terms(bp, names[:d], names[len(names) - c :], clean, rng)
    missing = signal_missingness(structure, n, rng)
    flags = {f"_miss_{col}": flag for col, flag in missing.items()}
    basis = basis_matrix(clean.assign(**flags), structure)
    groups = int(bp.params["groups"])
    weights = term_weights(structure, basis.shape[1], groups, rng)
    taste = basis @ weights
    taste = (taste - taste.mean(axis=0)) / (taste.std(axis=0) + 1e-9)
    appeal, item_group, popularity = _appeal(bp, taste, rng)
    taken = _take(bp, appeal, rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix=bp.domain.slug.split("-")[0][:3])
    visible = visible_frame(bp, x, clean, missing, rng)
    frame = pd.concat([ids.rename(bp.domain.id_column), visible], axis=1)
    train, test = split_rows(bp, frame)
    train = pd.concat([train, tg.train_label_frame(bp, taken[: bp.n_train])], axis=1)
    rule = HiddenRule(
        kind="ranking-" + "+".join(t["kind"] for t in structure),
        summary=f"each item's appeal is its popularity plus the user's taste for its group "
        f"({groups} groups); users take 1-{MAX_TAKEN} items drawn by appeal",
        params={
            "structure": structure,
            "weights": np.round(weights, 3).tolist(),
            "item_group": item_group.tolist(),
            "popularity": np.round(popularity, 3).tolist(),
        },
    )
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], taken[bp.n_train :]),
        oracle=appeal[bp.n_train :],
    )


def _appeal(
    bp: Blueprint, taste: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per user and item: popularity + signal x taste for the item's group."""
    n_items, groups = bp.dna.n_outputs, taste.shape[1]
    item_group = rng.permutation(np.arange(n_items) % groups)
    popularity = rng.normal(0, 0.5, n_items)
    signal = 1.5 * float(bp.params["signal"])  # taste outweighs popularity
    return popularity[None, :] + signal * taste[:, item_group], item_group, popularity


def _take(bp: Blueprint, appeal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """0/1 matrix of taken items: Plackett-Luce draws (Gumbel top-m), then label noise."""
    n, n_items = appeal.shape
    count = np.minimum(1 + rng.poisson(1.3, n), MAX_TAKEN)
    order = np.argsort(-(appeal + rng.gumbel(size=appeal.shape)), axis=1, kind="stable")
    taken = np.zeros((n, n_items), dtype=np.int64)
    for row in range(n):
        taken[row, order[row, : count[row]]] = 1
    for noisy in np.flatnonzero(rng.random(n) < bp.noise.label_noise):
        drop = rng.choice(np.flatnonzero(taken[noisy]))
        free = np.flatnonzero(taken[noisy] == 0)
        taken[noisy, drop], taken[noisy, rng.choice(free)] = 0, 1
    return taken


MODALITY = Modality(
    name="ranking",
    build=build,
    features=tabular.features,  # the profile columns, as a first notebook encodes them
    structure_features=tabular.structure_features,  # the rule's basis on the profile columns
    plan=plan,
)
