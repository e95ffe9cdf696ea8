"""A tiny Qwen2-style model built locally (no hub): for tests, benches and the CPU config.

Byte-level BPE trained on a few lines of agent-like text, the chat tokens, and a chat
template that renders tools, tool calls and tool results the Hermes/Qwen way, with
``{% generation %}`` markers so SFT can train on assistant tokens only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sandmle.harness.chat_template import HERMES_TEMPLATE

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

TINY_MODEL = "tiny"
"""The ``model:`` value that means "build the tiny model" (into ``<output_dir>/tiny-model``)."""
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


def build_tokenizer(vocab_size: int = 512) -> PreTrainedTokenizerFast:
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
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(out: Path, layers: int = 2, hidden: int = 32, seed: int = 0) -> Path:
    """Write a random tiny Qwen2 causal LM with its tokenizer to ``out`` (a plain HF dir)."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    tokenizer = build_tokenizer()
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
"""What ``warm_start`` teaches: a reasoning block, then a word; no token repeats (nor the
prompt's last one), so even a two-layer model learns it from the previous token alone."""


def warm_start(
    folder: Path,
    prompt_ids: list[int],
    turn: str = WARM_TURN,
    until: float = 0.4,
    max_steps: int = 80,
    lr: float = 2e-2,
) -> float:
    """Warm-start the model in place after ``prompt_ids`` (an episode's first prompt) so that
    it opens a turn there with ``turn``'s reasoning block with probability about ``until``:
    a policy whose format reward varies from the first step, with room for GRPO to raise it.

    First it learns ``turn`` until it opens with it 8 times in 10; then only the first token
    is pulled toward the turn without the block, until the block's probability drops to
    ``until`` (the rest of the turn stays learned). Returns the final probability.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    turn_ids = tokenizer(turn, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    plain = tokenizer(turn.split(">", 1)[1], add_special_tokens=False)["input_ids"][0]
    ids = torch.tensor([prompt_ids + turn_ids])
    whole = ids.clone()
    whole[0, : len(prompt_ids)] = -100  # learn the turn, not the prompt
    first = torch.full_like(ids, -100)
    first[0, len(prompt_ids)] = plain  # only the turn's first token, toward no block
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()

    def opens_with_block() -> float:
        with torch.no_grad():
            logits = model(input_ids=ids[:, : len(prompt_ids)]).logits[0, -1].float()
        return torch.softmax(logits, dim=-1)[turn_ids[0]].item()

    phases = ((whole, lr, lambda p: p >= 0.8), (first, lr / 10, lambda p: p <= until))
    for labels, step_size, done in phases:
        for group in optimizer.param_groups:
            group["lr"] = step_size  # the second phase moves one token: small steps
        for _ in range(max_steps):
            model(input_ids=ids, labels=labels).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if done(probability := opens_with_block()):
                break
    model.save_pretrained(folder)
    return probability
