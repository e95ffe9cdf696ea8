"""English text normalization: the token classes, their written shapes and spoken forms.

``verbalise(cls, token, variant)`` reads a written token aloud ("1,204" -> "one thousand two
hundred four"); each class's variants are the ways a task may read it (British "and" in
numbers, day-first dates, 12-hour clocks, acronyms spelled or lower-cased). ``draw_token``
writes a random token of a class. The Russian counterpart is :mod:`.seq2seq_ru`.
"""

from __future__ import annotations

import re

import numpy as np

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


def draw_token(cls: str, rng: np.random.Generator, abbreviations: list[str]) -> str:
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
        return f"{int(rng.integers(0, 24))}:{int(rng.choice([0, 5, 10, 15, 30, 45, int(rng.integers(1, 60))])):02d}"
    if cls == "letters":
        while True:
            letters = "".join(rng.choice(list("ABCDEFGHIKLMNOPRSTUVWY"), int(rng.integers(2, 5))))
            if letters not in NA_LIKE:
                return letters
    return str(rng.choice(abbreviations))
