"""Text tasks: each class (or label) has keywords that show up more often when it is true.

Keyword counts are Poisson(lam_on) for the true class and Poisson(lam_off) otherwise, so the
exact posterior is known: log p(k | doc) = log prior_k + count_k * log(lam_on / lam_off) + C.
Filler words and distractor words carry no signal; test documents may be longer (shift).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import softmax
from sklearn.feature_extraction.text import TfidfVectorizer

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule, make_ids, split_rows

FILLER = (
    "the a of and to in is was it for on with as at by from this that they we but not or "
    "have had one all there when which their said if will each about how up out them then "
    "she many some so these would other into has more her two like him see time could no "
    "make than first been its who now people my made over did down only way find use may"
).split()
SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ru",
    "ten",
    "vor",
    "sa",
    "bel",
    "qui",
    "dra",
    "no",
    "zef",
    "pa",
    "gim",
)


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, k = bp.n_train + bp.n_test, bp.dna.n_outputs
    lam_on, lam_off = float(rng.uniform(1.0, 1.8)), float(rng.uniform(0.25, 0.55))
    keywords = _keywords(k + 1, rng)  # the last set is distractors: frequent, uninformative
    truth, counts, proba = _truth(bp, n, lam_on, lam_off, rng)
    docs = [_document(counts[i], keywords, bp, i >= bp.n_train, rng) for i in range(n)]
    y, oracle = _observe(bp, truth, proba, rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix="t")
    frame = pd.DataFrame({bp.domain.id_column: ids, bp.domain.text_column: docs})
    train, test = split_rows(bp, frame)
    train = pd.concat([train, tg.train_label_frame(bp, y[: bp.n_train])], axis=1)
    rule = HiddenRule(
        kind="keyword-poisson",
        summary=f"each class's keywords appear Poisson({lam_on:.2f}) times when true, "
        f"Poisson({lam_off:.2f}) otherwise",
        params={
            "keywords": keywords[:k],
            "distractors": keywords[k],
            "lam_on": round(lam_on, 3),
            "lam_off": round(lam_off, 3),
        },
    )
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], y[bp.n_train :]),
        oracle=oracle[bp.n_train :],
    )


def _keywords(n_sets: int, rng: np.random.Generator) -> list[list[str]]:
    words: list[str] = []
    while len(words) < 5 * n_sets:
        word = "".join(rng.choice(SYLLABLES, int(rng.integers(2, 4))))
        if word not in words:
            words.append(word)
    return [words[5 * i : 5 * i + 5] for i in range(n_sets)]


def _truth(
    bp: Blueprint, n: int, lam_on: float, lam_off: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True classes or labels, keyword counts per set, and the exact posterior."""
    k, ratio = bp.dna.n_outputs, np.log(lam_on / lam_off)
    if bp.dna.task_type == "multilabel":
        on = rng.random((n, k)) < bp.dna.balance
        counts = rng.poisson(np.where(on, lam_on, lam_off))
        log_odds = (
            np.log(bp.dna.balance / (1 - bp.dna.balance)) + counts * ratio - (lam_on - lam_off)
        )
        return on.astype(np.int64), counts, 1 / (1 + np.exp(-log_odds))
    prior = _prior(bp, rng)
    truth = tg.sample_classes(np.tile(prior, (n, 1)), 0.0, rng)
    counts = rng.poisson(np.where(np.eye(k, dtype=bool)[truth], lam_on, lam_off))
    return truth, counts, softmax(np.log(prior) + counts * ratio, axis=1)


def _prior(bp: Blueprint, rng: np.random.Generator) -> np.ndarray:
    if bp.dna.task_type == "binary":
        return np.array([1 - bp.dna.balance, bp.dna.balance])
    weights = rng.uniform(0.6, 1.4, bp.dna.n_outputs)
    return weights / weights.sum()


def _observe(
    bp: Blueprint, truth: np.ndarray, proba: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    eps = bp.noise.label_noise
    if bp.dna.task_type == "multilabel":
        flip = rng.random(truth.shape) < eps
        return np.where(flip, 1 - truth, truth), tg.oracle_labels(proba, eps)
    y = truth.copy()
    flip = rng.random(len(y)) < eps
    y[flip] = rng.integers(0, proba.shape[1], int(flip.sum()))
    return y, tg.oracle_classes(proba, eps)


def _document(
    counts: np.ndarray,
    keywords: list[list[str]],
    bp: Blueprint,
    is_test: bool,
    rng: np.random.Generator,
) -> str:
    length = 6 + int(rng.poisson(8 + (10 * bp.noise.shift if is_test else 0)))
    words = list(rng.choice(FILLER, length))
    for j, count in enumerate(counts):
        words += list(rng.choice(keywords[j], int(count)))
    words += list(rng.choice(keywords[-1], int(rng.poisson(1.2))))
    words = [str(w) for w in rng.permutation(np.array(words, dtype=object))]
    return " ".join(words).capitalize() + "."


def features(bp: Blueprint, task: DevelopedTask) -> tuple[np.ndarray, np.ndarray]:
    """TF-IDF of words, fit on train: the standard first text baseline."""
    column = bp.domain.text_column
    vectorizer = TfidfVectorizer(min_df=2)
    x_train = vectorizer.fit_transform(task.train[column]).toarray()
    return x_train, vectorizer.transform(task.test[column]).toarray()
