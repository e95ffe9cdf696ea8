"""The `bwrap` command line for one exec: what the sandbox sees and who it runs as."""

import functools
import logging
import os
import posixpath
import shlex
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sandmle.errors import SandmleError
from sandmle.harness.layout import DATA_DIR, SUBMISSION_DIR, WORK_DIR

from .limits import SandboxLimits

__all__ = ["DATA_DIR", "SUBMISSION_DIR", "WORK_DIR"]  # re-exported for the sandbox modules
logger = logging.getLogger(__name__)

TMP_DIR = "/tmp"

SETPRIV = "/usr/bin/setpriv"
ENV = "/usr/bin/env"
RESTORED_BY_POPEN = {signal.SIGPIPE, signal.SIGXFSZ}
"""Signals Python itself ignores; subprocess (restore_signals) resets them in every child."""
PRLIMIT = "/usr/bin/prlimit"

# Host /etc entries a Python/numpy process needs; passwd and group are generated per sample
# so the host's users (and shadow files) stay out of view.
ETC_ENTRIES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
    "localtime", "nsswitch.conf", "hosts", "mime.types",
)  # fmt: skip
SYSTEM_TOP_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
HIDDEN_PROC_FILES = ("keys", "key-users")
WRITABLE_DIRS = (WORK_DIR, SUBMISSION_DIR, "/tmp", "/dev/shm")
"""Sandbox dirs the agent can write; no mount point may lie inside one."""

BASE_ENV = {
    "HOME": WORK_DIR,
    "LANG": "C.UTF-8",
    "PYTHONUNBUFFERED": "1",
    "MPLBACKEND": "Agg",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "TMPDIR": TMP_DIR,
}


@dataclass(frozen=True)
class SampleDirs:
    """A sample's private host dirs and the uid its processes run as."""

    root: Path
    uid: int
    privileged: bool
    """True when we are root: bwrap runs privileged and setpriv drops to `uid`."""

    @property
    def rw(self) -> Path:
        """Holds the writable dirs; the sample's sized tmpfs is mounted here (see `_quota`)."""
        return self.root / "rw"

    @property
    def work(self) -> Path:
        return self.rw / "work"

    @property
    def submission(self) -> Path:
        return self.rw / "submission"

    @property
    def tmp(self) -> Path:
        return self.rw / "tmp"

    @property
    def etc(self) -> Path:
        """Generated /etc files (root's); on the tmpfs, so its mounts name no host path."""
        return self.rw / "etc"

    def writable(self) -> list[Path]:
        return [self.work, self.submission, self.tmp]


Bind = tuple[str, str, str]  # (bwrap flag, host path or link target, sandbox path)


def _system_binds() -> list[Bind]:
    binds = [("--ro-bind", "/usr", "/usr")]
    for name in SYSTEM_TOP_DIRS:
        host = Path("/") / name
        if host.is_symlink():  # merged-/usr hosts: /bin -> usr/bin
            binds.append(("--symlink", os.readlink(host), str(host)))
        elif host.is_dir():
            binds.append(("--ro-bind", str(host), str(host)))
    binds += [("--ro-bind-try", f"/etc/{name}", f"/etc/{name}") for name in ETC_ENTRIES]
    return binds


def _sample_binds(dirs: SampleDirs, public_dir: Path | None, extra: list[Bind]) -> list[Bind]:
    binds = list(extra)
    binds += [
        ("--bind", str(dirs.work), WORK_DIR),
        ("--bind", str(dirs.submission), SUBMISSION_DIR),
        ("--bind", str(dirs.tmp), TMP_DIR),
        ("--ro-bind", str(dirs.etc / "passwd"), "/etc/passwd"),
        ("--ro-bind", str(dirs.etc / "group"), "/etc/group"),
    ]
    if public_dir is not None:
        binds.append(("--ro-bind", str(public_dir), DATA_DIR))
    return binds


def _parents(dests: list[str]) -> list[str]:
    """Every ancestor of `dests` (except /), parents before children."""
    found: set[str] = set()
    for dest in dests:
        parent = posixpath.dirname(dest)
        while parent not in ("/", "") and parent not in found:
            found.add(parent)
            parent = posixpath.dirname(parent)
    return sorted(found, key=lambda p: p.count("/"))


def _mount_args(binds: list[Bind]) -> list[str]:
    # Privileged bwrap creates missing mount-point parents as 0700 root dirs, which the
    # sample's uid could not traverse; make them first, world-readable.
    args: list[str] = []
    for parent in _parents([dest for _, _, dest in binds]):
        args += ["--perms", "0755", "--dir", parent]
    # Shallow mount points first: a later mount covers an earlier one, so a Python prefix
    # under /tmp (a venv there) must be bound after the sample's own /tmp, not before.
    for flag, host, dest in sorted(binds, key=lambda bind: bind[2].rstrip("/").count("/")):
        args += [flag, dest] if flag == "--tmpfs" else [flag, host, dest]
    return args


def _limit_prefix(limits: SandboxLimits, per_process_memory: bool) -> list[str]:
    mib = 1024**2
    # With a cgroup the memory limit is the sample's total; RLIMIT_AS only stands in for it.
    memory = [f"--as={limits.memory_mb * mib}"] if per_process_memory else []
    return [
        PRLIMIT,
        *memory,
        f"--nproc={limits.max_processes}",
        f"--cpu={limits.cpu_time_s}",
        f"--fsize={limits.file_size_mb * mib}",
        "--core=0",
        "--",
    ]


def gpu_device_args(gpus: int, dev: Path = Path("/dev")) -> list[str]:
    """`--dev-bind` args passing `gpus` NVIDIA GPUs (-1: all) and their control devices."""
    if gpus == 0:
        return []
    cards = sorted(dev.glob("nvidia[0-9]*"), key=lambda p: int(p.name.removeprefix("nvidia")))
    if gpus > len(cards):
        raise SandmleError(f"{gpus} GPU(s) asked for, {len(cards)} found under {dev}; set -T gpus")
    chosen = cards if gpus < 0 else cards[:gpus]
    if chosen:  # control devices only with a card: none of them work alone
        chosen += [p for p in sorted(dev.glob("nvidia*")) if not p.name[6:].isdigit()]
    return [arg for path in chosen for arg in ("--dev-bind", str(path), str(path))]


def _identity_prefix(dirs: SampleDirs) -> list[str]:
    if not dirs.privileged:
        return []
    uid = str(dirs.uid)
    return [
        SETPRIV, "--reuid", uid, "--regid", uid, "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
    ]  # fmt: skip


def sample_options(
    dirs: SampleDirs, *, limits: SandboxLimits, public_dir: Path | None, binds: list[Bind]
) -> list[str]:
    """bwrap's per-sample options (namespaces, mounts), built once in sample_init.

    `binds` are the extra mounts (the agent Python's, the config's read-only binds).
    """
    # No user namespace when root: the processes must really run as `dirs.uid` on the
    # host so RLIMIT_NPROC counts only this sample and file modes protect the host.
    unshare = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    unshare += ["--unshare-cgroup-try"] + ([] if dirs.privileged else ["--unshare-user"])
    args = [*unshare, "--die-with-parent", "--new-session", "--clearenv"]
    args += ["--hostname", "sandbox"]
    args += _mount_args(_system_binds() + _sample_binds(dirs, public_dir, binds))
    args += ["--proc", "/proc", "--dev", "/dev", *gpu_device_args(limits.gpus)]
    for name in HIDDEN_PROC_FILES:  # key names of the host's keyrings
        args += ["--ro-bind-try", "/dev/null", f"/proc/{name}"]
    args += ["--perms", "1777", "--size", str(limits.shm_mb * 1024**2), "--tmpfs", "/dev/shm"]
    if dirs.privileged:  # only for setpriv; it clears every capability before `cmd`
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return args


def exec_options(*, cwd: str, env: dict[str, str]) -> list[str]:
    """bwrap's per-exec options: environment and working dir."""
    args = []
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args + ["--chdir", cwd]


def _signal_prefix() -> list[str]:
    """`env --default-signal` when this process ignores a signal.

    An ignored signal stays ignored across fork and exec: under `nohup` or a background job of
    a script, every agent process would ignore SIGHUP, SIGINT and SIGQUIT (an agent's
    `child.send_signal(SIGINT)` did nothing). A handled signal is reset by exec already.
    """
    ignored = [
        s for s in signal.valid_signals()
        if s not in RESTORED_BY_POPEN and signal.getsignal(s) == signal.SIG_IGN
    ]  # fmt: skip
    if not ignored:
        return []
    return [ENV, "--default-signal"] if _env_resets_signals(ENV) else []


@functools.cache
def _env_resets_signals(env: str) -> bool:
    """Whether `env` has --default-signal (coreutils 8.31+); said once, loudly, when not."""
    probe = [env, "--default-signal", "true"]
    try:
        works = subprocess.run(probe, capture_output=True, check=False).returncode == 0
    except OSError:
        works = False
    if not works:
        logger.warning(
            "%s has no --default-signal (coreutils < 8.31): agent processes inherit the "
            "signals this process ignores (nohup, background job); run it in the foreground",
            env,
        )
    return works


def sandbox_command(
    dirs: SampleDirs, limits: SandboxLimits, cmd: list[str], *, cgroup: bool
) -> list[str]:
    """What bwrap runs: setpriv (when root), then prlimit, then signals reset, then `cmd`."""
    return _identity_prefix(dirs) + _limit_prefix(limits, not cgroup) + _signal_prefix() + cmd


COMMAND_ENV = "SANDMLE_COMMAND"
# A bwrap started ahead of its exec has its argv fixed before the command is known, so it
# runs this, which takes the command (shell-quoted, from `--setenv`) out of the environment.
TRAMPOLINE = ["/bin/sh", "-c", f'c="${COMMAND_ENV}"; unset {COMMAND_ENV}; eval "exec $c"']
MAX_TRAMPOLINE_COMMAND = 100_000
"""Longest quoted command the trampoline takes (one env string may hold 128 KiB)."""


def quote_command(cmd: list[str]) -> str:
    """`cmd` as sh words; the program is always quoted, so it is never read as `VAR=value`."""
    program = "'" + cmd[0].replace("'", "'\"'\"'") + "'"
    return " ".join([program, *(shlex.quote(arg) for arg in cmd[1:])])


def bwrap_argv(
    bwrap: str,
    dirs: SampleDirs,
    *,
    cmd: list[str],
    cwd: str,
    env: dict[str, str],
    limits: SandboxLimits,
    public_dir: Path | None,
    binds: list[Bind],
    cgroup: bool = False,
) -> list[str]:
    """The full argv in one list (the sandbox passes the options through `--args` instead)."""
    options = sample_options(dirs, limits=limits, public_dir=public_dir, binds=binds)
    options += exec_options(cwd=cwd, env=env)
    return [bwrap, *options, "--", *sandbox_command(dirs, limits, cmd, cgroup=cgroup)]
