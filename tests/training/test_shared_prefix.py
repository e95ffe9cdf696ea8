"""A GRPO group's prompt run once (sandmle/training/shared_prefix.py): the same
log-probabilities, entropies and gradients as TRL's per-row passes, over fewer tokens; TRL's
generation-batch shuffle keeps groups whole; whatever cannot share takes TRL's path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

import torch
from transformers import AutoModelForCausalLM
from trl import GRPOTrainer
from trl.trainer import utils as trl_utils

from sandmle.training.lm_head import compact_on_cpu
from sandmle.training.shared_prefix import scorer, shuffle_groups_whole

KEEP = 5  # completion columns
PAD = 0


def batch(vocab: int) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """Six rows: prompt A three times, B twice, C once, shuffled; prompts left-padded,
    completions of 3-5 tokens right-padded, as TRL lays them out."""
    g = torch.Generator().manual_seed(0)
    prompts = {name: torch.randint(1, vocab, (n,), generator=g) for name, n in
               (("A", 9), ("B", 6), ("C", 8))}  # fmt: skip
    names, lengths = ["A", "B", "A", "C", "B", "A"], [5, 3, 4, 5, 5, 2]
    width = max(len(p) for p in prompts.values())
    ids = torch.full((6, width + KEEP), PAD)
    mask = torch.zeros_like(ids)
    for row, (name, n) in enumerate(zip(names, lengths, strict=True)):
        prompt = prompts[name]
        ids[row, width - len(prompt) : width] = prompt
        ids[row, width : width + n] = torch.randint(1, vocab, (n,), generator=g)
        mask[row, width - len(prompt) : width + n] = 1
    return ids, mask, names


@pytest.fixture
def model(tiny_model: Path) -> Any:
    m = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32).train()
    trl_utils.add_fused_lm_head(m, temperature=0.7, outputs=("log_probs", "entropy"))
    compact_on_cpu()
    return m


def scored(model: Any, score: Any, ids: torch.Tensor, mask: torch.Tensor) -> dict[str, Any]:
    """Log-probabilities, entropies, their gradients, and the tokens the backbone ran."""
    tokens: list[int] = []
    hook = model.get_input_embeddings().register_forward_hook(
        lambda _m, args, _o: tokens.append(args[0].numel())
    )
    try:
        logps, entropy, _ = score(model, ids, mask, KEEP, batch_size=4, compute_entropy=True)
    finally:
        hook.remove()
    keep = mask[:, -KEEP:].bool()
    (logps[keep].sum() + entropy[keep].sum()).backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return {"logps": logps.detach()[keep], "entropy": entropy.detach()[keep],
            "grads": grads, "tokens": sum(tokens)}  # fmt: skip


def assert_same(shared: dict[str, Any], reference: dict[str, Any]) -> None:
    torch.testing.assert_close(shared["logps"], reference["logps"], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(shared["entropy"], reference["entropy"], rtol=1e-4, atol=1e-5)
    assert shared["grads"].keys() == reference["grads"].keys() and reference["grads"]
    for name, grad in reference["grads"].items():
        torch.testing.assert_close(shared["grads"][name], grad, rtol=1e-3, atol=1e-6, msg=name)


def test_a_shared_prompt_gives_trls_numbers_over_fewer_tokens(model: Any) -> None:
    ids, mask, _ = batch(model.config.vocab_size)
    t = scorer()
    reference = scored(model, lambda *a, **k: GRPOTrainer._get_per_token_logps_and_entropies(
        t, *a, **k), ids, mask)  # fmt: skip
    shared = scored(model, t._get_per_token_logps_and_entropies, ids, mask)
    assert_same(shared, reference)
    assert reference["tokens"] == 6 * ids.size(1)  # TRL: every row, padding and all
    # A (9 tokens) three times, in chunks of batch_size 4: its prompt but the last token once,
    # then each row's last prompt token and completion columns; B (6) twice; C alone, as TRL
    assert shared["tokens"] == (8 + 3 * (1 + KEEP)) + (5 + 2 * (1 + KEEP)) + ids.size(1)


def test_groups_larger_than_a_chunk_rerun_their_prompt(model: Any) -> None:
    ids, mask, _ = batch(model.config.vocab_size)
    t = scorer()
    logps, _, _ = GRPOTrainer._get_per_token_logps_and_entropies(t, model, ids, mask, KEEP, 2)
    tokens: list[int] = []
    hook = model.get_input_embeddings().register_forward_hook(
        lambda _m, args, _o: tokens.append(args[0].numel())
    )
    shared, _, _ = t._get_per_token_logps_and_entropies(model, ids, mask, KEEP, batch_size=2)
    hook.remove()
    keep = mask[:, -KEEP:].bool()
    torch.testing.assert_close(shared[keep], logps[keep], rtol=1e-4, atol=1e-5)
    # A's three rows: chunks of 2 and 1 (the second a chunk of one, still on the cache)
    assert sum(tokens) == (8 + 2 * (1 + KEEP)) + (8 + 1 + KEEP) + (5 + 2 * (1 + KEEP)) + ids.size(1)


@pytest.mark.parametrize("why", ["off", "checkpointing", "wrapped", "distinct prompts"])
def test_what_cannot_share_takes_trls_path(model: Any, why: str) -> None:
    ids, mask, _ = batch(model.config.vocab_size)
    t = scorer(share=why != "off")
    if why == "checkpointing":
        model.gradient_checkpointing_enable()
    if why == "wrapped":  # several processes: DDP wraps the policy
        t.accelerator.unwrap_model = lambda m: object()
    if why == "distinct prompts":
        ids, mask = ids[[0, 1, 3]], mask[[0, 1, 3]]
    reference = scored(model, lambda *a, **k: GRPOTrainer._get_per_token_logps_and_entropies(
        scorer(), *a, **k), ids, mask)  # fmt: skip
    shared = scored(model, t._get_per_token_logps_and_entropies, ids, mask)
    assert shared["tokens"] == reference["tokens"] == ids.size(0) * ids.size(1)
    torch.testing.assert_close(shared["logps"], reference["logps"])


def test_the_shuffle_moves_whole_groups() -> None:
    ids, mask, names = batch(50)
    prompt_ids, prompt_mask = ids[:, :-KEEP], mask[:, :-KEEP]
    data = {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "names": names,
            "rows": torch.arange(6), "num_items_in_batch": torch.tensor(7), "none": None}  # fmt: skip
    orders = set()
    for seed in range(20):
        torch.manual_seed(seed)
        out = shuffle_groups_whole(data, fallback=trl_utils.shuffle_sequence_dict)
        assert sorted(out["rows"].tolist()) == list(range(6))
        assert out["names"] == [names[i] for i in out["rows"]]
        torch.testing.assert_close(out["prompt_ids"], prompt_ids[out["rows"]])
        assert out["num_items_in_batch"] == 7 and out["none"] is None
        runs = [n for i, n in enumerate(out["names"]) if i == 0 or n != out["names"][i - 1]]
        assert sorted(runs) == ["A", "B", "C"]  # each prompt's rows together
        orders.add("".join(runs))
    assert len(orders) > 1  # the groups themselves are shuffled


def test_micro_batches_must_hold_whole_groups(tmp_path: Path) -> None:
    from sandmle.errors import SandmleError
    from sandmle.training import grpo
    from tests.training.test_grpo import CONFIG

    with pytest.raises(SandmleError, match="whole groups"):
        grpo.load_grpo_config(CONFIG, output_dir=str(tmp_path), share_prompt_prefix=True,
                              num_generations=4, per_device_train_batch_size=2,
                              steps_per_generation=4, gradient_accumulation_steps=4)  # fmt: skip
