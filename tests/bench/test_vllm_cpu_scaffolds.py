"""The vLLM CPU lane's scaffolds check finds a server-side cap on reply length.

Issue 53: the lane served SmolLM2 with ``--override-generation-config '{"max_new_tokens": 128}'``
meant as a default; vLLM takes it as a cap on every request (``get_max_tokens`` in
``vllm/entrypoints/serve/utils/api_utils.py`` takes the minimum with the request's
``max_tokens``), so the searches asked 512 tokens and every long reply stopped at 128."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace

from inspect_ai.event import ModelEvent
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage

from tests.bench import bench_script

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "vllm_cpu" / "scaffolds.py"


def scaffolds() -> ModuleType:
    return bench_script("lane_scaffolds", SCRIPT)


def reply(asked: int, prompt: int, out: int, stop: str) -> ModelEvent:
    output = ModelOutput.from_content("smollm2", "x", stop_reason=stop)  # type: ignore[arg-type]
    output.usage = ModelUsage(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out)
    return ModelEvent(
        model="smollm2", input=[], tools=[], tool_choice="none",
        config=GenerateConfig(max_tokens=asked), output=output,
    )  # fmt: skip


def test_a_reply_cut_below_its_request_is_found():
    sample = SimpleNamespace(events=[reply(512, 900, 128, "max_tokens")])
    assert scaffolds().capped_replies([sample], context=8192) == ["128 of 512 tokens"]


def test_replies_that_end_as_asked_pass():
    samples = [
        SimpleNamespace(events=[reply(512, 900, 512, "max_tokens")]),  # the request's own cap
        SimpleNamespace(events=[reply(512, 900, 40, "stop")]),  # ended by itself
        SimpleNamespace(events=[reply(512, 8000, 192, "max_tokens")]),  # the context is full
    ]
    assert scaffolds().capped_replies(samples, context=8192) == []
