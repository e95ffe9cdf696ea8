"""GRPO's log-probabilities with each group's prompt run once (``share_prompt_prefix``).

The episodes of a GRPO group start from one prompt: in cpu-smollm2 a ~1,800-token task prompt
and a ~32-token call, so the policy's forward and backward and the reference model's forward
run the same prompt once per episode, four times a group, for log-probabilities that only the
call's tokens carry. Here a micro-batch's rows are grouped by their prompt; each prompt runs
once, and its rows' completions run on its key/value cache, repeated for each row. Causal
attention makes this the same computation (a completion token sees the same keys and values;
rotary positions enter attention only as differences, so the left padding TRL adds shifts
nothing), and backward hands the prompt's activations the sum of its rows' gradients, as the
per-row passes add them up. A test compares log-probabilities, entropies and every gradient
with TRL's own path; ``bench/training_lm_head.py`` measures both.

TRL shuffles the rows of a generation batch before cutting it into micro-batches; with the
prompt shared, the shuffle moves whole groups (one optimizer update a generation batch, as
sandmle's profiles train, sums the same gradients in any order).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from trl import GRPOTrainer
from trl.trainer import grpo_trainer as trl_grpo

Rows = list[int]


def prompt_groups(prompts: torch.Tensor, masks: torch.Tensor) -> list[Rows]:
    """Rows with the same prompt (left-padded ``prompts``, padding dropped), in first-seen
    order; a row whose prompt has a gap, or is shorter than two tokens, is alone."""
    groups: dict[tuple[int, ...], Rows] = {}
    alone: list[Rows] = []
    for row in range(prompts.size(0)):
        kept = masks[row].bool().nonzero().flatten()
        if kept.numel() < 2 or int(kept[0]) != masks.size(1) - kept.numel():
            alone.append([row])  # a prompt must run up to where the completion starts
            continue
        groups.setdefault(tuple(prompts[row, kept].tolist()), []).append(row)
    return [*groups.values(), *alone]


def _cache_keyword(model: Any) -> str:
    """What the model's forward calls its key/value cache (transformers renamed it)."""
    forward = type(model).forward
    names = inspect.signature(forward).parameters
    return "cache" if "cache" in names else "past_key_values"


def _plain(model: Any) -> Any:
    """The causal LM under a PEFT wrapper, if any (its config builds the cache)."""
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model


def shared_prefix_logps(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    keep: int,
    rows: Rows,
    autocast: Callable[[], contextlib.AbstractContextManager],
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probabilities (and entropies, when the fused head makes them) of the last ``keep``
    tokens of ``rows``, which share one prompt: the prompt runs once, the completions on its
    cache. ``model`` carries TRL's fused LM head."""
    from transformers import DynamicCache

    first = rows[0]
    prompt = input_ids[first, :-keep][attention_mask[first, :-keep].bool()]
    n, length = len(rows), prompt.numel()
    cache = DynamicCache(config=_plain(model).config)
    keyword = _cache_keyword(_plain(model))
    head = prompt[:-1].unsqueeze(0)
    with autocast():  # the prompt but its last token: the completion's first is scored from it
        model(input_ids=head, attention_mask=torch.ones_like(head), use_cache=True,
              logits_to_keep=1, **{keyword: cache})  # fmt: skip
    cache.batch_repeat_interleave(n)
    completion_mask = attention_mask[rows, -keep:]
    tail = torch.cat([prompt[-1:].expand(n, 1), input_ids[rows, -keep:]], dim=1)
    labels = tail.masked_fill(torch.cat([completion_mask[:, :1], completion_mask], 1) == 0, -100)
    labels[:, 0] = -100
    mask = torch.cat([completion_mask.new_ones(n, length), completion_mask], dim=1)
    with autocast():
        out = model(input_ids=tail, attention_mask=mask, labels=labels, fused_lm_head=True,
                    **{keyword: cache})  # fmt: skip
    return out.log_probs[:, -keep:], out.entropy[:, -keep:] if out.entropy is not None else None


def group_order(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor) -> torch.Tensor:
    """A random order of the rows in which rows with the same prompt stay together (the
    groups shuffled, each group's rows in their order)."""
    groups = prompt_groups(prompt_ids, prompt_mask)
    return torch.tensor([row for g in torch.randperm(len(groups)).tolist() for row in groups[g]])


def shuffle_groups_whole(batch: dict[str, Any], fallback: Callable) -> dict[str, Any]:
    """TRL's generation-batch shuffle (``fallback``), but moving whole prompt groups."""
    if batch.get("prompt_ids") is None or batch.get("prompt_mask") is None:
        return fallback(batch)
    order = group_order(batch["prompt_ids"], batch["prompt_mask"])

    def permute(value: Any) -> Any:
        if value is None or (isinstance(value, torch.Tensor) and value.ndim == 0):
            return value
        if isinstance(value, torch.Tensor):
            return value[order]
        return [value[i] for i in order]

    return {key: permute(value) for key, value in batch.items()}


@contextlib.contextmanager
def groups_kept_whole() -> Iterator[None]:
    """While it is open, TRL's generation-batch shuffle moves whole prompt groups."""
    original = trl_grpo.shuffle_sequence_dict
    trl_grpo.shuffle_sequence_dict = functools.partial(shuffle_groups_whole, fallback=original)
    try:
        yield
    finally:
        trl_grpo.shuffle_sequence_dict = original


class PrefixSharingGRPOTrainer(GRPOTrainer):
    """TRL's ``GRPOTrainer``; with ``args.share_prompt_prefix``, rows that share a prompt
    run it once (see the module)."""

    def _prepare_inputs(self, generation_batch: Any) -> Any:
        if not self._sharing():
            return super()._prepare_inputs(generation_batch)
        with groups_kept_whole():
            return super()._prepare_inputs(generation_batch)

    def _sharing(self) -> bool:
        return bool(getattr(self.args, "share_prompt_prefix", False))

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **extra: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        def trl(ids: torch.Tensor, mask: torch.Tensor) -> Any:
            return super(PrefixSharingGRPOTrainer, self)._get_per_token_logps_and_entropies(
                model, ids, mask, logits_to_keep, batch_size, compute_entropy, compute_aux_loss,
                **extra,
            )  # fmt: skip

        if not self._sharing() or not shareable(model, self, compute_aux_loss, extra):
            return trl(input_ids, attention_mask)
        groups = prompt_groups(input_ids[:, :-logits_to_keep], attention_mask[:, :-logits_to_keep])
        if all(len(g) == 1 for g in groups):
            return trl(input_ids, attention_mask)
        size = batch_size or input_ids.size(0)
        parts: list[tuple[Rows, torch.Tensor, torch.Tensor | None]] = []
        singles = [g[0] for g in groups if len(g) == 1]
        if singles:
            logps, entropies, _ = trl(input_ids[singles], attention_mask[singles])
            parts.append((singles, logps, entropies))
        for group in (g for g in groups if len(g) > 1):
            for start in range(0, len(group), size):  # at most batch_size rows at once, as TRL
                chunk = group[start : start + size]
                logps, entropies = shared_prefix_logps(
                    model, input_ids, attention_mask, logits_to_keep, chunk,
                    self.accelerator.autocast,
                )  # fmt: skip
                parts.append((chunk, logps, entropies))
        return (*_in_row_order(parts, compute_entropy), None)


def shareable(model: Any, trainer: Any, aux_loss: bool, extra: dict[str, Any]) -> bool:
    """Text-only rows on a model that is not wrapped for several processes (DDP's hooks
    expect one forward a backward) and keeps activations (checkpointing drops the cache)."""
    if aux_loss or any(v is not None for v in extra.values()):
        return False
    if trainer.accelerator.unwrap_model(model) is not model:
        return False
    plain = _plain(model)
    checkpointing = getattr(plain, "is_activation_checkpointing", None)
    if checkpointing is None:  # transformers before the rename
        checkpointing = getattr(plain, "is_gradient_checkpointing", False)
    return not checkpointing


def _in_row_order(
    parts: Sequence[tuple[Rows, torch.Tensor, torch.Tensor | None]], entropy: bool
) -> tuple[torch.Tensor, torch.Tensor | None]:
    rows = [row for part in parts for row in part[0]]
    back = torch.empty(len(rows), dtype=torch.long)
    back[torch.tensor(rows)] = torch.arange(len(rows))
    logps = torch.cat([p[1] for p in parts])[back]
    if not entropy:
        return logps, None
    entropies = [p[2] for p in parts]
    assert all(e is not None for e in entropies)
    return logps, torch.cat(entropies)[back]  # type: ignore[arg-type]


def scorer(share: bool = True) -> PrefixSharingGRPOTrainer:
    """A trainer holding only what scoring needs (one process, no autocast), to score rows
    outside a training run: ``scorer()._get_per_token_logps_and_entropies(model, ...)``
    shares prompts, ``GRPOTrainer._get_per_token_logps_and_entropies(scorer(), model, ...)``
    is TRL's path (bench/training_shared_prefix.py, the tests)."""
    from types import SimpleNamespace

    trainer = PrefixSharingGRPOTrainer.__new__(PrefixSharingGRPOTrainer)
    trainer.accelerator = SimpleNamespace(
        autocast=contextlib.nullcontext, unwrap_model=lambda model: model, is_main_process=True
    )
    trainer.args = SimpleNamespace(share_prompt_prefix=share)  # type: ignore[assignment]
    return trainer
