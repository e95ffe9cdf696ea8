"""bench/training_lm_head.py on a tiny model: its three paths (TRL's full CPU head, the
completion alone, micro-batches of one without padding) score the same log-probabilities, and
the bench leaves TRL's switch as it found it for the first row."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from tests.bench import run_bench

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")


def test_the_three_paths_agree(tmp_path: Path) -> None:
    from sandmle.training.tiny import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny")
    out = run_bench(
        "training_lm_head", "--model", str(model), "--tokens", "48", "--completion", "5",
        "--pad", "9", "--runs", "1", cwd=tmp_path,
    )  # fmt: skip
    result = json.loads(out.strip().splitlines()[-1])
    assert (result["tokens"], result["completion_tokens"], result["pad_tokens"]) == (48, 5, 9)
    for row in ("full", "compact", "compact_batch_1"):
        assert result[row]["policy_fwd_bwd_s"] > 0 and result[row]["reference_fwd_s"] > 0
        assert result[row]["logprob_gap_max"] <= 1e-4, row  # float32 summation order only
    assert result["full"]["policy_speedup"] == 1.0


def test_the_bench_restores_trls_own_switch_before_its_first_row() -> None:
    # the bench's full row unwraps sandmle's switch; unwrapping must reach TRL's function
    from trl.trainer import utils as trl_utils

    from sandmle.training.lm_head import compact_on_cpu

    compact_on_cpu()
    original = inspect.unwrap(trl_utils._use_triton)
    assert original.__module__ == "trl.kernels.chunked_logprob"
