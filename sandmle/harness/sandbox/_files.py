"""Host-side `read_file`/`write_file` for sandbox paths.

These run as the host user (root), on dirs the agent writes to, so a path is only
followed if it stays inside the mapped host dir: the agent's symlinks to `/etc/shadow`
or `../../other-sample` are refused, and the final open uses O_NOFOLLOW.
"""

import os
import posixpath
import stat
from pathlib import Path

from inspect_ai.util import OutputLimitExceededError

from ._command import WORK_DIR
from ._process import size_str

Mount = tuple[str, Path, bool]  # (sandbox dir, host dir, writable)


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def resolve_host_path(mounts: list[Mount], file: str, *, write: bool) -> Path:
    """The host path behind sandbox path `file` (relative paths start at /home/agent).

    Raises:
      PermissionError: outside every mount, a write to a read-only mount, or a
        symlink that leads out of its mount.
    """
    sandbox_path = posixpath.normpath(posixpath.join(WORK_DIR, file))
    for mount, host_dir, writable in mounts:
        if not _within(sandbox_path, mount):
            continue
        if write and not writable:
            raise PermissionError(f"{file}: {mount} is read-only")
        host_root = os.path.realpath(host_dir)
        real = os.path.realpath(os.path.join(host_root, posixpath.relpath(sandbox_path, mount)))
        if not _within(real, host_root):
            raise PermissionError(f"{file}: a link leads outside {mount}")
        return Path(real)
    allowed = ", ".join(mount for mount, _, _ in mounts)
    raise PermissionError(f"{file}: outside the sandbox's dirs ({allowed})")


def read_host_file(path: Path, text: bool, limit: int) -> str | bytes:
    """Read a regular file, refusing FIFOs and devices and anything over `limit` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{path.name} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise PermissionError(f"{path.name} is not a regular file")
        if info.st_size > limit:
            raise OutputLimitExceededError(limit_str=size_str(limit), truncated_output=None)
        data = handle.read(limit + 1)
    return data.decode("utf-8") if text else data


def _make_parents(path: Path, owner: int | None) -> None:
    missing = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for directory in reversed(missing):
        directory.mkdir()
        if owner is not None:
            os.chown(directory, owner, owner)


def write_host_file(path: Path, contents: str | bytes, owner: int | None) -> None:
    """Write `contents` (text as UTF-8, newlines kept), creating parents owned by `owner`."""
    if path.is_dir():
        raise IsADirectoryError(f"{path.name} is a directory")
    _make_parents(path, owner)
    data = contents.encode("utf-8") if isinstance(contents, str) else contents
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    with os.fdopen(os.open(path, flags, 0o644), "wb") as handle:
        handle.write(data)
        if owner is not None:
            os.fchown(handle.fileno(), owner, owner)
