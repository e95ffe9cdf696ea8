"""A normalization language (English or Russian) and the hidden rule that applies it.

:class:`Language` bundles what the generator and the learners need of a language: its token
classes and their variants, the written shape of each class, the abbreviation table, the
plain words of its sentences, and the functions that read a token aloud and draw one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sandmle.benchmarks.synthetic.modalities import seq2seq_en as en
from sandmle.benchmarks.synthetic.modalities import seq2seq_ru as ru
from sandmle.benchmarks.synthetic.modalities.words import WORDS

LANGUAGE_NAMES = {"en": "English", "ru": "Russian"}


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


ENGLISH = Language(en.CLASSES, en.VARIANTS, en.PATTERNS, en.ABBREVIATIONS, WORDS,
                   tuple(en.FUNCTION_WORDS), en.verbalise, en.draw_token)  # fmt: skip
RUSSIAN = Language(ru.CLASSES, ru.VARIANTS, ru.PATTERNS, ru.ABBREVIATIONS, tuple(ru.WORDS),
                   tuple(ru.FUNCTION_WORDS), ru.verbalise, ru.draw_token)  # fmt: skip


def language(code: str) -> Language:
    """Russian for ``ru`` (the Russian seed), else English."""
    return RUSSIAN if code == "ru" else ENGLISH


def normalise(
    cls: str, token: str, variants: dict[str, str], table: dict[str, str], lang: Language
) -> str:
    """The rule: the class's verbalisation, the abbreviation table, else the token itself."""
    if cls == "abbreviation":
        return table[token]
    if cls in lang.patterns:
        return lang.verbalise(cls, token, variants.get(cls, ""))
    return token


def classify(token: str, classes: list[str], code: str = "en") -> str | None:
    """The first of ``classes`` whose written shape ``token`` has, if any."""
    patterns = language(code).patterns
    for cls in classes:
        if cls in patterns and patterns[cls].match(token):
            return cls
    return None
