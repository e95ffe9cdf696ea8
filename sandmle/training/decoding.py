"""In-process sampling on the live training weights (``TransformersEngine``), without ``generate``.

Three properties HF's ``model.generate`` does not give together, each needed by GRPO on CPU:

- **Seeded per request.** Every request carries a key (run seed, step, rank, episode, turn:
  never a clock or an arrival order) and is sampled with its own ``torch.Generator`` seeded
  from it, so its tokens do not depend on which other requests share the call or in which
  order they came. ``generate`` draws every row from the global RNG, so the batch the timing
  made changed the rollout.
- **KV cache reused across turns.** The past key/values of each finished turn are kept, looked
  up by token prefix (the next turn's context starts with the previous context and sampled
  tokens; where it does not, e.g. an inserted template opening, the longest common prefix is
  reused and the rest prefilled), so a turn prefills only the environment's new tokens. The
  store is bounded in bytes (least recently used first out) and dropped whenever the weights
  change (an optimizer step bumps the parameters' version counters) or ``clear()`` is called.
- **Batched decoding.** Each request is prefilled alone (batch of one, no padding); then all
  requests of the call decode together, one forward per token over their left-padded, stacked
  caches, each row still drawing from its own generator. A finished row leaves the batch.

Logprobs are of the sampled token under the temperature-scaled distribution (before top-p),
which is what TRL compares against. transformers' continuous batching (``generate_batch``)
was considered: its sampler draws from the global RNG (``model_runner.py``'s
``torch.multinomial`` without a generator), so it cannot be made batch-independent.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

Request = tuple[list[int], int]
"""A context (token ids) and the most tokens to sample after it."""
Sample = tuple[list[int], list[float]]
"""Sampled token ids and their logprobs."""


def request_seed(key: str) -> int:
    """The generator seed of a request key (63 bits of its SHA-256: any string, no collisions
    between nearby keys).

    >>> request_seed("seed-0/step-0/rank-0/task#1/turn-0") == request_seed("seed-0/step-0/rank-0/task#1/turn-0")
    True
    >>> request_seed("a") != request_seed("b") and 0 <= request_seed("a") < 2**63
    True
    """
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists.

    >>> common_prefix([1, 2, 3], [1, 2, 4, 5]), common_prefix([], [1]), common_prefix([1], [1])
    (2, 0, 1)
    """
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if a[:mid] == b[:mid] else (lo, mid)
    return lo


@dataclass
class _Entry:
    tokens: list[int]
    """The tokens whose key/values ``layers`` hold (a turn's context and all but its last
    sampled token, which was never fed)."""
    layers: list[tuple[Any, Any]]
    """Per layer (keys, values), each ``[1, heads, len(tokens), head_dim]``."""

    @property
    def nbytes(self) -> int:
        return sum(k.nbytes + v.nbytes for k, v in self.layers)


@dataclass
class PrefixCache:
    """Past key/values of earlier turns, found by token prefix, at most ``max_bytes`` in all."""

    max_bytes: int
    entries: list[_Entry] = field(default_factory=list)
    """Least recently used first."""

    def lookup(self, context: list[int]) -> tuple[int, _Entry | None]:
        """The entry sharing the longest prefix with ``context`` and how many tokens of it to
        reuse (at most ``len(context) - 1``: the last token is fed to get the next logits)."""
        best, best_n = None, 0
        for entry in self.entries:
            n = common_prefix(entry.tokens, context)
            if n > best_n:
                best, best_n = entry, n
        if best is None:
            return 0, None
        self.entries.remove(best)
        self.entries.append(best)
        return min(best_n, len(context) - 1), best

    def store(self, entry: _Entry) -> None:
        """Keep ``entry``; drop entries it extends (any context they serve it serves as well),
        then the least recently used while over budget."""
        self.entries = [e for e in self.entries if e.tokens != entry.tokens[: len(e.tokens)]]
        self.entries.append(entry)
        while self.entries and self.nbytes > self.max_bytes:
            self.entries.pop(0)

    @property
    def nbytes(self) -> int:
        return sum(e.nbytes for e in self.entries)

    def clear(self) -> None:
        self.entries = []


@dataclass
class EngineStats:
    """Token counts since the engine was made: how much prefill the cache saved."""

    prefilled: int = 0
    """Context tokens fed to the model in prefill."""
    reused: int = 0
    """Context tokens whose key/values came from the cache instead."""
    sampled: int = 0
    decode_steps: int = 0
    """Batched forwards in decoding (each one token for every row still running)."""


@dataclass
class _Row:
    """One request in flight."""

    limit: int
    generator: Any
    kv: list[tuple[Any, Any]]
    """Per layer (keys, values) ``[1, heads, len, head_dim]`` after prefill."""
    tokens: list[int]
    """Tokens whose key/values are in ``kv`` (grows by the fed sampled tokens)."""
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)


class TransformersEngine:
    """Samples on the training model itself (no copy): see the module docstring."""

    keyed = True
    """``BatchingGenerator`` passes each request's key."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        temperature: float = 1.0,
        top_p: float = 1.0,
        threads: int | None = 1,
        cache_mb: int = 2048,
    ):
        self.model, self.tokenizer = model, tokenizer
        self.temperature, self.top_p = temperature, top_p
        self.threads = threads
        """Intra-op threads while generating (None: torch's setting). One is faster on a
        loaded CPU: decoding is a chain of small matmuls, and more threads only contend."""
        self.cache = PrefixCache(cache_mb * 2**20)
        """Earlier turns' key/values; ``cache_mb=0`` prefills every turn in full."""
        self.stats = EngineStats()
        self._stop = threading.Event()
        self._weights: tuple[int, ...] | None = None

    def cancel(self) -> None:
        """Stop the running call after its current token (called from another thread)."""
        self._stop.set()

    def clear(self) -> None:
        """Drop every cached turn (the rollout is over, or the weights changed)."""
        self.cache.clear()

    def __call__(self, requests: list[Request], keys: list[str] | None = None) -> list[Sample]:
        """Sample every request; ``keys`` seed them (default: their index in this call)."""
        import torch

        keys = keys if keys is not None else [f"request-{i}" for i in range(len(requests))]
        self._stop.clear()
        was_training, threads = self.model.training, torch.get_num_threads()
        self.model.eval()
        if self.threads is not None:
            torch.set_num_threads(self.threads)
        try:
            with torch.no_grad():
                self._drop_stale_cache()
                rows = [self._prefill(c, n, k) for (c, n), k in zip(requests, keys, strict=True)]
                self._decode([r for r in rows if not self._done(r)])
        finally:
            torch.set_num_threads(threads)
            self.model.train(was_training)
        if self.cache.max_bytes:
            for row in rows:
                self.cache.store(_Entry(row.tokens, row.kv))
        return [(r.ids, r.logprobs) for r in rows]

    def _version(self) -> tuple[int, ...]:
        """The parameters' in-place version counters: an optimizer step changes them."""
        return tuple(p._version for p in self.model.parameters())

    def _drop_stale_cache(self) -> None:
        if self._weights is not None and self._version() != self._weights:
            self.cache.clear()  # cached key/values were computed with other weights
        self._weights = self._version()

    def _prefill(self, context: list[int], limit: int, key: str) -> _Row:
        """Feed ``context`` (after the cached prefix) alone and draw its first token."""
        import torch
        from transformers import DynamicCache

        reuse, entry = self.cache.lookup(context) if self.cache.max_bytes else (0, None)
        data = None
        if entry is not None and reuse > 0:
            data = [(k[:, :, :reuse], v[:, :, :reuse]) for k, v in entry.layers]
        past = DynamicCache(ddp_cache_data=data, config=self.model.config)
        reuse = reuse if data is not None else 0
        device = self.model.device
        out = self.model(
            input_ids=torch.tensor([context[reuse:]], device=device),
            position_ids=torch.arange(reuse, len(context), device=device)[None],
            cache=past,
            use_cache=True,
            logits_to_keep=1,
        )
        self.stats.prefilled += len(context) - reuse
        self.stats.reused += reuse
        generator = torch.Generator(device=device).manual_seed(request_seed(key))
        kv = _layers(past)
        row = _Row(limit=limit, generator=generator, kv=kv, tokens=list(context))
        if limit > 0:
            self._take(row, out.logits[0, -1])
        return row

    def _take(self, row: _Row, logits: Any) -> None:
        """Draw the next token of ``row`` with its own generator."""
        token, logprob = draw(logits, row.generator, self.temperature, self.top_p, self._suppress())
        row.ids.append(token)
        row.logprobs.append(logprob)
        self.stats.sampled += 1

    def _suppress(self) -> list[int]:
        """``generation_config.suppress_tokens``: never sampled, as under ``generate``."""
        return list(getattr(self.model.generation_config, "suppress_tokens", None) or [])

    def _done(self, row: _Row) -> bool:
        eos = self.tokenizer.eos_token_id
        return len(row.ids) >= row.limit or (bool(row.ids) and row.ids[-1] == eos)

    def _decode(self, rows: list[_Row]) -> None:
        """Decode ``rows`` together, one forward per token, until each is done (or cancelled).

        The rows' caches are stacked once, left-padded to the longest; when a row finishes, the
        caches are split back and the rest restacked without it.
        """
        while rows and not self._stop.is_set():
            self._decode_stacked(rows)
            rows = [r for r in rows if not self._done(r)]

    def _decode_stacked(self, rows: list[_Row]) -> None:
        import torch
        from transformers import DynamicCache

        device = self.model.device
        width = max(len(r.tokens) for r in rows)
        pads = [width - len(r.tokens) for r in rows]
        past = DynamicCache(ddp_cache_data=_stack(rows, pads), config=self.model.config)
        mask = torch.tensor([[0] * p + [1] * (width - p) for p in pads], device=device)
        while True:
            mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=1)
            out = self.model(
                input_ids=torch.tensor([[r.ids[-1]] for r in rows], device=device),
                attention_mask=mask,
                position_ids=torch.tensor([[len(r.tokens)] for r in rows], device=device),
                cache=past,
                use_cache=True,
            )
            self.stats.decode_steps += 1
            for i, row in enumerate(rows):
                row.tokens.append(row.ids[-1])
                self._take(row, out.logits[i, -1])
            if self._stop.is_set() or any(self._done(r) for r in rows):
                break
        stacked = _layers(past)
        for i, (row, pad) in enumerate(zip(rows, pads, strict=True)):
            row.kv = [
                (k[i : i + 1, :, pad:].clone(), v[i : i + 1, :, pad:].clone()) for k, v in stacked
            ]


def _layers(cache: Any) -> list[tuple[Any, Any]]:
    """Per layer (keys, values) of a cache of full-attention layers; anything else (sliding
    windows, linear attention) keeps other state, which slicing by position would corrupt."""
    from transformers.cache_utils import DynamicLayer

    layers = []
    for layer in cache.layers:
        if not isinstance(layer, DynamicLayer) or layer.is_sliding:
            raise RuntimeError(
                f"the in-process engine supports full-attention caches only, not {type(layer).__name__}"
            )
        layers.append((layer.keys, layer.values))
    return layers


def _stack(rows: list[_Row], pads: list[int]) -> list[tuple[Any, Any]]:
    """Per layer, the rows' (keys, values) left-padded with zeros and stacked on the batch."""
    import torch

    def padded(t: Any, pad: int) -> Any:
        return torch.nn.functional.pad(t, (0, 0, pad, 0)) if pad else t

    stacked = []
    for layer in range(len(rows[0].kv)):
        keys = [padded(r.kv[layer][0], p) for r, p in zip(rows, pads, strict=True)]
        values = [padded(r.kv[layer][1], p) for r, p in zip(rows, pads, strict=True)]
        stacked.append((torch.cat(keys), torch.cat(values)))
    return stacked


def draw(
    logits: Any, generator: Any, temperature: float, top_p: float, suppress: list[int]
) -> tuple[int, float]:
    """One token from ``logits`` (``[vocab]``) as ``generate`` samples (suppressed tokens out,
    temperature, top-p), drawn with ``generator``; its logprob under the temperature-scaled
    distribution (TRL's reference)."""
    import torch

    logits = logits.float()
    allowed = logits.clone()
    if suppress:
        allowed[suppress] = float("-inf")
    if temperature <= 0:  # greedy
        token = int(torch.argmax(allowed))
        return token, float(torch.log_softmax(logits, -1)[token])
    probs = torch.softmax(allowed / temperature, -1)
    if top_p < 1.0:  # the smallest set of most likely tokens holding top_p of the mass
        sorted_probs, order = torch.sort(probs)
        drop = torch.cumsum(sorted_probs, -1) <= 1 - top_p
        drop[-1] = False
        probs[order[drop]] = 0.0
    token = int(torch.multinomial(probs, 1, generator=generator))
    return token, float(torch.log_softmax(logits / temperature, -1)[token])
