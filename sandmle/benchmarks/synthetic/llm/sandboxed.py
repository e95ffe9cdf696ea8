"""Run model-written data-generation code in the ``bwrap`` sandbox, never on the host.

The code runs as ``python generate.py`` in the sandbox's own ``/home/agent``, with no network
and no host paths visible, and writes its files under ``out/``. We copy them back with
``read_file``; nothing the code does touches the host's folders.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from inspect_ai.util import SandboxEnvironment

from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment, SandboxLimits

SCRIPT = "generate.py"
OUTPUT_DIR = "out"
DEFAULT_TIMEOUT_S = 120
MAX_FILES = 5000
MAX_TOTAL_BYTES = 64 * 1024**2
_TASK_NAME = "sandmle-synth-llm"


class GenerationCodeError(ValueError):
    """The code failed, or wrote more than a micro task may hold; the message is for the model."""


def run_generation_code(
    code: str, timeout_s: int = DEFAULT_TIMEOUT_S, base_dir: Path | None = None
) -> dict[str, bytes]:
    """Run ``code`` in a fresh sandbox; the files it wrote under ``out/``, by relative path."""
    limits = SandboxLimits(
        command_timeout_s=timeout_s, cpu_time_s=max(timeout_s, 60), poll_interval_s=0.1
    )
    config = BwrapConfig(limits=limits, base_dir=base_dir)
    return asyncio.run(_run(code, config))


async def _run(code: str, config: BwrapConfig) -> dict[str, bytes]:
    envs = await BwrapSandboxEnvironment.sample_init(_TASK_NAME, config, {})
    try:
        env = envs["default"]
        await env.write_file(SCRIPT, code)
        await env.exec(["mkdir", "-p", OUTPUT_DIR])
        result = await env.exec(["python", SCRIPT])
        if not result.success:
            raise GenerationCodeError(
                f"{SCRIPT} exited with code {result.returncode}:\n{_tail(result.stderr)}"
            )
        return await _collect(env)
    finally:
        await BwrapSandboxEnvironment.sample_cleanup(_TASK_NAME, config, envs, False)


async def _collect(env: SandboxEnvironment) -> dict[str, bytes]:
    listing = await env.exec(["find", OUTPUT_DIR, "-type", "f"])
    paths = sorted(line for line in listing.stdout.splitlines() if line.strip())
    if len(paths) > MAX_FILES:
        raise GenerationCodeError(f"{SCRIPT} wrote {len(paths)} files; at most {MAX_FILES}")
    files: dict[str, bytes] = {}
    for path in paths:
        files[path.removeprefix(OUTPUT_DIR + "/")] = await env.read_file(path, text=False)
    total = sum(len(data) for data in files.values())
    if total > MAX_TOTAL_BYTES:
        raise GenerationCodeError(f"{SCRIPT} wrote {total} bytes; at most {MAX_TOTAL_BYTES}")
    return files


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
