"""Episode rewards from the medal scorer's value: the dense milestone reward and the sparse one.

Every component is its own TRL reward function, so TRL logs each one on its own
(``rewards/<name>/mean``) and sums them with ``reward_weights``:

- dense (default): 0.2 × valid + the highest tier reached (gold 0.7, silver 0.6, bronze 0.5,
  at or above median 0.1) + 0.1 × the share of assistant turns with a well-formed reasoning block;
- sparse (the ablation): 0.1 × format + 0.9 × gold.

The functions read the rollout's extra fields: ``medal`` (the scorer's ``Score.value`` dict)
and ``assistant_turns`` (the raw text of every policy turn).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RewardFunc = Callable[..., list[float]]
TIER_FLAGS = ("gold_medal", "silver_medal", "bronze_medal", "above_median")
_REASONING = re.compile(r"^\s*<think>(?P<body>.*?)</think>", re.S)


class RewardSettings(BaseModel):
    """Which reward, and its weights and tier values (YAML ``reward:``)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["dense", "sparse"] = "dense"
    """``dense``: valid + tier + format; ``sparse``: format + gold (the ablation)."""
    valid_weight: float = 0.2
    """Dense: reward for a valid submission."""
    tiers: dict[str, float] = Field(
        default_factory=lambda: {
            "gold_medal": 0.7,
            "silver_medal": 0.6,
            "bronze_medal": 0.5,
            "above_median": 0.1,
        }
    )
    """Dense: reward of the highest tier reached, keyed by scorer flag."""
    format_weight: float = 0.1
    """Dense: weight of the share of turns with a well-formed reasoning block."""
    sparse_format_weight: float = 0.1
    """Sparse: weight of the format share."""
    sparse_gold_weight: float = 0.9
    """Sparse: reward for a gold medal."""


def reasoning_well_formed(text: str) -> bool:
    """Whether a turn opens with a non-empty ``<think>…</think>`` block.

    >>> reasoning_well_formed("<think>try a forest</think><tool_call>…</tool_call>")
    True
    >>> reasoning_well_formed("<think></think>done"), reasoning_well_formed("<think>open")
    (False, False)
    """
    match = _REASONING.match(text)
    return bool(match and match.group("body").strip() and "<think>" not in match.group("body"))


def _flag(medal: dict[str, float] | None, key: str) -> bool:
    value = (medal or {}).get(key, 0.0)
    return value == value and value >= 0.5  # NaN (missing) counts as not reached


def _turns(completion: Any, turns: list[str] | None) -> list[str]:
    if turns is not None:
        return turns
    if isinstance(completion, list):  # conversational: [{"role": "assistant", "content": ...}]
        return [m.get("content") or "" for m in completion if m.get("role") == "assistant"]
    return [str(completion)]


def valid_reward(completions: list, medal: list[dict] | None = None, **kwargs: Any) -> list[float]:
    """1 when the episode handed in a valid submission.

    >>> valid_reward(["…", "…"], medal=[{"valid_submission": 1.0}, {"valid_submission": 0.0}])
    [1.0, 0.0]
    """
    medals = medal or [None] * len(completions)
    return [float(_flag(m, "valid_submission")) for m in medals]


def gold_reward(completions: list, medal: list[dict] | None = None, **kwargs: Any) -> list[float]:
    """1 for a gold medal.

    >>> gold_reward(["…"], medal=[{"gold_medal": 1.0, "valid_submission": 1.0}])
    [1.0]
    """
    medals = medal or [None] * len(completions)
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
        medals = medal or [None] * len(completions)
        return [_highest(m, ordered) for m in medals]

    tier.__name__ = "tier_reward"
    return tier


def _highest(medal: dict | None, ordered: list[tuple[str, float]]) -> float:
    if not _flag(medal, "valid_submission"):
        return 0.0
    return next((value for flag, value in ordered if _flag(medal, flag)), 0.0)


def format_reward(
    completions: list, assistant_turns: list[list[str]] | None = None, **kwargs: Any
) -> list[float]:
    """The share of assistant turns that open with a well-formed reasoning block.

    >>> format_reward(["…"], assistant_turns=[["<think>a</think>x", "no block", "<think>b</think>"]])
    [0.6666666666666666]
    >>> format_reward(["<think>plan</think>answer"])
    [1.0]
    """
    per_turns = assistant_turns or [None] * len(completions)
    rates = []
    for completion, turns in zip(completions, per_turns, strict=True):
        texts = _turns(completion, turns)
        rates.append(sum(map(reasoning_well_formed, texts)) / len(texts) if texts else 0.0)
    return rates


def reward_functions(settings: RewardSettings) -> tuple[list[RewardFunc], list[float]]:
    """TRL ``reward_funcs`` and ``reward_weights`` for a mode (each component logged alone)."""
    if settings.mode == "sparse":
        return [format_reward, gold_reward], [
            settings.sparse_format_weight,
            settings.sparse_gold_weight,
        ]
    return (
        [valid_reward, tier_reward(settings.tiers), format_reward],
        [settings.valid_weight, 1.0, settings.format_weight],
    )


def total_reward(settings: RewardSettings, completions: list, **kwargs: Any) -> list[float]:
    """The weighted sum TRL computes, for logs and benches.

    >>> medal = [{"valid_submission": 1, "gold_medal": 1, "silver_medal": 1, "above_median": 1}]
    >>> turns = [["<think>x</think>", "y"]]
    >>> total_reward(RewardSettings(), ["…"], medal=medal, assistant_turns=turns)
    [0.95]
    >>> total_reward(RewardSettings(mode="sparse"), ["…"], medal=medal, assistant_turns=turns)
    [0.95]
    """
    funcs, weights = reward_functions(settings)
    columns = [func(completions, **kwargs) for func in funcs]
    return [
        round(sum(w * c[i] for w, c in zip(weights, columns, strict=True)), 10)
        for i in range(len(completions))
    ]
