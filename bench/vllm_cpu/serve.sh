# Starting, probing and stopping the lane's servers (sourced by bench/vllm_cpu.sh and by
# tests/bench/test_vllm_cpu_keys.py, which drives these functions against a fake server).
#
# Keys: every server gets exactly the API key the lane chose for it (--api-key KEY, or none)
# and nothing inherited: vLLM also reads VLLM_API_KEY from its environment, and a stage that
# exported one for its clients once made the next server demand it from a probe that sent
# none (401 on every probe until a 900 s timeout). Clients and probes use the key of the
# server that is up (use_key exports it for sandmle's clients; probe_status sends it).
#
# Needs: curl; PORT (the servers' port). Sets SERVER_PID, SERVER_KEY, SERVER_NAME.

SERVER_PID=""
SERVER_KEY=""
SERVER_NAME=""

die() {
  echo "error: $*" >&2
  exit 2
}

new_key() { # a fresh key per server: a client holding another server's key is refused
  echo "sandmle-lane-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
}

use_key() { # KEY: the key sandmle's clients send (Inspect's vllm/ and openai-api/local/, the
  # weight sync's ServerClient, bench/engine_throughput.py all read these)
  export VLLM_API_KEY="$1" LOCAL_API_KEY="$1"
}

probe_status() { # URL KEY: the HTTP status of GET URL/v1/models with KEY ("000": no answer)
  local url="$1" key="$2" auth=()
  [[ -n "$key" ]] && auth=(-H "Authorization: Bearer $key")
  curl -s -o /dev/null -w '%{http_code}' --max-time 10 "${auth[@]}" "$url/v1/models" || true
}

launch_server() { # NAME KEY LOG CMD...: start CMD (+ --api-key KEY unless KEY is empty)
  # in its own process group (setsid: stop_server ends the engine and worker processes too,
  # which inherit the listening socket; a survivor would answer for the next server), with
  # no VLLM_API_KEY in its environment
  local name="$1" key="$2" log="$3"
  shift 3
  local args=("$@")
  [[ -n "$key" ]] && args+=(--api-key "$key")
  setsid env -u VLLM_API_KEY "${args[@]}" >"$log" 2>&1 &
  SERVER_PID=$!
  SERVER_KEY="$key"
  SERVER_NAME="$name"
}

wait_ready() { # URL KEY TIMEOUT LOG: until the server answers 200; a refusal of KEY ends it
  local url="$1" key="$2" timeout="$3" log="$4" start=$SECONDS code
  while true; do
    code="$(probe_status "$url" "$key")"
    case "$code" in
      200) return 0 ;;
      401 | 403)
        die "the server of $SERVER_NAME at $url refused the lane's probe ($code) sent with" \
          "key '${key:-<none>}'; the lane started it with key '${SERVER_KEY:-<none>}'" \
          "(VLLM_API_KEY here: '${VLLM_API_KEY-<unset>}'; see $log)"
        ;;
    esac
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server of $SERVER_NAME exited (see $log)"
    ((SECONDS - start < timeout)) || die "no answer from the server of $SERVER_NAME after $timeout s (last status $code; see $log)"
    sleep "${PROBE_INTERVAL:-2}"
  done
}

stop_server() { # the whole group, then until the port is free
  if [[ -n "$SERVER_PID" ]]; then
    kill -- "-$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    local deadline=$((SECONDS + 120))
    while curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$PORT/v1/models" && ((SECONDS < deadline)); do
      sleep 1
    done
  fi
}
