"""bench/training_shared_prefix.py on a tiny model: a group scored per episode (TRL) and with
its prompt once (sandmle) gives the same log-probabilities."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench import run_bench

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")


def test_both_paths_score_the_same_group(tmp_path: Path) -> None:
    from sandmle.training.tiny import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny")
    out = run_bench(
        "training_shared_prefix", "--model", str(model), "--tokens", "48", "--completion", "6",
        "--group", "3", "--runs", "1", cwd=tmp_path,
    )  # fmt: skip
    result = json.loads(out.strip().splitlines()[-1])
    assert (result["tokens"], result["completion_tokens"], result["group"]) == (48, 6, 3)
    for row in ("per_episode", "shared"):
        assert result[row]["policy_fwd_bwd_s"] > 0 and result[row]["reference_fwd_s"] > 0
        assert result[row]["logprob_gap_max"] <= 1e-4, row  # float32 summation order only
    assert result["per_episode"]["policy_speedup"] == 1.0
