"""Copy a sample's ``submission.csv`` out of its sandbox for grading, at any size.

Inspect's ``read_file`` caps a file at 100 MiB, and a full-size MLE-bench submission can be
160 MB. So the file is taken the direct way where there is one: from the host dir behind
``/home/submission`` (bwrap; ``local`` runs on the host), opened without following the
agent's links and only if it is a regular file; from a Docker container as a ``docker cp``
tar stream, copied in chunks. Other sandboxes fall back to ``read_file``.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import tarfile
from pathlib import Path
from typing import IO

import anyio
from inspect_ai.util import OutputLimitExceededError, SandboxEnvironment, registry_info

from sandmle.harness.grading.reading import DEFAULT_MAX_BYTES
from sandmle.harness.layout import SUBMISSION_DIR, SUBMISSION_PATH
from sandmle.harness.sandbox._files import open_leaf

SUBMISSION_NAME = "submission.csv"
_CHUNK = 1024 * 1024
_NO_TAR = "no tar stream"


async def fetch_submission(
    env: SandboxEnvironment, dest: Path, max_bytes: int = DEFAULT_MAX_BYTES
) -> str | None:
    """Copy the sandbox's submission to ``dest``; returns why not, or None.

    A missing file leaves ``dest`` absent and a directory makes ``dest`` a directory, so the
    grading core reports them as it reports any path.
    """
    host_dir = host_submission_dir(env)
    if host_dir is not None:
        return await anyio.to_thread.run_sync(copy_host_file, host_dir, dest, max_bytes)
    container = await _docker_container(env)
    if container is not None:
        argv = ["docker", "cp", f"{container}:{SUBMISSION_PATH}", "-"]
        return await anyio.to_thread.run_sync(copy_tar_stream, argv, dest, max_bytes)
    return await _read_through_tools(env, dest)


def host_submission_dir(env: SandboxEnvironment) -> Path | None:
    """The host dir behind ``/home/submission``, for sandboxes that keep it on the host."""
    from sandmle.harness.sandbox import BwrapSandboxEnvironment

    # `sandbox()` hands out an event-logging proxy; as_type returns the environment inside it
    # (an isinstance check, fine with the abstract base; mypy takes only concrete classes)
    inner = env.as_type(SandboxEnvironment)  # type: ignore[type-abstract]
    if isinstance(inner, BwrapSandboxEnvironment):
        return inner.dirs.submission
    if _registered_name(inner) in ("local", "inspect_ai/local"):
        return Path(SUBMISSION_DIR)  # `local` runs on the host: sandbox paths are host paths
    return None


def _registered_name(env: SandboxEnvironment) -> str | None:
    try:
        return registry_info(type(env)).name
    except (ValueError, KeyError, AttributeError):  # a class never registered with Inspect
        return None


def copy_host_file(directory: Path, dest: Path, max_bytes: int) -> str | None:
    """Copy ``directory/submission.csv`` to ``dest``: no symlinks, FIFOs or devices followed."""
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fd, info = open_leaf(SUBMISSION_NAME, dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{SUBMISSION_NAME} is a symbolic link; write the file itself"
        return f"could not open {SUBMISSION_NAME}: {exc.strerror}"
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            dest.mkdir()
            return None
        return f"{SUBMISSION_NAME} is not a regular file"
    with os.fdopen(fd, "rb") as source:
        if info.st_size > max_bytes:
            return _too_large(info.st_size, max_bytes)
        return _copy_capped(source, dest, max_bytes)


def copy_tar_stream(argv: list[str], dest: Path, max_bytes: int) -> str | None:
    """Run ``argv`` (``docker cp ... -``) and copy the one file of its tar stream to ``dest``."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            problem = _copy_first_member(proc.stdout, dest, max_bytes)
        except tarfile.ReadError:  # no tar, or a cut one: the reason is on stderr
            problem = _NO_TAR
        if problem != _NO_TAR:
            proc.kill()  # we have the one member we wanted (or know why not)
            return problem
        error = proc.stderr.read().decode(errors="replace").strip()
        returncode = proc.wait()
    if "no such file" in error.lower() or "could not find the file" in error.lower():
        return None
    last = error.splitlines()[-1] if error else f"exit status {returncode}"
    return f"could not copy {SUBMISSION_NAME} out of the container: {last}"


def _copy_first_member(stream: IO[bytes], dest: Path, max_bytes: int) -> str | None:
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        member = tar.next()
        if member is None:
            return _NO_TAR
        if member.isdir():
            dest.mkdir()
            return None
        if not member.isfile():
            return f"{SUBMISSION_NAME} is not a regular file"
        if member.size > max_bytes:
            return _too_large(member.size, max_bytes)
        source = tar.extractfile(member)
        assert source is not None
        return _copy_capped(source, dest, max_bytes)


def _copy_capped(source: IO[bytes], dest: Path, max_bytes: int) -> str | None:
    with dest.open("wb") as out:
        copied = 0
        while chunk := source.read(_CHUNK):
            copied += len(chunk)
            if copied > max_bytes:  # it grew while we copied
                return _too_large(copied, max_bytes)
            out.write(chunk)
    return None


async def _docker_container(env: SandboxEnvironment) -> str | None:
    try:
        connection = await env.connection()
    except (NotImplementedError, ConnectionError):
        return None
    return connection.container if connection.type == "docker" else None


async def _read_through_tools(env: SandboxEnvironment, dest: Path) -> str | None:
    try:
        data = await env.read_file(SUBMISSION_PATH, text=False)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        dest.mkdir()
        return None
    except OutputLimitExceededError:
        return f"{SUBMISSION_NAME} is too large to copy out of this sandbox type"
    except (PermissionError, UnicodeDecodeError, OSError) as exc:
        return f"could not read {SUBMISSION_NAME} from the sandbox: {exc}"
    dest.write_bytes(data)
    return None


def _too_large(size: int, max_bytes: int) -> str:
    return f"file is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:.1f} MiB submission limit"
