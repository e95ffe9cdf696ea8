"""bench/training_generation.py's group rows on a tiny model: a single-turn rollout's first
call, each group's prompt prefilled once and the groups' shared prefix once in all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench import run_bench

pytest.importorskip("transformers", reason="needs the train extra: pip install -e '.[train]'")


def test_group_rows_prefill_each_prompt_once(tmp_path: Path) -> None:
    from sandmle.training.tiny import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny")
    out = run_bench(
        "training_generation", "--model", str(model), "--batches", "", "--groups", "2",
        "--group-size", "3", "--threads", "1", "--turns", "1", "--tokens", "4",
        "--prompt-repeats", "20", cwd=tmp_path,
    )  # fmt: skip
    result = json.loads(out)
    row = result["groups_2x3_1_thread"]
    prompt, shared, size = result["prompt_tokens"], result["prompt_tokens"] * 2 // 5, 3
    assert row["episodes"] == 2 * size
    # the first prompt whole, the second after the shared part, and every other request of a
    # group only its last token (the one fed to get the next logits)
    assert row["prefilled_tokens"] == prompt + (prompt - shared) + 2 * (size - 1)
    assert row["reused_tokens"] == shared + 2 * (size - 1) * (prompt - 1)
    assert row["tokens_per_s_total"] > 0
