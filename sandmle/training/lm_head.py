"""TRL's fused LM head on CPU scores only the positions that carry the loss.

TRL's ``GRPOTrainer`` turns hidden states into per-token log-probabilities with a chunked,
fused LM head (``trl.trainer.utils.add_fused_lm_head``). On a Triton device it projects only
the positions with a label, the completion; elsewhere it projects every position, so that
tile shapes stay fixed for graph compilers (Neuron). Eager CPU code recompiles nothing, and
there the full projection is a large share of a step: a cpu-smollm2 episode is ~1,800
tokens, of which the 32-token call carries the loss, and each position costs a 576 × 49,152
matmul and a softmax, forward and backward, for the policy and the reference model alike.
Scoring the labelled positions alone gives the same log-probabilities and entropies (the
same kernel over fewer rows; bench/training_lm_head.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_MARK = "_sandmle_compact_on_cpu"


def compact_on_cpu() -> bool:
    """Make TRL's fused LM head score only labelled positions on CPU tensors (idempotent).

    TRL takes its compact path where ``trl.trainer.utils._use_triton(device)`` is true; that
    name is private, so this says whether the switch took (False: this TRL has no such
    switch, and every position is scored as before)."""
    from trl.trainer import utils as trl_utils

    original: Callable[[Any], bool] | None = getattr(trl_utils, "_use_triton", None)
    if original is None:
        return False
    if getattr(original, _MARK, False):
        return True

    @functools.wraps(original)  # __wrapped__: TRL's own switch
    def compact(device: Any) -> bool:
        return getattr(device, "type", None) == "cpu" or original(device)

    setattr(compact, _MARK, True)
    trl_utils._use_triton = compact
    return True
