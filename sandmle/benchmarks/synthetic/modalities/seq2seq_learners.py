"""The seq2seq learners: copy, lookup, and the rule's classes verbalised.

The constant copies ``before``; the generic learner looks each token up in ``train.csv``
and copies unseen ones; the structure-aware learner is told the active classes
(``rule.params["structure"]``), verbalises them with each class's variant fit on
``train.csv``, and looks everything else up.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.artifacts import HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.contract import Matrices
from sandmle.benchmarks.synthetic.modalities.seq2seq_language import classify, language


def lookup_table(train: pd.DataFrame) -> dict[str, str]:
    """Each training ``before`` to its most frequent ``after`` (first seen on ties)."""
    counts: dict[str, Counter[str]] = {}
    for before, after in zip(train["before"].astype(str), train["after"].astype(str), strict=True):
        counts.setdefault(before, Counter())[after] += 1
    return {before: c.most_common(1)[0][0] for before, c in counts.items()}


def copy_before(test: pd.DataFrame) -> np.ndarray:
    return test["before"].astype(str).to_numpy(dtype=object).reshape(-1, 1)


def lookup_predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    table = lookup_table(train)
    return np.array([table.get(t, t) for t in test["before"].astype(str)], dtype=object)[:, None]


def fit_variants(train: pd.DataFrame, classes: list[str], code: str = "en") -> dict[str, str]:
    """Each class's variant: the one that matches most training ``after`` values."""
    lang = language(code)
    chosen: dict[str, str] = {}
    pairs = list(zip(train["before"].astype(str), train["after"].astype(str), strict=True))
    for cls in classes:
        options = lang.variants.get(cls, ("",))
        hits = [
            sum(lang.verbalise(cls, b, v) == a for b, a in pairs if classify(b, [cls], code) == cls)
            for v in options
        ]
        chosen[cls] = options[int(np.argmax(hits))]
    return chosen


def structure_predict(
    train: pd.DataFrame, test: pd.DataFrame, classes: list[str], code: str = "en"
) -> np.ndarray:
    """Rules for the form's classes (variants fit on train), lookup, then copy."""
    lang = language(code)
    variants = fit_variants(train, classes, code)
    table = lookup_table(train)
    out = []
    for token in test["before"].astype(str):
        cls = classify(token, classes, code)
        spoken = lang.verbalise(cls, token, variants[cls]) if cls else table.get(token, token)
        out.append(spoken)
    return np.array(out, dtype=object)[:, None]


def ladder(bp: Blueprint, rule: HiddenRule, data: PublicData) -> dict[str, np.ndarray]:
    """Constant (copy), generic (lookup + copy), structure (rules + lookup + copy)."""
    out = {"constant": copy_before(data.test), "generic": lookup_predict(data.train, data.test)}
    if "structure" in rule.params:
        structure = rule.params["structure"]
        code = str(structure.get("language", "en"))
        out["structure"] = structure_predict(
            data.train, data.test, list(structure["classes"]), code
        )
    return out


def features(bp: Blueprint, data: PublicData) -> Matrices:
    """Generic token-shape features (length, digits, capitals, punctuation, seen in train).

    The ladder does not use them (its generic learner is a lookup, see :func:`ladder`); they
    are the modality contract's matrix view, for outside learners.
    """
    seen = set(data.train["before"].astype(str))

    def encode(frame: pd.DataFrame) -> np.ndarray:
        rows = []
        for token in frame["before"].astype(str):
            n = max(len(token), 1)
            rows.append([len(token), sum(c.isdigit() for c in token) / n,
                         sum(c.isupper() for c in token) / n,
                         sum(not c.isalnum() for c in token) / n, float(token in seen)])  # fmt: skip
        return np.array(rows, dtype=np.float64)

    return encode(data.train), encode(data.test)


def structure_features(bp: Blueprint, rule: HiddenRule, data: PublicData) -> Matrices:
    """One-hot of the form's class each token matches (none: last column)."""
    classes = list(rule.params["structure"]["classes"])
    code = str(rule.params["structure"].get("language", "en"))

    def encode(frame: pd.DataFrame) -> np.ndarray:
        rows = np.zeros((len(frame), len(classes) + 1))
        for i, token in enumerate(frame["before"].astype(str)):
            cls = classify(token, classes, code)
            rows[i, classes.index(cls) if cls else len(classes)] = 1
        return rows

    return encode(data.train), encode(data.test)
