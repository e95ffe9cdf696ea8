"""The API weight-sync mode's wiring: what it refuses at start, how the run file selects it, and
how it talks to a server (the real server runs in the vLLM CPU lane, tests/bench/test_vllm_cpu_lane.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
import httpx

from sandmle.errors import SandmleError
from sandmle.specs.training import GenerationServer
from sandmle.training.grpo import build_trainer, load_grpo_config
from sandmle.training.weight_sync import ServerClient, ServerEngine

ROOT = Path(__file__).resolve().parents[2]
TINY_CPU = ROOT / "sandmle" / "configs" / "train" / "tiny-cpu.yaml"


@pytest.mark.parametrize(
    ("mode", "how"), [("colocate", "repacked CPU kernels"), ("server", "NCCL")]
)
def test_trl_vllm_modes_on_cpu_are_refused_at_start_naming_the_api_mode(
    mode: str, how: str, tmp_path: Path
) -> None:
    config = load_grpo_config(TINY_CPU, output_dir=str(tmp_path), use_vllm=True, vllm_mode=mode)
    with pytest.raises(SandmleError) as refused:
        build_trainer(config)
    message = str(refused.value)
    assert "\n" not in message and how in message and "generation_server" in message
    assert not (tmp_path / "tiny-model").exists()  # refused before any model was built


def test_generation_server_with_trl_vllm_is_refused(tmp_path: Path) -> None:
    config = load_grpo_config(TINY_CPU, output_dir=str(tmp_path), use_vllm=True)
    config.generation_server = GenerationServer()
    with pytest.raises(SandmleError, match="set training.use_vllm: false"):
        build_trainer(config)


def test_the_run_file_selects_the_server_and_its_sync(tmp_path: Path) -> None:
    run = tmp_path / "run.yaml"
    run.write_text(
        f"base: {TINY_CPU}\ngeneration_server:\n  url: http://10.0.0.5:8000\n  weight_sync: reload\n"
    )
    config = load_grpo_config(run, output_dir=str(tmp_path))
    assert config.generation_server == GenerationServer(url="http://10.0.0.5:8000")
    assert config.to_dict()["generation_server"]["weight_sync"] == "reload"
    run.write_text(f"base: {TINY_CPU}\ngeneration_server:\n  weight_sync: nccl\n")
    with pytest.raises(SandmleError, match="generation_server.weight_sync"):
        load_grpo_config(run, output_dir=str(tmp_path))


# The shape of vllm-cpu 0.32.0's /v1/completions answer with logprobs=0 and return_token_ids
# (recorded from `curl .../v1/completions` against SmolLM2 on this machine, 2026-12-01).
def completion(index: int, ids: list[int]) -> dict:
    return {
        "index": index,
        "text": "...",
        "token_ids": ids,
        "logprobs": {
            "token_logprobs": [-0.5 - i for i in range(len(ids))],
            "tokens": ["x"] * len(ids),
        },
        "finish_reason": "length",
    }


def test_the_engine_sends_token_ids_and_cuts_each_sample_at_its_end(tmp_path: Path) -> None:
    sent: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "tiny"}]})
        body = json.loads(request.content)
        sent.append(body)
        # answered out of order: the engine puts them back in prompt order
        return httpx.Response(
            200, json={"choices": [completion(1, [7, 8, 9]), completion(0, [5, 2, 6])]}
        )

    client = ServerClient(GenerationServer(url="http://server"), httpx.MockTransport(answer))
    engine = ServerEngine(client, eos=2, temperature=0.7, top_p=0.9)
    samples = engine([([1, 2, 3], 3), ([4], 2)])
    assert samples == [([5, 2], [-0.5, -1.5]), ([7, 8], [-0.5, -1.5])]
    (body,) = sent
    assert body["prompt"] == [[1, 2, 3], [4]] and body["max_tokens"] == 3
    assert (body["model"], body["logprobs"], body["return_token_ids"]) == ("tiny", 0, True)
    assert (body["temperature"], body["top_p"]) == (0.7, 0.9)


def test_a_server_error_is_loud(tmp_path: Path) -> None:
    client = ServerClient(
        GenerationServer(url="http://server"),
        httpx.MockTransport(lambda r: httpx.Response(404, text="Not Found")),
    )
    with pytest.raises(SandmleError, match=r"/collective_rpc: HTTP 404: Not Found"):
        client.reload(tmp_path)
