"""Budget profiles: named sets of task limits, chosen with ``-T profile=<name>``.

A profile is plain data, the values of ``TaskLimits`` fields; any ``-T`` value given
explicitly overrides the profile's. ``micro`` is the default (small synthetic tasks run
in seconds); ``mle-bench`` is MLE-bench's own budget: 24 h and 500 agent steps per
competition, a 4 GB ``/dev/shm``, 4 CPUs, the host's GPUs and an ML stack (MLE-bench's
``environment/config/container_configs/default.json`` and its agents' ``TIME_LIMIT_SECS``
and ``STEP_LIMIT``).
"""

from __future__ import annotations

from typing import Any

from sandmle.errors import SandmleError
from sandmle.harness.sandbox.limits import DEFAULT_COMMAND_TIMEOUT_S

DEFAULT_PROFILE = "micro"

MLE_BENCH_STEPS = 500
"""MLE-bench's step budget; a step is one assistant turn plus its tool answer."""

PROFILES: dict[str, dict[str, Any]] = {
    "micro": {
        "time_limit": 1800,
        "message_limit": 100,
        "command_timeout": DEFAULT_COMMAND_TIMEOUT_S,
        "memory_mb": 8192,
        "max_processes": 256,
        "disk_mb": 4096,
        "cpu_time_s": 3600,
        "file_size_mb": 2048,
        "shm_mb": 256,
        "cpus": None,
        "gpus": 0,
        "threads": 1,
        "agent_extras": (),
    },
    "mle-bench": {
        "time_limit": 24 * 3600,
        # 500 steps of two messages each, plus the system and task messages.
        "message_limit": 2 * MLE_BENCH_STEPS + 2,
        "command_timeout": 9 * 3600,
        "memory_mb": 65536,
        "max_processes": 1024,
        "disk_mb": 102400,
        # RLIMIT_CPU counts every thread of a process: 24 h on all 4 cores.
        "cpu_time_s": 4 * 24 * 3600,
        "file_size_mb": 65536,
        "shm_mb": 4096,
        "cpus": 4.0,
        "gpus": -1,
        "threads": 4,
        # MLE-bench's agent image carries a full ML stack; these are the agent runtime's
        # tested extras beyond numpy/pandas/scikit-learn/scipy/pillow.
        "agent_extras": ("lightgbm", "xgboost", "torch"),
    },
}
"""Every profile, by name. Keys are ``TaskLimits`` fields (checked by the tests)."""


def profile_values(name: str) -> dict[str, Any]:
    """The limits of profile ``name``; an unknown name is an error listing the known ones."""
    try:
        return dict(PROFILES[name])
    except KeyError:
        known = ", ".join(PROFILES)
        raise SandmleError(f"unknown profile {name!r}; known: {known}") from None
