"""Russian text normalization for the Russian seed: Cyrillic tokens, spoken forms in the
nominative with Russian number agreement (1 рубль, 2 рубля, 5 рублей).

The classes are those whose spoken form needs no grammatical case: cardinals, ordinals
("21-й"), money, measures, times, letter groups and abbreviations.
"""

from __future__ import annotations

import re

import numpy as np

CLASSES = ("cardinal", "ordinal", "money", "measure", "time", "letters", "abbreviation")
VARIANTS: dict[str, tuple[str, ...]] = {"letters": ("spell", "lower"), "time": ("digits", "hours")}
ONES = ("ноль один два три четыре пять шесть семь восемь девять десять одиннадцать двенадцать "
        "тринадцать четырнадцать пятнадцать шестнадцать семнадцать восемнадцать "
        "девятнадцать").split()  # fmt: skip
TENS = "_ _ двадцать тридцать сорок пятьдесят шестьдесят семьдесят восемьдесят девяносто".split()
HUNDREDS = ("_ сто двести триста четыреста пятьсот шестьсот семьсот восемьсот "
            "девятьсот").split()  # fmt: skip
ORDINAL_ONES = ("_ первый второй третий четвёртый пятый шестой седьмой восьмой девятый десятый "
                "одиннадцатый двенадцатый тринадцатый четырнадцатый пятнадцатый шестнадцатый "
                "семнадцатый восемнадцатый девятнадцатый").split()  # fmt: skip
ORDINAL_TENS = ("_ _ двадцатый тридцатый сороковой пятидесятый шестидесятый семидесятый "
                "восьмидесятый девяностый").split()  # fmt: skip
UNITS = {
    "кг": ("килограмм", "килограмма", "килограммов"),
    "км": ("километр", "километра", "километров"),
    "см": ("сантиметр", "сантиметра", "сантиметров"),
    "м": ("метр", "метра", "метров"),
    "г": ("грамм", "грамма", "граммов"),
    "%": ("процент", "процента", "процентов"),
}
CURRENCIES = {"$": ("доллар", "доллара", "долларов"), "₽": ("рубль", "рубля", "рублей"),
              "€": ("евро", "евро", "евро")}  # fmt: skip
ABBREVIATIONS = {
    "г.": "год",
    "ул.": "улица",
    "т.е.": "то есть",
    "др.": "другие",
    "руб.": "рублей",
    "тыс.": "тысяч",
    "им.": "имени",
    "гл.": "глава",
    "стр.": "страница",
    "св.": "святой",
    "т.к.": "так как",
    "см.": "смотри",
    "млн": "миллионов",
    "пр.": "прочее",
}
LETTERS = "АБВГДЕЖЗИКЛМНОПРСТУФХЦЧШЭЮЯ"
FUNCTION_WORDS = (
    "и в не на что с а как по но к у из за так же от этот который о для вот да или если до "
    "при без под над где там тут уже ещё только очень тоже потом теперь"
).split()
WORDS = (
    "год время человек дело жизнь день рука работа слово место лицо друг глаз вопрос дом "
    "сторона страна мир случай голова ребёнок сила конец вид система часть город отношение "
    "женщина деньги земля машина вода отец проблема час право нога решение дверь образ "
    "история власть закон война голос книга возможность результат ночь стол имя область "
    "статья число компания народ жена группа развитие процесс суд условие средство начало "
    "свет пора путь душа уровень форма связь минута улица вечер качество мысль дорога мать "
    "действие месяц государство язык любовь взгляд мама век школа цель общество деятельность "
    "организация президент комната порядок момент театр письмо утро помощь ситуация роль "
    "рубль смысл состояние квартира орган внимание тело труд сын мера смерть рынок программа "
    "задача предприятие окно разговор правительство семья производство информация положение "
    "центр ответ муж автор стена интерес федерация правило управление мужчина идея партия "
    "совет счёт сердце движение вещь материал неделя чувство глава наука ряд газета причина "
    "плечо цена план речь точка основа товарищ культура данные мнение документ институт ход "
    "проект встреча директор срок палец опыт служба судьба девушка очередь лес состав член "
    "количество событие объект зал создание значение период шаг брат искусство структура "
    "номер пример исследование гражданин начальник принцип воздух характер борьба использование "
    "размер образование мальчик земля море небо река поле гора снег дождь ветер берег"
).split()
PATTERNS: dict[str, re.Pattern[str]] = {
    "cardinal": re.compile(r"^\d{1,3}(?: \d{3})*$"),
    "ordinal": re.compile(r"^\d{1,2}-й$"),
    "money": re.compile(r"^[$₽€]\d+$"),
    "measure": re.compile(r"^\d+(?:кг|км|см|м|г|%)$"),
    "time": re.compile(r"^\d{1,2}:\d\d$"),
    "letters": re.compile(r"^[А-ЯЁ]{2,4}$"),
}


def plural(n: int, forms: tuple[str, str, str]) -> str:
    """The noun form that agrees with ``n``: 1 (and 21, 31...), 2-4, or 0 and 5-20."""
    if 11 <= n % 100 <= 14:
        return forms[2]
    return forms[0] if n % 10 == 1 else forms[1] if 2 <= n % 10 <= 4 else forms[2]


def number_words(n: int, feminine: bool = False) -> str:
    """Russian words for 0 <= n < 10**6 (nominative; ``feminine`` for thousands' count)."""
    if n < 20:
        if feminine and n in (1, 2):
            return ("одна", "две")[n - 1]
        return ONES[n]
    if n < 100:
        rest = n % 10
        return TENS[n // 10] + ("" if rest == 0 else " " + number_words(rest, feminine))
    if n < 1000:
        rest = n % 100
        return HUNDREDS[n // 100] + ("" if rest == 0 else " " + number_words(rest, feminine))
    thousands, rest = divmod(n, 1000)
    head = f"{number_words(thousands, True)} {plural(thousands, ('тысяча', 'тысячи', 'тысяч'))}"
    return head if rest == 0 else f"{head} {number_words(rest)}"


def ordinal_words(n: int) -> str:
    if n < 20:
        return ORDINAL_ONES[n]
    tens, rest = divmod(n, 10)
    return ORDINAL_TENS[tens] if rest == 0 else f"{TENS[tens]} {ORDINAL_ONES[rest]}"


def verbalise(cls: str, token: str, variant: str) -> str:
    """The spoken form of ``token`` read as class ``cls`` with ``variant``."""
    if cls == "cardinal":
        return number_words(int(token.replace(" ", "")))
    if cls == "ordinal":
        return ordinal_words(int(token[:-2]))
    if cls == "money":
        n = int(token[1:])
        return f"{number_words(n)} {plural(n, CURRENCIES[token[0]])}"
    if cls == "measure":
        match = re.match(r"^(\d+)(.*)$", token)
        assert match is not None
        n = int(match.group(1))
        return f"{number_words(n)} {plural(n, UNITS[match.group(2)])}"
    if cls == "time":
        hour, minute = (int(v) for v in token.split(":"))
        if variant == "hours":
            spoken = f"{number_words(hour)} {plural(hour, ('час', 'часа', 'часов'))}"
            if minute:
                spoken += (
                    f" {number_words(minute, True)} {plural(minute, ('минута', 'минуты', 'минут'))}"
                )
            return spoken
        tail = (
            "ноль ноль"
            if minute == 0
            else f"ноль {ONES[minute]}"
            if minute < 10
            else number_words(minute)
        )
        return f"{number_words(hour)} {tail}"
    if cls == "letters":
        return " ".join(token.lower()) if variant == "spell" else token.lower()
    raise ValueError(cls)


def draw_token(cls: str, rng: np.random.Generator, abbreviations: list[str]) -> str:
    """A written Russian token of class ``cls`` (thousands grouped with a space)."""
    if cls == "cardinal":
        n = int(
            rng.choice([rng.integers(0, 20), rng.integers(20, 1000), rng.integers(1000, 10**5)])
        )
        return f"{n:,}".replace(",", " ")
    if cls == "ordinal":
        return f"{int(rng.integers(1, 100))}-й"
    if cls == "money":
        return f"{rng.choice(list(CURRENCIES))}{int(rng.integers(1, 2000))}"
    if cls == "measure":
        return f"{int(rng.integers(1, 500))}{rng.choice(list(UNITS))}"
    if cls == "time":
        return f"{int(rng.integers(0, 24))}:{int(rng.choice([0, 5, 10, 15, 30, 45, int(rng.integers(1, 60))])):02d}"
    if cls == "letters":
        return "".join(rng.choice(list(LETTERS), int(rng.integers(2, 5))))
    return str(rng.choice(abbreviations))
