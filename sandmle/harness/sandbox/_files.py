"""Host-side `read_file`/`write_file` for sandbox paths.

These run as the host user (root) on dirs the agent writes to, while the agent may be
changing them. So no path is ever followed as a string: each component is opened relative
to the dir fd of the one before, with O_NOFOLLOW, so a symlink anywhere (planted before
the call or swapped in during it) is refused, not followed. Opens never block (O_NONBLOCK,
then a regular-file check), so a FIFO or device cannot hang the harness, and a write goes
to a new temp file that is renamed over the target, so whatever sat at the target (a FIFO,
a symlink, a hard link to another file) is replaced, never opened.
"""

import errno
import os
import posixpath
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.util import OutputLimitExceededError

from ._command import WORK_DIR
from ._process import size_str

Mount = tuple[str, Path, bool]  # (sandbox dir, host dir, writable)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_PREFIX = ".sandmle-write-"


@dataclass(frozen=True)
class HostTarget:
    """A sandbox path as a trusted host dir plus the components below it."""

    file: str
    """The path as the caller gave it (for messages; never a host path)."""
    root: Path
    parts: tuple[str, ...]


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def locate(mounts: list[Mount], file: str, *, write: bool) -> HostTarget:
    """Where sandbox path `file` lives (relative paths start at /home/agent).

    Raises:
      PermissionError: outside every mount, or a write to a read-only mount.
    """
    sandbox_path = posixpath.normpath(posixpath.join(WORK_DIR, file))
    for mount, host_dir, writable in mounts:
        if not _within(sandbox_path, mount):
            continue
        if write and not writable:
            raise PermissionError(f"{file}: {mount} is read-only")
        relative = posixpath.relpath(sandbox_path, mount)
        parts = () if relative == "." else tuple(relative.split("/"))
        return HostTarget(file, host_dir, parts)
    allowed = ", ".join(mount for mount, _, _ in mounts)
    raise PermissionError(f"{file}: outside the sandbox's dirs ({allowed})")


def _refuse_link(target: HostTarget, error: OSError, dir_fd: int, name: str) -> OSError:
    """The error to raise when opening `name` failed: symlinks become PermissionError."""
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    if error.errno == errno.ELOOP or is_link:
        return PermissionError(f"{target.file}: a symbolic link is in the way; refused")
    if error.errno == errno.ENOENT:
        return FileNotFoundError(f"{target.file}: no such file or directory")
    if error.errno == errno.ENOTDIR:
        return NotADirectoryError(f"{target.file}: a part of the path is not a directory")
    return error


def _open_dirs(target: HostTarget, owner: int | None, *, create: bool) -> int:
    """An fd of the dir holding the target's last component, walked without following links."""
    fd = os.open(target.root, _DIR_FLAGS)
    try:
        for name in target.parts[:-1]:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise FileNotFoundError(f"{target.file}: no such file or directory") from None
                child = _make_dir(fd, name, owner)
            except OSError as error:
                raise _refuse_link(target, error, fd, name) from None
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _make_dir(parent_fd: int, name: str, owner: int | None) -> int:
    try:
        os.mkdir(name, 0o755, dir_fd=parent_fd)
    except FileExistsError:
        pass  # made meanwhile (by the agent, maybe as a link: the open below refuses it)
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    if owner is not None:
        os.fchown(fd, owner, owner)
    return fd


def open_leaf(name: str, dir_fd: int) -> tuple[int, os.stat_result]:
    """Open ``name`` in ``dir_fd`` for reading without following a link or blocking on a FIFO
    (the caller checks the returned stat's kind before reading)."""
    fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    return fd, os.fstat(fd)


def read_host_file(target: HostTarget, text: bool, limit: int) -> str | bytes:
    """Read a regular file, refusing links, FIFOs, devices and anything over `limit` bytes."""
    if not target.parts:
        raise IsADirectoryError(f"{target.file} is a directory")
    dir_fd = _open_dirs(target, None, create=False)
    try:
        name = target.parts[-1]
        try:
            fd, info = open_leaf(name, dir_fd)
        except OSError as error:
            raise _refuse_link(target, error, dir_fd, name) from None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{target.file} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise PermissionError(f"{target.file} is not a regular file")
        if info.st_size > limit:
            raise OutputLimitExceededError(limit_str=size_str(limit), truncated_output=None)
        data = handle.read(limit + 1)
    return data.decode("utf-8") if text else data


def write_host_file(target: HostTarget, contents: str | bytes, owner: int | None) -> None:
    """Write `contents` (text as UTF-8, newlines kept) via a temp file renamed over the
    target; missing parent dirs are made and, like the file, given to `owner`."""
    if not target.parts:
        raise IsADirectoryError(f"{target.file} is a directory")
    data = contents.encode("utf-8") if isinstance(contents, str) else contents
    dir_fd = _open_dirs(target, owner, create=True)
    try:
        name = target.parts[-1]
        _refuse_dir(target, dir_fd, name)
        temp = _TEMP_PREFIX + secrets.token_hex(8)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o644, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                if owner is not None:
                    os.fchown(handle.fileno(), owner, owner)
                handle.write(data)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except OSError:
                pass
            raise
    finally:
        os.close(dir_fd)


def _refuse_dir(target: HostTarget, dir_fd: int, name: str) -> None:
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{target.file} is a directory")
