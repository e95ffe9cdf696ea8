"""Sequence-to-sequence tasks: text normalization of written tokens into their spoken form.

Sentences are rows of tokens (``id`` = ``<sentence>_<token>``); each token's ``before``
maps to ``after`` by hidden, composable rules, as in Kaggle's text normalization challenge:
most tokens stay unchanged (words, punctuation), while the classes of the strategist's form
(cardinals, ordinals, decimals, money, measures, dates, times, letter groups,
abbreviations) are verbalised ("1,204" -> "one thousand two hundred four"). Each class has a
hidden variant (British "and" in numbers, day-first dates, 12-hour clocks, acronyms spelled
or lower-cased) and an abbreviation table drawn per task. Annotators leave a share of
normalisable tokens as written (the label noise), so the rule is not the answers.

``rule.params["structure"]`` records the active classes (not the variants, nor the
abbreviation table); the learners are in :mod:`.seq2seq_learners`. Metric: accuracy of
exact string match over tokens. The languages are :mod:`.seq2seq_en` and, for the Russian
seed, :mod:`.seq2seq_ru` (Cyrillic words, number agreement), the language recorded in the
blueprint's params. The description is the Technical Writer's, from
:func:`description_specifics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule, Specifics
from sandmle.benchmarks.synthetic.blueprint import Blueprint, MutatedDomain, TaskRequest
from sandmle.benchmarks.synthetic.domains import DomainPool
from sandmle.benchmarks.synthetic.modalities.contract import Modality
from sandmle.benchmarks.synthetic.modalities.seq2seq_language import (
    LANGUAGE_NAMES,
    Language,
    language,
    normalise,
)
from sandmle.benchmarks.synthetic.modalities.seq2seq_learners import (
    features,
    ladder,
    structure_features,
)
from sandmle.benchmarks.synthetic.planning import Params, draw_noise, new_blueprint
from sandmle.benchmarks.synthetic.streams import STRATEGIST, role_rng

SPECIAL_RATE = (0.22, 0.32)


# Real text repeats itself: this share of a class's tokens come from a few frequent ones
# (which a lookup learns from train.csv), the rest are fresh (which only the rule reads).
FREQUENT_SHARE = 0.45

POOLS = (
    DomainPool("radio-scripts", "Radio Script Normalization", "broadcast sentence", (), (), ""),
    DomainPool("audiobook-lines", "Audiobook Line Verbalization", "narrated sentence", (), (), ""),
    DomainPool("caption-feeds", "Live Caption Normalization", "caption sentence", (), (), ""),
    DomainPool("voice-assistant", "Voice Prompt Spoken Forms", "assistant prompt", (), (), ""),
    DomainPool("transit-announcements", "Transit Announcement Reading", "announcement", (), (), ""),
)
COLUMNS = ("sentence_id", "token_id", "class", "before", "after")


# ---------------------------------------------------------------- planning


def plan(request: TaskRequest, backend: str) -> Blueprint:
    """Blueprint for a normalization task: sentence counts, the active classes (the form)."""
    rng = role_rng(request.entropy, STRATEGIST)
    pool = POOLS[int(rng.integers(len(POOLS)))]
    noise = draw_noise(request.dna, rng)
    n_train, n_test = int(rng.integers(900, 1401)), int(rng.integers(900, 1201))
    code = "ru" if "russian" in request.dna.seed_task else "en"
    chosen = rng.choice(language(code).classes, int(rng.integers(4, 7)), replace=False)
    form = sorted(str(c) for c in chosen)
    domain = MutatedDomain(
        title=pool.title,
        slug=pool.slug,
        entity=pool.entity,
        id_column="id",
        feature_columns=["sentence_id", "token_id", "before"],
        target_columns=["after"],
        text_column="before",
    )
    params: Params = {
        "special_rate": round(float(rng.uniform(*SPECIAL_RATE)), 3),
        "language": code,
    }
    return new_blueprint(request, backend, domain, noise, (n_train, n_test), params, form)


# ---------------------------------------------------------------- building


def _sentences(
    n_rows: int,
    first_sentence: int,
    structure: dict[str, Any],
    rng: np.random.Generator,
    rate: float,
    lang: Language,
) -> list[tuple[int, int, str, str]]:
    """(sentence id, token id, class, before) rows, ``n_rows`` of them exactly."""
    rows: list[tuple[int, int, str, str]] = []
    sentence = first_sentence
    classes = structure["classes"]
    while len(rows) < n_rows:
        length = min(int(rng.integers(6, 14)), n_rows - len(rows))
        if n_rows - len(rows) - length < 3:
            length = n_rows - len(rows)
        for position in range(length):
            if position == length - 1:
                cls, token = "punct", str(rng.choice([".", ".", ".", "?", "!"]))
            elif position and rng.random() < 0.07:
                cls, token = "punct", str(rng.choice([",", ",", ";", ":"]))
            elif classes and rng.random() < rate:
                cls = str(rng.choice(classes))
                frequent = structure["frequent"][cls]
                token = (
                    str(rng.choice(frequent))
                    if rng.random() < FREQUENT_SHARE
                    else lang.draw_token(cls, rng, structure["abbreviations"])
                )
            else:
                cls = "plain"
                token = str(rng.choice(lang.function_words if rng.random() < 0.5 else lang.words))
                token = token.capitalize() if position == 0 else token
            rows.append((sentence, position, cls, token))
        sentence += 1
    return rows


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    code = str(bp.params.get("language", "en"))
    lang = language(code)
    classes = [c for c in bp.form if c in lang.classes] or ["cardinal", "letters"]
    variants = {c: str(rng.choice(lang.variants[c])) for c in classes if c in lang.variants}
    keys = sorted(lang.abbreviations)
    abbreviations = [str(k) for k in rng.choice(keys, int(rng.integers(6, 10)), replace=False)]
    table = {k: lang.abbreviations[k] for k in abbreviations}
    structure = {
        "classes": classes,
        "abbreviations": sorted(abbreviations),
        "frequent": {
            c: [lang.draw_token(c, rng, abbreviations) for _ in range(8)] for c in classes
        },
    }
    rate = float(bp.params.get("special_rate", 0.25))
    # At least 10%: about a fifth of tokens are normalisable, so the rule differs from the
    # answers on > 1% of rows (the gate's oracle_not_answers line).
    skip = float(np.clip(bp.noise.label_noise + 0.1, 0.1, 0.16))
    frame = pd.DataFrame(
        _sentences(bp.n_train, 0, structure, rng, rate, lang)
        + _sentences(bp.n_test, 10**4, structure, rng, rate, lang),
        columns=["sentence_id", "token_id", "class", "before"],
    )
    clean = [
        normalise(c, t, variants, table, lang)
        for c, t in zip(frame["class"], frame["before"], strict=True)
    ]
    # Annotators leave some normalisable tokens as written: the rule is not the answers.
    left = (np.array(clean) != frame["before"].to_numpy()) & (rng.random(len(frame)) < skip)
    after = np.where(left, frame["before"].to_numpy(), np.array(clean, dtype=object))
    frame.insert(0, "id", frame["sentence_id"].astype(str) + "_" + frame["token_id"].astype(str))
    frame["class"] = frame["class"].str.upper()
    train = frame.iloc[: bp.n_train].assign(after=after[: bp.n_train]).reset_index(drop=True)
    test = frame.iloc[bp.n_train :].reset_index(drop=True)
    test = test[["id", "sentence_id", "token_id", "before"]]
    answers = pd.DataFrame({"id": test["id"], "after": after[bp.n_train :]})
    rule = HiddenRule(
        kind="seq2seq-" + "+".join(classes),
        summary="tokens of the classes " + ", ".join(classes) + " are verbalised "
        f"({', '.join(f'{k}: {v}' for k, v in sorted(variants.items()))}); "
        f"{skip:.0%} of them are left as written",
        params={
            "structure": {"classes": classes, "language": code},
            "variants": variants,
            "abbreviations": table,
            "skip_rate": round(skip, 3),
        },
    )
    oracle = np.array(clean[bp.n_train :], dtype=object).reshape(-1, 1)
    sample = pd.DataFrame({"id": test["id"], "after": test["before"]})
    return DevelopedTask(
        rule=rule, train=train, test=test, answers=answers, oracle=oracle, sample=sample
    )


# ---------------------------------------------------------------- description


def description_specifics(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> Specifics:
    """What the writer states exactly for a normalization task (it draws the wording)."""
    lang = LANGUAGE_NAMES[str(bp.params.get("language", "en"))]
    entity = bp.domain.entity
    n_train, n_test = len(task.train), len(task.test)
    return Specifics(
        row=f"one written token of a {lang} {entity}, in sentence order",
        task=(
            f"the spoken form (`after`) of every written token (`before`) of the {lang} "
            f"{entity}s: most tokens stay as they are, while numbers, dates, amounts and "
            "similar tokens are read out in words",
            f"how each token of these {lang} {entity}s is said aloud: `after` from `before`, "
            "where ordinary words and punctuation usually stay as written and figures, dates, "
            "amounts and the like are spelled out in words",
        ),
        sizes=(
            f"The training set has {n_train} tokens with known spoken forms; the test set has "
            f"{n_test} tokens.",
            f"Spoken forms are given for the {n_train} training tokens and hidden for the "
            f"{n_test} test tokens.",
        ),
        files=(
            (
                "train.csv",
                (
                    f"{n_train} tokens, one per row in sentence order, with `class` (the kind "
                    "of token) and the spoken form `after`",
                    f"the training tokens ({n_train} rows, in sentence order); `class` names "
                    "the kind of token, `after` its spoken form",
                ),
            ),
            (
                "test.csv",
                (
                    f"the {n_test} test tokens, without `class` and `after`",
                    f"{n_test} tokens to normalise; no `class`, no `after`",
                ),
            ),
            (
                "sample_submission.csv",
                (
                    "a valid submission that copies `before`",
                    "the submission format, with every token copied unchanged from `before`",
                ),
            ),
        ),
        columns=(
            ("id", "`<sentence_id>_<token_id>`, unique per token"),
            ("sentence_id", "which sentence the token belongs to"),
            ("token_id", "the token's position in its sentence, counted from 0"),
            ("class", "the kind of token (train only)"),
            ("before", f"the token as written, in {lang}"),
            ("after", "its spoken form, the target (train only)"),
        ),
        id_scheme="`<sentence_id>_<token_id>` (the sentence, then the token's position in it)",
        value_kind=f"the spoken form as {lang} text",
        metric_text="share of test tokens whose predicted `after` is exactly the expected "
        "text (case, spaces and punctuation count)",
        notes=(
            "Tokens of one sentence share `sentence_id` and follow each other by `token_id`; "
            "the words around a token are part of its context.",
        ),
    )


MODALITY = Modality(
    name="seq2seq",
    build=build,
    features=features,
    structure_features=structure_features,
    plan=plan,
    ladder=ladder,
    describe=description_specifics,
)
