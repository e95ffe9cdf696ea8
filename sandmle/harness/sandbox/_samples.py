"""Create, find and remove the per-sample host dirs and the processes of a sample's uid.

Layout: `<base>/<uid>/rw/{work,submission,tmp,etc}`, with the sample's sized tmpfs (its
disk quota) mounted at `rw` when we are root. The base and each root are 0700 and
root-owned, so one sample cannot reach another's dirs even by name; only `work`,
`submission` and `tmp` are owned by the sample's uid, and `rw` (root's) cannot be
replaced from inside. The root's name is the uid, and
`mkdir` is atomic, so concurrent Inspect processes never hand out the same uid. Each root
names the process that made it (`owner`: pid, start time, PID namespace), so a later run can release
what a run killed before its cleanup (SIGKILL, OOM, a SIGTERM Inspect does not catch) left.
"""

import os
import random
import shutil
import signal
import tempfile
from pathlib import Path

from ._command import WORK_DIR, SampleDirs
from ._quota import mount_quota, unmount_quota

# Sample uids come from a range no distro hands out (it sits above systemd's container
# ranges), so they own no host files and their RLIMIT_NPROC count is the sample's alone.
UID_FIRST = 2_000_000_000
UID_COUNT = 100_000_000
SANDBOX_USER = "agent"


BASE_NAME = "sandmle-sandboxes"
OWNER_FILE = "owner"
"""In a sample's root, outside what the sandbox sees: its maker (``record_process``)."""


def default_base_dir() -> Path:
    return Path(tempfile.gettempdir()) / BASE_NAME


def _make_base(base: Path) -> None:
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o700)


def process_start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22), or
    None when it is gone: with the pid, it tells the process a record names from a later
    process that reused its pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


LAUNCH_FILE = "launch"
"""In a sample's root: the bwrap started ahead for its next exec (``record_process``). One
waiting for its options does not die with a killed run; the next run's release ends it."""


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "unknown"


def record_process(path: Path, pid: int) -> None:
    """Write ``<pid> <start time> <pid namespace>`` to ``path``: the start time tells a reused
    pid apart, the namespace a process this one cannot see (another container's)."""
    path.write_text(f"{pid} {process_start_time(pid)} {_pid_namespace()}")


def recorded_process(path: Path) -> int | None:
    """The pid ``path`` records if that very process still runs here, else None."""
    try:
        pid, start, _ = path.read_text().split()
    except (OSError, ValueError):
        return None
    return int(pid) if process_start_time(int(pid)) == start else None


def owner_gone(root: Path) -> bool:
    """Whether the process that made ``root`` has ended. False while it cannot be told: a root
    being made has no owner file for a moment, and a process of another PID namespace (a
    container sharing the temp folder) is not visible from here."""
    try:
        _, _, namespace = (root / OWNER_FILE).read_text().split()
    except (OSError, ValueError):
        return False
    return namespace == _pid_namespace() and recorded_process(root / OWNER_FILE) is None


def _claim_root(base: Path) -> tuple[Path, int]:
    if os.geteuid() != 0:  # no way to switch uid: every sample runs as us
        root = Path(tempfile.mkdtemp(prefix=f"u{os.getuid()}-", dir=base))
        return root, os.getuid()
    while True:
        uid = UID_FIRST + random.randrange(UID_COUNT)
        try:
            (base / str(uid)).mkdir(mode=0o700)
        except FileExistsError:
            continue
        return base / str(uid), uid


def _write_identity(dirs: SampleDirs) -> None:
    dirs.etc.mkdir()
    (dirs.etc / "passwd").write_text(
        f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"{SANDBOX_USER}:x:{dirs.uid}:{dirs.uid}:agent:{WORK_DIR}:/bin/bash\n"
        f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (dirs.etc / "group").write_text(f"root:x:0:\n{SANDBOX_USER}:x:{dirs.uid}:\n")


def create_sample_dirs(base: Path, quota_mb: int | None = None) -> SampleDirs:
    """Claim a uid and make its dirs; the writable ones belong to that uid.

    With `quota_mb`, they live on a tmpfs of that size (see `_quota`).

    Raises:
      OSError: the tmpfs could not be mounted (nothing is left behind).
    """
    _make_base(base)
    root, uid = _claim_root(base)
    record_process(root / OWNER_FILE, os.getpid())
    dirs = SampleDirs(root=root, uid=uid, privileged=os.geteuid() == 0)
    dirs.rw.mkdir(mode=0o755)
    if quota_mb is not None:
        try:
            mount_quota(dirs.rw, quota_mb)
        except OSError:
            shutil.rmtree(root, ignore_errors=True)
            raise
    for path in dirs.writable():
        path.mkdir(mode=0o700)
        os.chown(path, uid, uid)
    _write_identity(dirs)
    return dirs


def uid_pids(uid: int) -> list[int]:
    """Pids whose real uid is `uid` (read from /proc, no extra dependency)."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as status:
                line = next(ln for ln in status if ln.startswith("Uid:"))
        except (OSError, StopIteration):
            continue  # exited while we looked
        if int(line.split()[1]) == uid:
            pids.append(int(entry.name))
    return pids


def kill_uid(uid: int) -> None:
    """SIGKILL every process of a sample's uid (never our own uid)."""
    if uid == os.getuid():
        return
    for pid in uid_pids(uid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def remove_sample_dirs(dirs: SampleDirs) -> None:
    """Kill the sample's leftovers, unmount its tmpfs, then delete its root."""
    if dirs.privileged:
        kill_uid(dirs.uid)
    try:
        unmount_quota(dirs.rw)
    except OSError:
        pass  # rmtree below still empties it; the mount goes with the next reboot
    shutil.rmtree(dirs.root, ignore_errors=True)


def remove_all(base: Path, only: str | None = None) -> list[Path]:
    """Remove every sample root under `base` (or just the one named `only`)."""
    if not base.is_dir():
        return []
    removed = []
    for root in sorted(base.iterdir()):
        if only is not None and root.name != only:
            continue
        remove_root(root)
        removed.append(root)
    return removed


def remove_root(root: Path) -> None:
    """`remove_sample_dirs` for a root found on disk (its name is its uid when we are root)."""
    owned = root.name.isdigit() and os.geteuid() == 0
    uid = int(root.name) if owned else os.getuid()
    remove_sample_dirs(SampleDirs(root=root, uid=uid, privileged=owned))
