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
abbreviation table): the structure-aware learner verbalises those classes, picks each
class's variant by matching ``train.csv``, and looks everything else up. The generic learner
looks each token up in ``train.csv`` and copies unseen ones; the constant copies ``before``.
Metric: accuracy of exact string match over tokens. The Russian seed writes Russian text
(:mod:`.seq2seq_ru`: Cyrillic words, number agreement), its language recorded in the form.
The description is the Technical Writer's, from :func:`description_specifics`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.blueprint import Blueprint, MutatedDomain
from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule
from sandmle.benchmarks.synthetic.domains import DomainPool

if TYPE_CHECKING:
    from sandmle.benchmarks.synthetic.writer import Specifics
from sandmle.benchmarks.synthetic.modalities.words import WORDS

CLASSES = (
    "cardinal",
    "ordinal",
    "decimal",
    "money",
    "measure",
    "date",
    "time",
    "letters",
    "abbreviation",
)
VARIANTS: dict[str, tuple[str, ...]] = {
    "cardinal": ("plain", "and"),
    "ordinal": ("plain", "and"),
    "date": ("mdy", "dmy"),
    "time": ("24h", "12h"),
    "letters": ("spell", "lower"),
    "decimal": ("zero", "o"),
}
ABBREVIATIONS = {
    "Dr.": "doctor",
    "St.": "street",
    "Mt.": "mount",
    "Ave.": "avenue",
    "approx.": "approximately",
    "vs.": "versus",
    "Jr.": "junior",
    "Mr.": "mister",
    "Mrs.": "missus",
    "No.": "number",
    "Fig.": "figure",
    "Dept.": "department",
    "etc.": "et cetera",
    "e.g.": "for example",
    "Rd.": "road",
    "Capt.": "captain",
}
UNITS = {
    "kg": ("kilogram", "kilograms"),
    "km": ("kilometer", "kilometers"),
    "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"),
    "mg": ("milligram", "milligrams"),
    "ml": ("milliliter", "milliliters"),
    "g": ("gram", "grams"),
    "m": ("meter", "meters"),
    "%": ("percent", "percent"),
}
CURRENCIES = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
              "€": ("euro", "euros", "cent", "cents")}  # fmt: skip
FUNCTION_WORDS = (
    "the a of and to in is was it for on with as at by from this that they we but or have "
    "had one all there when which their said if will each about how up out then so these"
).split()
# Acronyms pandas would read as missing values (or that spell one): never drawn.
NA_LIKE = {"NA", "NAN", "NULL", "NONE", "NAT"}
ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen").split()  # fmt: skip
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
ORDINAL_WORDS = {"one": "first", "two": "second", "three": "third", "five": "fifth",
                 "eight": "eighth", "nine": "ninth", "twelve": "twelfth"}  # fmt: skip
MONTHS = ("january february march april may june july august september october "
          "november december").split()  # fmt: skip
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


def plan(request, backend: str) -> Blueprint:
    """Blueprint for a normalization task: sentence counts, the active classes (the form)."""
    from sandmle.benchmarks.synthetic.strategist import _noise, new_blueprint, role_rng

    rng = role_rng(request.entropy, 0)
    pool = POOLS[int(rng.integers(len(POOLS)))]
    noise = _noise(request.dna, rng)
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
    params: dict[str, float | int | str] = {
        "special_rate": round(float(rng.uniform(*SPECIAL_RATE)), 3),
        "language": code,
    }
    return new_blueprint(request, backend, domain, noise, (n_train, n_test), params, form)


# ---------------------------------------------------------------- verbalisation


def number_words(n: int, use_and: bool = False) -> str:
    """English words for 0 <= n < 10**9 ("one thousand two hundred and four" with ``use_and``)."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    if n < 1000:
        rest = n % 100
        head = f"{ONES[n // 100]} hundred"
        return head if rest == 0 else f"{head} {'and ' if use_and else ''}{number_words(rest)}"
    for size, name in ((10**6, "million"), (1000, "thousand")):
        if n >= size:
            head, rest = f"{number_words(n // size, use_and)} {name}", n % size
            if rest == 0:
                return head
            joiner = " and " if use_and and rest < 100 else " "
            return head + joiner + number_words(rest, use_and)
    raise ValueError(n)


def ordinal_words(n: int, use_and: bool = False) -> str:
    words = number_words(n, use_and).split(" ")
    last = words[-1]
    if last in ORDINAL_WORDS:
        words[-1] = ORDINAL_WORDS[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def year_words(year: int) -> str:
    """1987 -> nineteen eighty seven; 1905 -> nineteen o five; 2004 -> two thousand four."""
    if 2000 <= year < 2010:
        return number_words(year)
    head, tail = divmod(year, 100)
    if tail == 0:
        return f"{number_words(head)} hundred"
    return f"{number_words(head)} {'o ' + ONES[tail] if tail < 10 else number_words(tail)}"


def _digits(text: str, zero: str) -> str:
    return " ".join(zero if d == "0" else ONES[int(d)] for d in text)


def _suffix(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


PATTERNS: dict[str, re.Pattern[str]] = {
    "date": re.compile(r"^(?:(19|20)\d\d|\d{4}-\d\d-\d\d)$"),
    "cardinal": re.compile(r"^\d{1,3}(?:,\d{3})*$"),
    "ordinal": re.compile(r"^\d+(?:st|nd|rd|th)$"),
    "decimal": re.compile(r"^\d+\.\d+$"),
    "money": re.compile(r"^[$£€]\d+(?:\.\d\d)?$"),
    "measure": re.compile(r"^\d+(?:\.\d+)?(?:kg|km|cm|mm|mg|ml|g|m|%)$"),
    "time": re.compile(r"^\d{1,2}:\d\d$"),
    "letters": re.compile(r"^[A-Z]{2,4}$"),
}


def verbalise(cls: str, token: str, variant: str) -> str:
    """The spoken form of ``token`` read as class ``cls`` with ``variant``."""
    if cls == "cardinal":
        return number_words(int(token.replace(",", "")), variant == "and")
    if cls == "ordinal":
        return ordinal_words(int(token[:-2]), variant == "and")
    if cls == "decimal":
        whole, frac = token.split(".")
        zero = "zero" if variant == "zero" else "o"
        head = zero if whole == "0" else number_words(int(whole))
        return f"{head} point {_digits(frac, zero)}"
    if cls == "money":
        return _money(token)
    if cls == "measure":
        return _measure(token)
    if cls == "date":
        return _date(token, variant)
    if cls == "time":
        return _time(token, variant)
    if cls == "letters":
        return " ".join(token.lower()) if variant == "spell" else token.lower()
    raise ValueError(cls)


def _money(token: str) -> str:
    one, many, sub_one, sub_many = CURRENCIES[token[0]]
    amount, _, cents = token[1:].partition(".")
    value = int(amount)
    text = f"{number_words(value)} {one if value == 1 else many}"
    if cents and int(cents):
        c = int(cents)
        text += f" {number_words(c)} {sub_one if c == 1 else sub_many}"
    return text


def _measure(token: str) -> str:
    match = re.match(r"^([\d.]+)(.*)$", token)
    assert match is not None
    number, unit = match.groups()
    one, many = UNITS[unit]
    if "." in number:
        return f"{verbalise('decimal', number, 'zero')} {many}"
    value = int(number)
    return f"{number_words(value)} {one if value == 1 else many}"


def _date(token: str, variant: str) -> str:
    if "-" not in token:
        return year_words(int(token))
    year, month, day = (int(v) for v in token.split("-"))
    if variant == "dmy":
        return f"the {ordinal_words(day)} of {MONTHS[month - 1]} {year_words(year)}"
    return f"{MONTHS[month - 1]} {ordinal_words(day)} {year_words(year)}"


def _time(token: str, variant: str) -> str:
    hour, minute = (int(v) for v in token.split(":"))
    suffix = ""
    if variant == "12h":
        suffix = " p m" if hour >= 12 else " a m"
        hour = hour % 12 or 12
    if minute == 0:
        spoken = f"{number_words(hour)} o'clock" if not suffix else number_words(hour)
    elif minute < 10:
        spoken = f"{number_words(hour)} o {ONES[minute]}"
    else:
        spoken = f"{number_words(hour)} {number_words(minute)}"
    return spoken + suffix


# ---------------------------------------------------------------- drawing tokens


def _draw_token(cls: str, rng: np.random.Generator, abbreviations: list[str]) -> str:
    """A written token of class ``cls`` (high-cardinality classes rarely repeat)."""
    if cls == "cardinal":
        n = int(
            rng.choice([rng.integers(0, 20), rng.integers(20, 1000), rng.integers(1000, 10**5)])
        )
        return f"{n:,}"
    if cls == "ordinal":
        n = int(rng.integers(1, 20)) if rng.random() < 0.4 else int(rng.integers(20, 1000))
        return f"{n}{_suffix(n)}"
    if cls == "decimal":
        return f"{int(rng.integers(0, 100))}.{int(rng.integers(1, 100))}"
    if cls == "money":
        symbol = str(rng.choice(list(CURRENCIES)))
        cents = f".{int(rng.integers(0, 100)):02d}" if rng.random() < 0.35 else ""
        return f"{symbol}{int(rng.integers(1, 2000))}{cents}"
    if cls == "measure":
        return f"{int(rng.integers(1, 500))}{rng.choice(list(UNITS))}"
    if cls == "date":
        year = int(rng.integers(1900, 2031))
        if rng.random() < 0.4:
            return str(year)
        return f"{year}-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}"
    if cls == "time":
        return f"{int(rng.integers(0, 24))}:{int(rng.choice([0, 5, 10, 15, 30, 45, rng.integers(1, 60)])):02d}"
    if cls == "letters":
        while True:
            letters = "".join(rng.choice(list("ABCDEFGHIKLMNOPRSTUVWY"), int(rng.integers(2, 5))))
            if letters not in NA_LIKE:
                return letters
    return str(rng.choice(abbreviations))


def _sentences(
    n_rows: int,
    first_sentence: int,
    structure: dict,
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


def normalise(
    cls: str, token: str, variants: dict[str, str], table: dict[str, str], lang: Language
) -> str:
    """The rule: the class's verbalisation, the abbreviation table, else the token itself."""
    if cls == "abbreviation":
        return table[token]
    if cls in lang.patterns:
        return lang.verbalise(cls, token, variants.get(cls, ""))
    return token


@dataclass(frozen=True)
class Language:
    """What a language's normalization needs: its classes, token shapes and spoken forms."""

    classes: tuple[str, ...]
    variants: dict[str, tuple[str, ...]]
    patterns: dict[str, re.Pattern[str]]
    abbreviations: dict[str, str]
    words: tuple[str, ...]
    function_words: tuple[str, ...]
    verbalise: Callable[[str, str, str], str]
    draw_token: Callable[[str, np.random.Generator, list[str]], str]


def language(code: str) -> Language:
    """English (this module) or Russian (:mod:`.seq2seq_ru`, for the Russian seed)."""
    if code == "ru":
        from sandmle.benchmarks.synthetic.modalities import seq2seq_ru as ru

        return Language(ru.CLASSES, ru.VARIANTS, ru.PATTERNS, ru.ABBREVIATIONS,
                        tuple(ru.WORDS), tuple(ru.FUNCTION_WORDS), ru.verbalise,
                        ru.draw_token)  # fmt: skip
    return Language(CLASSES, VARIANTS, PATTERNS, ABBREVIATIONS, WORDS, tuple(FUNCTION_WORDS),
                    verbalise, _draw_token)  # fmt: skip


# ---------------------------------------------------------------- building


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


# ---------------------------------------------------------------- learners


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


def classify(token: str, classes: list[str], code: str = "en") -> str | None:
    patterns = language(code).patterns
    for cls in classes:
        if cls in patterns and patterns[cls].match(token):
            return cls
    return None


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


def ladder(bp: Blueprint, rule: HiddenRule, data) -> dict[str, np.ndarray]:
    """Constant (copy), generic (lookup + copy), structure (rules + lookup + copy)."""
    out = {"constant": copy_before(data.test), "generic": lookup_predict(data.train, data.test)}
    if "structure" in rule.params:
        structure = rule.params["structure"]
        code = str(structure.get("language", "en"))
        out["structure"] = structure_predict(
            data.train, data.test, list(structure["classes"]), code
        )
    return out


def features(bp: Blueprint, task) -> tuple[np.ndarray, np.ndarray]:
    """Generic token-shape features (length, digits, capitals, punctuation, seen in train).

    The ladder does not use them (its generic learner is a lookup, see :func:`ladder`); they
    are the modality contract's matrix view, for outside learners.
    """
    seen = set(task.train["before"].astype(str))

    def encode(frame: pd.DataFrame) -> np.ndarray:
        rows = []
        for token in frame["before"].astype(str):
            n = max(len(token), 1)
            rows.append([len(token), sum(c.isdigit() for c in token) / n,
                         sum(c.isupper() for c in token) / n,
                         sum(not c.isalnum() for c in token) / n, float(token in seen)])  # fmt: skip
        return np.array(rows, dtype=np.float64)

    return encode(task.train), encode(task.test)


def structure_features(bp: Blueprint, rule: HiddenRule, data) -> tuple[np.ndarray, np.ndarray]:
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


# ---------------------------------------------------------------- description


def description_specifics(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> Specifics:
    """What the writer states exactly for a normalization task (it draws the wording)."""
    from sandmle.benchmarks.synthetic.writer import Specifics

    lang = _LANGUAGE_NAMES[str(bp.params.get("language", "en"))]
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


_LANGUAGE_NAMES = {"en": "English", "ru": "Russian"}
