"""The sample's disk quota: a tmpfs of `disk_mb` MiB holding its writable dirs.

The kernel enforces it on every write: bytes, inodes, and files deleted while still open
all count, parallel writers cannot overshoot, and nothing is polled. Its pages are charged
to the memory cgroup of the process that writes them, so the sample's files also count
toward its memory limit.
"""

import ctypes
import ctypes.util
import functools
import os
import shutil
from pathlib import Path

MS_NOSUID = 0x2
MS_NODEV = 0x4
MNT_DETACH = 0x2
BYTES_PER_INODE = 16 * 1024
"""One inode per 16 KiB of quota, mkfs.ext4's default ratio (4096 MiB: 262,144 files)."""
MIN_INODES = 1024


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def max_inodes(disk_mb: int) -> int:
    return max(disk_mb * 1024**2 // BYTES_PER_INODE, MIN_INODES)


def mount_quota(path: Path, disk_mb: int) -> None:
    """Mount a tmpfs of `disk_mb` MiB (and `max_inodes`) at `path`, root-owned, 0755.

    Raises:
      OSError: the mount was refused (not root, or no tmpfs).
    """
    options = f"size={disk_mb}m,nr_inodes={max_inodes(disk_mb)},mode=0755,uid=0,gid=0"
    flags = MS_NOSUID | MS_NODEV
    if _libc().mount(b"tmpfs", bytes(path), b"tmpfs", flags, options.encode()) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mounting the sample's tmpfs failed: {os.strerror(error)}")


def unmount_quota(path: Path) -> None:
    """Detach the tmpfs at `path` (its memory is freed once no process holds a file)."""
    if os.path.ismount(path) and _libc().umount2(bytes(path), MNT_DETACH) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unmounting the sample's tmpfs failed: {os.strerror(error)}")


def quota_full(path: Path) -> bool:
    """Whether the tmpfs at `path` has under 1 MiB or no inode left."""
    try:
        info = os.statvfs(path)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 1024**2 or info.f_favail == 0


def _mount_points() -> list[Path]:
    """Every mount point of this mount namespace (``/proc/self/mounts`` octal-escapes spaces)."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    points = (line.split()[1] for line in lines if len(line.split()) > 1)
    return [Path(p.encode().decode("unicode_escape")) for p in points]


def release_tree(root: Path) -> None:
    """Detach every mount under ``root`` (deepest first), then remove ``root``: what a sample
    killed before its own cleanup leaves (its quota tmpfs would hold memory until unmounted)."""
    inside = [m for m in _mount_points() if m.is_relative_to(root)]
    for mount in sorted(inside, key=lambda m: len(m.parts), reverse=True):
        _libc().umount2(bytes(mount), MNT_DETACH)
    shutil.rmtree(root, ignore_errors=True)
