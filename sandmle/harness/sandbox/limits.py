"""Resource limits that every sandbox exec runs under."""

from pydantic import BaseModel, Field

DEFAULT_MEMORY_MB = 8192
DEFAULT_MAX_PROCESSES = 256
DEFAULT_CPU_TIME_S = 3600
DEFAULT_COMMAND_TIMEOUT_S = 600
"""Seconds per command, the one default: the micro profile's, ``TaskLimits``', the sandbox's,
and what a scaffold runs on a task that states none."""
DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024**2
DEFAULT_DISK_MB = 4096
DEFAULT_FILE_SIZE_MB = 2048
DEFAULT_SHM_MB = 256
DEFAULT_THREADS = 1
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""Variables numeric libraries read for their thread count; set from `threads`."""
ALL_GPUS = -1
"""`gpus` value that passes every GPU of the host (MLE-bench's container default)."""


class SandboxLimits(BaseModel, frozen=True):
    """Per-exec resource limits; the defaults suit a small tabular competition."""

    memory_mb: int = Field(default=DEFAULT_MEMORY_MB, gt=0)
    """Address-space limit per process (RLIMIT_AS), in MiB; a larger allocation fails."""

    max_processes: int = Field(default=DEFAULT_MAX_PROCESSES, gt=0)
    """Processes and threads the sample's user may hold at once (RLIMIT_NPROC)."""

    cpu_time_s: int = Field(default=DEFAULT_CPU_TIME_S, gt=0)
    """CPU seconds per process (RLIMIT_CPU); the kernel kills a process past it."""

    command_timeout_s: int = Field(default=DEFAULT_COMMAND_TIMEOUT_S, gt=0)
    """Wall-clock timeout of an exec when the caller gives none (the task's ``command_timeout``)."""

    max_output_bytes: int = Field(default=DEFAULT_MAX_OUTPUT_BYTES, gt=0)
    """Bytes kept per output stream; past it the exec is killed and
    `OutputLimitExceededError` raised. Inspect's own exec limit applies if lower."""

    disk_mb: int = Field(default=DEFAULT_DISK_MB, gt=0)
    """Total size of the sample's writable dirs (work, submission, tmp), in MiB;
    polled during each exec, which is killed when over."""

    file_size_mb: int = Field(default=DEFAULT_FILE_SIZE_MB, gt=0)
    """Largest file a process may write (RLIMIT_FSIZE), in MiB."""

    shm_mb: int = Field(default=DEFAULT_SHM_MB, gt=0)
    """Size of the private `/dev/shm` tmpfs (RAM, outside `disk_mb`), in MiB."""

    cpus: float | None = Field(default=None, gt=0)
    """CPU cores the sample may use at once (cgroup `cpu.max`, compose `cpus`);
    None sets no such cap (`cpu_time_s` per process still applies)."""

    gpus: int = Field(default=0, ge=ALL_GPUS)
    """GPUs passed into the sandbox: 0 none, N the first N, -1 all the host has
    (`/dev/nvidia*` in bwrap, a compose `gpus` device reservation in docker)."""

    threads: int = Field(default=DEFAULT_THREADS, gt=0)
    """Threads numeric libraries start (OMP/OpenBLAS/MKL_NUM_THREADS inside the sandbox)."""

    poll_interval_s: float = Field(default=0.5, gt=0)
    """How often the disk quota is checked during an exec."""
