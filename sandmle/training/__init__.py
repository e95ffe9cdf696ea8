"""sandmle.training: GRPO on synthetic sandboxes and the SFT baseline, built on TRL.

Only the light, torch-free pieces are re-exported; ``grpo``, ``sft``, ``generators`` and
``checkpoints`` import torch/trl and are imported explicitly.
"""

from sandmle.env.rewards import (
    RewardSettings,
    format_reward,
    gold_reward,
    reasoning_well_formed,
    reward_functions,
    tier_reward,
    total_reward,
    valid_reward,
)

__all__ = [
    "RewardSettings",
    "format_reward",
    "gold_reward",
    "reasoning_well_formed",
    "reward_functions",
    "tier_reward",
    "total_reward",
    "valid_reward",
]
