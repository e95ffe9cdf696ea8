"""Episode rewards from the medal scorer's value: the dense milestone reward and the sparse one.

Every component is its own TRL reward function, so TRL logs each one on its own
(``rewards/<name>/mean``) and sums them with ``reward_weights``:

- dense (default): 0.2 × valid + the highest tier reached (gold 0.7, silver 0.6, bronze 0.5,
  at or above median 0.1) + 0.1 × the share of assistant turns with a well-formed reasoning block;
- sparse (the ablation): 0.1 × format + 0.9 × gold.

The reasoning block is the model family's own (``<think>…</think>`` for Qwen3, the default);
``reasoning_tag`` names another one (e.g. ``thought`` for ``<thought>…</thought>``, as the
SandMLE paper's text writes it). The functions read the rollout's extra fields: ``medal`` (the
scorer's ``Score.value`` dict), ``assistant_turns`` (the raw text of every policy turn) and
``dropped`` (an episode whose backend failed: every function returns ``None`` for it, which
TRL leaves out of the group's baseline and gives no advantage).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sandmle.specs.training import DEFAULT_REASONING_TAG, RewardSettings

RewardFunc = Callable[..., list[float]]
DroppingRewardFunc = Callable[..., list[float | None]]
"""A reward function that returns ``None`` for a dropped episode (TRL's own reward type)."""
_T = TypeVar("_T")
TIER_FLAGS = ("gold_medal", "silver_medal", "bronze_medal", "above_median")


def reasoning_well_formed(text: str, tag: str = DEFAULT_REASONING_TAG) -> bool:
    """Whether a turn opens with a non-empty ``<tag>…</tag>`` block (``<think>`` by default).

    >>> reasoning_well_formed("<think>try a forest</think><tool_call>…</tool_call>")
    True
    >>> reasoning_well_formed("<think></think>done"), reasoning_well_formed("<think>open")
    (False, False)
    >>> reasoning_well_formed("<thought>plan</thought>go", tag="thought")
    True
    """
    match = _block(tag).match(text)
    return bool(match and match.group("body").strip() and f"<{tag}>" not in match.group("body"))


def _block(tag: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*<{re.escape(tag)}>(?P<body>.*?)</{re.escape(tag)}>", re.S)


def _flag(medal: dict[str, float] | None, key: str) -> bool:
    value = (medal or {}).get(key, 0.0)
    return value == value and value >= 0.5  # NaN (missing) counts as not reached


def _turns(completion: Any, turns: list[str] | None) -> list[str]:
    if turns is not None:
        return turns
    if isinstance(completion, list):  # conversational: [{"role": "assistant", "content": ...}]
        return [m.get("content") or "" for m in completion if m.get("role") == "assistant"]
    return [str(completion)]


def _per_episode(values: Sequence[_T] | None, n: int) -> Sequence[_T | None]:
    """``values``, or one ``None`` per episode when the rollout did not log the field."""
    return values or [None] * n


def valid_reward(completions: list, medal: list[dict] | None = None, **kwargs: Any) -> list[float]:
    """1 when the episode handed in a valid submission.

    >>> valid_reward(["…", "…"], medal=[{"valid_submission": 1.0}, {"valid_submission": 0.0}])
    [1.0, 0.0]
    """
    medals = _per_episode(medal, len(completions))
    return [float(_flag(m, "valid_submission")) for m in medals]


def gold_reward(completions: list, medal: list[dict] | None = None, **kwargs: Any) -> list[float]:
    """1 for a gold medal.

    >>> gold_reward(["…"], medal=[{"gold_medal": 1.0, "valid_submission": 1.0}])
    [1.0]
    """
    medals = _per_episode(medal, len(completions))
    return [float(_flag(m, "gold_medal") and _flag(m, "valid_submission")) for m in medals]


def tier_reward(tiers: dict[str, float] | None = None) -> RewardFunc:
    """The reward of the highest tier reached (tiers ordered by value, best first).

    >>> tier = tier_reward()
    >>> tier(["…"] * 3, medal=[{"valid_submission": 1, "silver_medal": 1, "bronze_medal": 1},
    ...                        {"valid_submission": 1, "above_median": 1}, {"valid_submission": 0}])
    [0.6, 0.1, 0.0]
    """
    ordered = sorted((tiers or RewardSettings().tiers).items(), key=lambda kv: -kv[1])

    def tier(completions: list, medal: list[dict] | None = None, **kwargs: Any) -> list[float]:
        medals = _per_episode(medal, len(completions))
        return [_highest(m, ordered) for m in medals]

    tier.__name__ = "tier_reward"
    return tier


def _highest(medal: dict | None, ordered: list[tuple[str, float]]) -> float:
    if not _flag(medal, "valid_submission"):
        return 0.0
    return next((value for flag, value in ordered if _flag(medal, flag)), 0.0)


def format_reward_for(tag: str = DEFAULT_REASONING_TAG) -> RewardFunc:
    """The share of assistant turns that open with a well-formed ``<tag>`` block.

    >>> format_reward_for()(["…"], assistant_turns=[["<think>a</think>x", "no", "<think>b</think>"]])
    [0.6666666666666666]
    >>> format_reward_for()(["<think>plan</think>answer"])
    [1.0]
    >>> format_reward_for("thought")(["…"], assistant_turns=[["<thought>a</thought>x", "<think>b</think>"]])
    [0.5]
    """

    def format_reward(
        completions: list, assistant_turns: list[list[str]] | None = None, **kwargs: Any
    ) -> list[float]:
        per_turns = _per_episode(assistant_turns, len(completions))
        rates = []
        for completion, turns in zip(completions, per_turns, strict=True):
            texts = _turns(completion, turns)
            good = sum(reasoning_well_formed(t, tag) for t in texts)
            rates.append(good / len(texts) if texts else 0.0)
        return rates

    format_reward.__doc__ = (
        f"The share of assistant turns that open with a well-formed <{tag}> block."
    )
    return format_reward


format_reward = format_reward_for()  # the default tag: Qwen3's <think>


def skip_dropped(func: RewardFunc) -> DroppingRewardFunc:
    """``func``, returning ``None`` for dropped episodes (TRL then leaves them out of the group).

    >>> skip_dropped(valid_reward)(["…"] * 2, medal=[{}, {}], dropped=[False, True])
    [0.0, None]
    """

    def wrapped(
        completions: list, dropped: list[bool] | None = None, **kwargs: Any
    ) -> list[float | None]:
        values = func(completions, **kwargs)
        return [
            None if d else v for v, d in zip(values, dropped or [False] * len(values), strict=True)
        ]

    wrapped.__name__ = func.__name__
    return wrapped


def reward_functions(
    settings: RewardSettings,
) -> tuple[list[DroppingRewardFunc], list[float]]:
    """TRL ``reward_funcs`` and ``reward_weights`` for a mode (each component logged alone)."""
    fmt = format_reward_for(settings.reasoning_tag)
    if settings.mode == "sparse":
        funcs = [fmt, gold_reward]
        weights = [settings.sparse_format_weight, settings.sparse_gold_weight]
    else:
        funcs = [valid_reward, tier_reward(settings.tiers), fmt]
        weights = [settings.valid_weight, 1.0, settings.format_weight]
    return [skip_dropped(f) for f in funcs], weights


def total_reward(settings: RewardSettings, completions: list, **kwargs: Any) -> list[float | None]:
    """The weighted sum TRL computes, for logs and benches (``None`` for a dropped episode).

    >>> medal = [{"valid_submission": 1, "gold_medal": 1, "silver_medal": 1, "above_median": 1}]
    >>> turns = [["<think>x</think>", "y"]]
    >>> total_reward(RewardSettings(), ["…"], medal=medal, assistant_turns=turns)
    [0.95]
    >>> total_reward(RewardSettings(mode="sparse"), ["…"], medal=medal, assistant_turns=turns)
    [0.95]
    """
    funcs, weights = reward_functions(settings)
    columns = [func(completions, **kwargs) for func in funcs]
    rows = [[c[i] for c in columns] for i in range(len(completions))]
    return [
        None
        if all(v is None for v in row)
        else round(sum(w * (v or 0.0) for w, v in zip(weights, row, strict=True)), 10)
        for row in rows
    ]
