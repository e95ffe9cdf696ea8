"""Text normalization's languages: hand-worked tokens read aloud as the rule reads them,
English and Russian (number agreement), and plain tokens that match no class."""

from __future__ import annotations

import pytest

from sandmle.benchmarks.synthetic.modalities import seq2seq_en
from sandmle.benchmarks.synthetic.modalities.seq2seq_language import (
    ENGLISH,
    RUSSIAN,
    classify,
    language,
    normalise,
)


@pytest.mark.parametrize(
    ("cls", "token", "variant", "spoken"),
    [
        ("cardinal", "1,204", "plain", "one thousand two hundred four"),
        ("cardinal", "1,204", "and", "one thousand two hundred and four"),
        ("cardinal", "17", "plain", "seventeen"),
        ("ordinal", "21st", "plain", "twenty first"),
        ("ordinal", "112th", "plain", "one hundred twelfth"),
        ("ordinal", "40th", "plain", "fortieth"),
        ("decimal", "0.05", "zero", "zero point zero five"),
        ("decimal", "3.14", "o", "three point one four"),
        ("money", "$3.50", "", "three dollars fifty cents"),
        ("money", "£1", "", "one pound"),
        ("measure", "1kg", "", "one kilogram"),
        ("measure", "12%", "", "twelve percent"),
        ("date", "1905", "mdy", "nineteen o five"),
        ("date", "2004-03-12", "dmy", "the twelfth of march two thousand four"),
        ("date", "2019-11-02", "mdy", "november second twenty nineteen"),
        ("time", "14:30", "12h", "two thirty p m"),
        ("time", "9:05", "24h", "nine o five"),
        ("time", "7:00", "24h", "seven o'clock"),
        ("letters", "BBC", "spell", "b b c"),
        ("letters", "BBC", "lower", "bbc"),
    ],
)
def test_verbalisation_of_hand_worked_tokens(cls, token, variant, spoken):
    assert classify(token, list(seq2seq_en.PATTERNS)) == cls
    assert seq2seq_en.verbalise(cls, token, variant) == spoken


@pytest.mark.parametrize(
    ("cls", "token", "variant", "spoken"),
    [
        ("cardinal", "21", "", "двадцать один"),
        ("cardinal", "1 204", "", "одна тысяча двести четыре"),
        ("cardinal", "22 000", "", "двадцать две тысячи"),
        ("cardinal", "45 011", "", "сорок пять тысяч одиннадцать"),
        ("ordinal", "21-й", "", "двадцать первый"),
        ("ordinal", "40-й", "", "сороковой"),
        ("money", "₽1", "", "один рубль"),
        ("money", "₽3", "", "три рубля"),
        ("money", "$12", "", "двенадцать долларов"),
        ("money", "€21", "", "двадцать один евро"),
        ("measure", "5кг", "", "пять килограммов"),
        ("measure", "2км", "", "два километра"),
        ("measure", "111%", "", "сто одиннадцать процентов"),
        ("time", "9:05", "digits", "девять ноль пять"),
        ("time", "21:00", "hours", "двадцать один час"),
        ("time", "3:21", "hours", "три часа двадцать одна минута"),
        ("letters", "МГУ", "spell", "м г у"),
    ],
)
def test_russian_verbalisation_agrees_in_number(cls, token, variant, spoken):
    assert classify(token, list(language("ru").patterns), "ru") == cls
    assert language("ru").verbalise(cls, token, variant) == spoken


def test_plain_tokens_and_punctuation_match_no_class():
    for token in ("The", "bridge", ",", ".", "A", "Dr."):
        assert classify(token, list(seq2seq_en.PATTERNS)) is None


def test_the_rule_reads_classes_looks_up_abbreviations_and_keeps_the_rest():
    table = {"Dr.": "doctor"}
    variants = {"cardinal": "and"}
    assert normalise("cardinal", "104", variants, table, ENGLISH) == "one hundred and four"
    assert normalise("abbreviation", "Dr.", variants, table, ENGLISH) == "doctor"
    assert normalise("plain", "bridge", variants, table, ENGLISH) == "bridge"
    assert language("ru") is RUSSIAN and language("en") is ENGLISH is language("xx")
