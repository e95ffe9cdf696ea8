"""Text tasks: documents of real English words where each class (or label) has keywords.

The strategist's form picks a mode and the number of keywords per class:

* ``count``: a class's keywords appear Poisson(lam_on) times when it is true, Poisson(lam_off)
  otherwise;
* ``negation``: as ``count``, but false classes are also mentioned negated ("not <word>"),
  so a bag of words sees both; only un-negated mentions count for the class;
* ``bigram``: a class is signalled by "<word> <partner>" pairs; false classes' words appear
  without their partner;
* ``presence``: as ``count`` with a low mention rate, so a single mention decides.

Keywords, partners and distractors come from an offline word list (``words.WORDS``); the
exact posterior is known, so the oracle is the Bayes rule. ``rule.params["structure"]``
records the mode and the keywords (not the rates).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import softmax
from sklearn.feature_extraction.text import TfidfVectorizer

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.contract import Matrices, Modality
from sandmle.benchmarks.synthetic.modalities.words import WORDS
from sandmle.benchmarks.synthetic.rows import make_ids, split_rows

FILLER = (
    "the a of and to in is was it for on with as at by from this that they we but not or "
    "have had one all there when which their said if will each about how up out them then "
    "she many some so these would other into has more her two like him see time could no "
    "make than first been its who now people my made over did down only way find use may"
).split()
NEGATORS = ("not", "no", "never", "without")
RATES = {
    "count": (1.2, 0.35),
    "negation": (1.7, 0.3),
    "bigram": (1.7, 0.3),
    "presence": (0.9, 0.12),
}


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, k = bp.n_train + bp.n_test, bp.dna.n_outputs
    mode, n_words = _form(bp)
    lam_on, lam_off = RATES[mode]
    lam_mark = float(rng.uniform(0.25, 0.5)) if mode in ("negation", "bigram") else 0.0
    pool = [str(w) for w in rng.permutation(WORDS)]
    keywords = [pool[i * n_words : (i + 1) * n_words] for i in range(k)]
    partners = pool[k * n_words : k * n_words + 3] if mode == "bigram" else []
    distractors = pool[k * n_words + 3 : k * n_words + 60]
    truth, on, log_prior = _truth(bp, n, rng)
    clean = rng.poisson(np.where(on, lam_on, lam_off))
    marked = rng.poisson(np.where(on, 0.0, lam_mark))
    proba = _posterior(bp, clean, marked, (lam_on, lam_off, lam_mark), log_prior)
    structure = {"mode": mode, "keywords": keywords, "partners": partners}
    docs = [
        _document(clean[i], marked[i], structure, distractors, bp, i >= bp.n_train, rng)
        for i in range(n)
    ]
    y, oracle = _observe(bp, truth, proba, rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix="t")
    frame = pd.DataFrame({bp.domain.id_column: ids, bp.domain.text_column: docs})
    train, test = split_rows(bp, frame)
    train = pd.concat([train, tg.train_label_frame(bp, y[: bp.n_train])], axis=1)
    rule = HiddenRule(
        kind=f"text-{mode}",
        summary=f"each class's {n_words} keywords appear Poisson({lam_on}) times when true "
        f"and Poisson({lam_off}) otherwise ({mode} mode)",
        params={"structure": structure, "rates": [lam_on, lam_off, round(lam_mark, 3)]},
    )
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], y[bp.n_train :]),
        oracle=oracle[bp.n_train :],
    )


def _form(bp: Blueprint) -> tuple[str, int]:
    mode, words = "count", 5
    for item in bp.form:
        if item.startswith("keywords="):
            words = int(item.split("=", 1)[1])
        elif item in RATES:
            mode = item
    return mode, words


def _base_length(bp: Blueprint) -> int:
    """Filler words per document: 'long' documents bury the keywords deeper."""
    return 30 if "long" in bp.form else 10


def _truth(
    bp: Blueprint, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True classes (or labels), which keyword sets are 'on', and the log prior."""
    k = bp.dna.n_outputs
    if bp.dna.task_type == "multilabel":
        on = rng.random((n, k)) < bp.dna.balance
        return on.astype(np.int64), on, np.full(k, np.log(bp.dna.balance / (1 - bp.dna.balance)))
    if bp.dna.task_type == "binary":
        prior = np.array([1 - bp.dna.balance, bp.dna.balance])
    else:
        weights = rng.uniform(0.6, 1.4, k)
        prior = weights / weights.sum()
    truth = tg.sample_classes(np.tile(prior, (n, 1)), 0.0, rng)
    return truth, np.eye(k, dtype=bool)[truth], np.log(prior)


def _posterior(
    bp: Blueprint,
    clean: np.ndarray,
    marked: np.ndarray,
    rates: tuple[float, float, float],
    log_prior: np.ndarray,
) -> np.ndarray:
    """Bayes posterior of each class being on, from clean and marked mention counts."""
    lam_on, lam_off, lam_mark = rates
    # log P(counts_j | on) - log P(counts_j | off) for each keyword set
    ratio = clean * np.log(lam_on / lam_off) - (lam_on - lam_off) + lam_mark
    ratio = np.where(marked > 0, -50.0, ratio)
    if bp.dna.task_type == "multilabel":
        return 1 / (1 + np.exp(-(log_prior + ratio)))
    return softmax(log_prior + ratio, axis=1)


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
    clean: np.ndarray,
    marked: np.ndarray,
    structure: dict[str, Any],
    distractors: list[str],
    bp: Blueprint,
    is_test: bool,
    rng: np.random.Generator,
) -> str:
    length = 8 + int(rng.poisson(_base_length(bp) + (10 * bp.noise.shift if is_test else 0)))
    chunks = [str(w) for w in rng.choice(FILLER, length)]
    chunks += [str(w) for w in rng.choice(distractors, int(rng.poisson(2.0)))]
    for j, words in enumerate(structure["keywords"]):
        for _ in range(int(clean[j])):
            chunks.append(_mention(str(rng.choice(words)), structure, True, rng))
        for _ in range(int(marked[j])):
            chunks.append(_mention(str(rng.choice(words)), structure, False, rng))
    order = rng.permutation(len(chunks))
    return " ".join(chunks[i] for i in order).capitalize() + "."


def _mention(word: str, structure: dict[str, Any], counts: bool, rng: np.random.Generator) -> str:
    mode = structure["mode"]
    if mode == "negation" and not counts:
        return f"{rng.choice(NEGATORS)} {word}"
    if mode == "bigram" and counts:
        return f"{word} {rng.choice(structure['partners'])}"
    return word


def features(bp: Blueprint, data: PublicData) -> Matrices:
    """TF-IDF of words, fit on train: the standard first text baseline."""
    column = bp.domain.text_column
    vectorizer = TfidfVectorizer(min_df=2)
    x_train = vectorizer.fit_transform(data.train[column]).toarray()
    return x_train, vectorizer.transform(data.test[column]).toarray()


def structure_features(bp: Blueprint, rule: HiddenRule, data: PublicData) -> Matrices:
    """Per class: mentions that count for it, and mentions that count against it."""
    structure = rule.params["structure"]
    column = bp.domain.text_column

    def encode(texts: pd.Series) -> np.ndarray:
        return np.array([_counts(str(t), structure) for t in texts], dtype=np.float64)

    return encode(data.train[column]), encode(data.test[column])


def _counts(text: str, structure: dict[str, Any]) -> list[float]:
    tokens = re.findall(r"[a-z]+", text.lower())
    mode, partners = structure["mode"], set(structure.get("partners", []))
    row: list[float] = []
    for words in structure["keywords"]:
        wanted = set(words)
        good = bad = 0
        for i, token in enumerate(tokens):
            if token not in wanted:
                continue
            before = tokens[i - 1] if i else ""
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            if mode == "negation" and before in NEGATORS:
                bad += 1
            elif mode == "bigram" and after not in partners:
                bad += 1
            else:
                good += 1
        row += [good, float(bad > 0)]
    return row


MODALITY = Modality(
    name="text", build=build, features=features, structure_features=structure_features
)
