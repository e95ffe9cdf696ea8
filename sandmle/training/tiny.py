"""A tiny Qwen2-style model built locally (no hub): for tests, benches and the CPU config.

Byte-level BPE trained on a few lines of agent-like text, the chat tokens, and a chat
template that renders tools, tool calls and tool results the Hermes/Qwen way, with
``{% generation %}`` markers so SFT can train on assistant tokens only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sandmle.harness.chat_template import HERMES_TEMPLATE

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP_TOKENS = ["<think>", "</think>", "<tool_call>", "</tool_call>"]
"""Single tokens that stay in decoded text (not special), as in Qwen3's vocabulary: Inspect's
``hf/`` provider decodes with ``skip_special_tokens``, which would drop a special ``<tool_call>``."""
CHAT_TEMPLATE = HERMES_TEMPLATE
CORPUS = [
    "You are an expert machine learning engineer. Train a model and write submission.csv.",
    "import pandas as pd\ndf = pd.read_csv('/home/data/train.csv')\nprint(df.head())",
    'from sklearn.ensemble import RandomForestClassifier\nmodel.fit(X, y)\npred.to_csv("/home/submission/submission.csv", index=False)',
    '{"name": "bash", "arguments": {"cmd": "ls /home/data"}}',
    '{"name": "python", "arguments": {"code": "print(1)"}}',
    "Submission is valid. Score: 0.91234 (gold). Invalid submission: missing column id",
    "The competition description, data files and sample submission are in /home/data.",
]


def build_tokenizer(vocab_size: int = 512, corpus: Sequence[str] = ()) -> PreTrainedTokenizerFast:
    """The byte-level BPE tokenizer. With ``corpus`` (e.g. a task's rendered first prompt) it
    also learns those texts, merging across words, so they become a few long tokens: a model
    that reads one fixed prompt then costs little per step."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([*CORPUS, *corpus] * 4, trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(
    out: Path,
    layers: int = 2,
    hidden: int = 32,
    seed: int = 0,
    corpus: Sequence[str] = (),
    vocab_size: int = 512,
) -> Path:
    """Write a random tiny Qwen2 causal LM with its tokenizer to ``out`` (a plain HF dir);
    ``corpus`` and ``vocab_size`` go to ``build_tokenizer``."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    tokenizer = build_tokenizer(vocab_size, corpus)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=65536,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=True
    )
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


WARM_TURN = "<think>ok</think>done"
"""A turn with a reasoning block, then a word (what the vLLM CPU lane's tiny model learns)."""
SUBMIT_TURN = (
    '<tool_call>{"name": "bash", "arguments": {"command": '
    '"cp /home/data/s* /home/submission/submission.csv"}}</tool_call>'
)
"""One bash call that hands in the sample submission (the data's only ``s*`` file): a valid
submission (``valid_reward`` 1)."""
IDLE_TURN = '<tool_call>{"name": "bash", "arguments": {"command": "ls /home/data"}}</tool_call>'
"""The same call shape that only lists the data: no submission (``valid_reward`` 0)."""


def warm_start(
    folder: Path,
    prompt_ids: list[int],
    turns: tuple[str, str] = (SUBMIT_TURN, IDLE_TURN),
    share: float = 0.3,
    max_steps: int = 150,
    lr: float = 1e-2,
) -> dict[str, float]:
    """Warm-start the model in place after ``prompt_ids`` (an episode's first prompt) so that
    it writes ``turns[0]`` with probability about ``share`` and ``turns[1]`` otherwise: a
    policy whose groups mix both, with room for GRPO to raise the first.

    Both turns are learned by teacher forcing; where they part (the first token that differs),
    the target is the mix ``share`` / ``1 - share`` instead of one token, so the rest of each
    turn is learned as certain and the choice is made at that one token. Stops once every other
    token is at least 0.99 likely and the choice is within 0.03 of ``share``. Returns the
    choice's probability and the least likely other token's.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    eos = tokenizer.eos_token_id
    good, bad = (tokenizer(t, add_special_tokens=False)["input_ids"] + [eos] for t in turns)
    fork = next(i for i, (g, b) in enumerate(zip(good, bad, strict=False)) if g != b)
    width = len(prompt_ids) + max(len(good), len(bad))
    rows = [prompt_ids + t + [eos] * (width - len(prompt_ids) - len(t)) for t in (good, bad)]
    ids = torch.tensor(rows)
    labels = ids.clone()
    labels[:, : len(prompt_ids)] = -100
    labels[1, len(prompt_ids) + len(bad) :] = -100  # the shorter turn's padding
    weights = torch.ones_like(ids, dtype=torch.float)
    at = len(prompt_ids) + fork  # the position of the choice, in labels
    weights[0, at], weights[1, at] = share, 1 - share
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    figures = {"choice": 0.0, "least_other": 0.0}
    for _ in range(max_steps):
        logits = model(input_ids=ids).logits[:, :-1].float()
        target = labels[:, 1:]
        logp = torch.log_softmax(logits, -1).gather(-1, target.clamp(min=0).unsqueeze(-1))[..., 0]
        keep = target != -100
        loss = -(logp * weights[:, 1:] * keep).sum() / keep.sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        with torch.no_grad():
            probs = logp.exp()
            choice = probs[0, at - 1].item()
            others = keep.clone()
            others[:, at - 1] = False
            figures = {"choice": choice, "least_other": probs[others].min().item()}
        if figures["least_other"] >= 0.98 and abs(choice - share) <= 0.05:
            break
    model.save_pretrained(folder)
    return figures
