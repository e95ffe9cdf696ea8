"""A cgroup per sample: total memory, process and CPU limits over every process it starts.

cgroup v2 is used where its memory and pids controllers are available, else v1's memory,
pids and cpu hierarchies (a host whose controllers sit in v1 has an empty v2 mount). Each
exec joins the cgroup before bwrap starts (see `join_prefix`), so every process of the
sample, and the tmpfs pages its files use, count against the one limit.
"""

import functools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from .limits import SandboxLimits

CGROUP_PARENT = "sandmle"
V1_CONTROLLERS = ("memory", "pids", "cpu")
V2_CONTROLLERS = ("memory", "pids", "cpu")
CFS_PERIOD_US = 100_000
# Joins the cgroups named before `--`, then runs the rest (bwrap); 125 if a join fails.
JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done; shift; exec "$@"'
SHELL = "/bin/sh"


class CgroupUnavailableError(Exception):
    """No usable cgroup hierarchy (not root, or the controllers are missing)."""


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(fs type, mount point, options) of every cgroup mount."""
    found = []
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            _, point, fstype, options, *_ = line.split()
            if fstype in ("cgroup", "cgroup2"):
                found.append((fstype, point, set(options.split(","))))
    return found


@functools.cache
def cgroup_roots() -> tuple[str, dict[str, Path]]:
    """("v2", {"": root}) or ("v1", {controller: hierarchy root}) usable by this process.

    Raises:
      CgroupUnavailableError: not root, or no hierarchy with memory and pids.
    """
    if os.geteuid() != 0:
        raise CgroupUnavailableError("not running as root")
    mounts = _mounts()
    for fstype, point, _ in mounts:
        controllers_file = Path(point) / "cgroup.controllers"
        if fstype == "cgroup2" and controllers_file.exists():
            available = set(controllers_file.read_text().split())
            if {"memory", "pids"} <= available:
                try:  # fails where our cgroup holds processes (a container's root)
                    _enable_v2_controllers(Path(point))
                except OSError:
                    continue
                return "v2", {"": Path(point)}
    v1 = {}
    for fstype, point, options in mounts:
        for controller in V1_CONTROLLERS:
            if fstype == "cgroup" and controller in options and controller not in v1:
                v1[controller] = Path(point)
    if {"memory", "pids"} <= v1.keys():
        return "v1", v1
    raise CgroupUnavailableError("no cgroup hierarchy with the memory and pids controllers")


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _enable_v2_controllers(root: Path, *, cpu: bool = False) -> Path:
    parent = root / CGROUP_PARENT
    parent.mkdir(exist_ok=True)
    available = set((root / "cgroup.controllers").read_text().split())
    controllers = V2_CONTROLLERS if cpu else ("memory", "pids")
    wanted = " ".join(f"+{c}" for c in controllers if c in available)
    for node in (root, parent):
        _write(node / "cgroup.subtree_control", wanted)
    return parent


@dataclass(frozen=True)
class SampleCgroup:
    """One sample's cgroup (a dir per v1 hierarchy, or one v2 dir)."""

    version: str
    paths: tuple[Path, ...]
    """v2: the one dir; v1: the memory dir first, then pids, then cpu when present."""

    @classmethod
    def create(cls, name: str, limits: SandboxLimits) -> "SampleCgroup":
        """Make the cgroup `sandmle/<name>` with `limits` set.

        Raises:
          CgroupUnavailableError: as for `cgroup_roots`.
          OSError: the kernel refused a dir or a limit.
        """
        version, roots = cgroup_roots()
        # The cpu controller only when capped: under it, all samples together compete as
        # one sibling of the host's other processes, and a loaded host starves them.
        wanted = V1_CONTROLLERS if limits.cpus is not None else ("memory", "pids")
        if version == "v2":
            path = _enable_v2_controllers(roots[""], cpu=limits.cpus is not None) / name
            _claim_dir(path)
            group = cls("v2", (path,))
        else:
            paths = []
            for controller in wanted:
                if controller in roots:
                    (roots[controller] / CGROUP_PARENT).mkdir(exist_ok=True)
                    paths.append(roots[controller] / CGROUP_PARENT / name)
                    _claim_dir(paths[-1])
            group = cls("v1", tuple(paths))
        try:
            group._set_limits(limits)
        except BaseException:
            group.remove()
            raise
        return group

    def _set_limits(self, limits: SandboxLimits) -> None:
        memory = str(limits.memory_mb * 1024**2)
        cpus = limits.cpus
        if self.version == "v2":
            path = self.paths[0]
            _write(path / "memory.max", memory)
            if (path / "memory.swap.max").exists():
                _write(path / "memory.swap.max", "0")
            _write(path / "pids.max", str(limits.max_processes))
            if cpus is not None and (path / "cpu.max").exists():
                _write(path / "cpu.max", f"{int(cpus * CFS_PERIOD_US)} {CFS_PERIOD_US}")
            return
        memory_dir, pids_dir = self.paths[0], self.paths[1]
        _write(memory_dir / "memory.limit_in_bytes", memory)
        if (memory_dir / "memory.memsw.limit_in_bytes").exists():  # no swapping past it
            _write(memory_dir / "memory.memsw.limit_in_bytes", memory)
        _write(pids_dir / "pids.max", str(limits.max_processes))
        if cpus is not None and len(self.paths) > 2:
            _write(self.paths[2] / "cpu.cfs_period_us", str(CFS_PERIOD_US))
            _write(self.paths[2] / "cpu.cfs_quota_us", str(int(cpus * CFS_PERIOD_US)))

    def join_prefix(self) -> list[str]:
        """argv that puts itself in this cgroup, then execs what follows it."""
        procs = [str(path / "cgroup.procs") for path in self.paths]
        return [SHELL, "-c", JOIN_SCRIPT, "sandmle-join", *procs, "--"]

    def memory_limit(self) -> int:
        name = "memory.max" if self.version == "v2" else "memory.limit_in_bytes"
        return int(self.paths[0].joinpath(name).read_text().strip())

    def memory_peak(self) -> int | None:
        """Most bytes the sample held at once (None when the kernel does not say)."""
        name = "memory.peak" if self.version == "v2" else "memory.max_usage_in_bytes"
        try:
            return int(self.paths[0].joinpath(name).read_text().strip())
        except (OSError, ValueError):
            return None

    def oom_kills(self) -> int:
        """Processes the kernel killed so far for passing the memory limit."""
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        try:
            lines = self.paths[0].joinpath(name).read_text().splitlines()
        except OSError:
            return 0
        counts = dict(line.split() for line in lines if len(line.split()) == 2)
        return int(counts.get("oom_kill", 0))

    def pids(self) -> list[int]:
        path = self.paths[0] if self.version == "v2" else self.paths[1]
        try:
            return [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill(self, limit_s: float = 5.0) -> None:
        """SIGKILL every process in the cgroup, until none is left (or `limit_s` passes)."""
        deadline = time.monotonic() + limit_s
        if self.version == "v2" and (self.paths[0] / "cgroup.kill").exists():
            _write(self.paths[0] / "cgroup.kill", "1")
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:  # a fork racing this loop is caught on the next round
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup's dirs."""
        self.kill()
        for path in self.paths:
            for _ in range(100):  # rmdir fails while the last killed process is exiting
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def _claim_dir(path: Path) -> None:
    """Make a sample's cgroup dir. One already there with no process in it is a stray of an
    ended sample whose root is gone (a run killed before the release existed, a test's temp
    base deleted): its uid was free to claim again, so the stray is replaced. One with
    processes belongs to a live sample of another sandbox base: that stays an error."""
    try:
        path.mkdir()
        return
    except FileExistsError:
        if (path / "cgroup.procs").read_text().split():
            raise
    path.rmdir()  # an empty cgroup's control files go with it
    path.mkdir()


def remove_cgroup_named(name: str) -> None:
    """Remove a stray sample cgroup `sandmle/<name>` (from a run that crashed), if any."""
    try:
        version, roots = cgroup_roots()
    except (CgroupUnavailableError, OSError):
        return
    paths: tuple[Path, ...]
    if version == "v2":
        paths = (roots[""] / CGROUP_PARENT / name,)
    else:
        paths = tuple(roots[c] / CGROUP_PARENT / name for c in V1_CONTROLLERS if c in roots)
    if paths[0].is_dir():
        SampleCgroup(version, tuple(p for p in paths if p.is_dir())).remove()
