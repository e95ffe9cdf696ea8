"""The `bwrap` sandbox: each sample gets private dirs and every exec runs in bubblewrap.

Inside, the agent sees `/usr` (and the /bin, /lib links), a few /etc files, the agent
Python's prefix, the competition's public data read-only at `/home/data`, and its own
writable `/home/agent` (cwd and HOME), `/home/submission` and `/tmp`. No network, a fresh
PID namespace and /proc, and, when we run as root, a per-sample unprivileged uid.
Limits: see `SandboxLimits`.
"""

import functools
import os
import posixpath
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal, overload

import anyio
import yaml
from inspect_ai.util import (
    ExecResult,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    SandboxUserUnsupportedError,
    sandboxenv,
)
from pydantic import BaseModel, Field
from typing_extensions import override

from sandmle.errors import SandmleError
from sandmle.harness.layout import PUBLIC_DIR_METADATA_KEY

from ._command import BASE_ENV, DATA_DIR, SUBMISSION_DIR, TMP_DIR, WORK_DIR, SampleDirs, bwrap_argv
from ._files import read_host_file, resolve_host_path, write_host_file
from ._process import run_limited
from ._samples import (
    SANDBOX_USER,
    create_sample_dirs,
    default_base_dir,
    remove_all,
    remove_sample_dirs,
)
from .limits import SandboxLimits

AGENT_PYTHON_ENV = "SANDMLE_AGENT_PYTHON"
"""Environment variable naming the Python interpreter agents get (e.g. a venv with more ML libs)."""
BWRAP_INSTALL_HINT = "apt-get install -y bubblewrap"
SYSTEM_PREFIXES = ("/usr/", "/bin/", "/lib")


class BwrapConfig(BaseModel, frozen=True):
    """How the `bwrap` sandbox is set up (pass as the sandbox config of a task)."""

    public_dir: Path | None = None
    """Host dir mounted read-only at /home/data; sample metadata `sandmle_public_dir` wins."""

    limits: SandboxLimits = SandboxLimits()
    """Resource limits applied to every exec."""

    ro_binds: tuple[tuple[Path, str], ...] = ()
    """Extra read-only mounts as (host path, sandbox path) pairs."""

    python: Path = Field(
        default_factory=lambda: Path(os.environ.get(AGENT_PYTHON_ENV) or sys.executable)
    )
    """The agent's Python (default ``$SANDMLE_AGENT_PYTHON``, else sandmle's own); its install
    prefix is mounted read-only and its bin dir leads PATH, so its packages are the agent's."""

    base_dir: Path | None = None
    """Where per-sample dirs are made; default `$TMPDIR/sandmle-sandboxes`."""


class BwrapUnavailableError(SandmleError):
    """`bwrap` is not installed."""


@functools.cache
def _bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise BwrapUnavailableError(f"bwrap not found on PATH; install it: {BWRAP_INSTALL_HINT}")
    return path


@functools.cache
def python_prefixes(python: Path) -> tuple[Path, ...]:
    """Install prefixes (venv and base) of `python` that live outside /usr."""
    if python.resolve() == Path(sys.executable).resolve():
        found = {sys.prefix, sys.base_prefix}
    else:
        code = "import sys; print(sys.prefix); print(sys.base_prefix)"
        out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
        found = set(out.stdout.split())
    return tuple(Path(p) for p in sorted(found) if not (p + "/").startswith(SYSTEM_PREFIXES))


def _resolve_config(config: SandboxEnvironmentConfigType | None) -> BwrapConfig:
    if config is None:
        return BwrapConfig()
    if isinstance(config, BwrapConfig):
        return config
    if isinstance(config, str):  # a YAML file holding BwrapConfig fields
        return BwrapConfig.model_validate(yaml.safe_load(Path(config).read_text()) or {})
    raise SandmleError(f"bwrap sandbox config must be a BwrapConfig or YAML path, not {config!r}")


def _public_dir(config: BwrapConfig, metadata: dict[str, Any]) -> Path | None:
    value = metadata.get(PUBLIC_DIR_METADATA_KEY) or config.public_dir
    if value is None:
        return None
    path = Path(value).resolve()
    if not path.is_dir():
        raise SandmleError(f"public data dir {path} does not exist; fix {PUBLIC_DIR_METADATA_KEY}")
    mode = path.stat().st_mode
    if os.geteuid() == 0 and mode & 0o005 != 0o005:  # the sample's uid is an "other"
        raise SandmleError(
            f"public data dir {path} (mode {oct(mode & 0o777)}) is unreadable to the sandbox "
            f"user; make it world-readable: chmod -R o+rX {path}"
        )
    return path


@sandboxenv(name="bwrap")
class BwrapSandboxEnvironment(SandboxEnvironment):
    """One sample's bubblewrap sandbox."""

    _live: set[Path] = set()  # sample roots this process made and has not removed

    def __init__(self, dirs: SampleDirs, config: BwrapConfig, public_dir: Path | None) -> None:
        super().__init__()
        self.dirs = dirs
        self.config = config
        self.public_dir = public_dir
        prefixes = python_prefixes(config.python)
        self._ro_binds = {p: str(p) for p in prefixes} | {h: d for h, d in config.ro_binds}
        self._path = ":".join([str(config.python.parent), "/usr/local/bin", "/usr/bin", "/bin"])

    @override
    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        _bwrap_path()
        _resolve_config(config)

    @override
    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, Any]
    ) -> dict[str, SandboxEnvironment]:
        _bwrap_path()
        resolved = _resolve_config(config)
        public_dir = _public_dir(resolved, metadata)
        base = resolved.base_dir or default_base_dir()
        dirs = await anyio.to_thread.run_sync(create_sample_dirs, base)
        cls._live.add(dirs.root)
        return {"default": cls(dirs, resolved, public_dir)}

    @override
    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            dirs = environment.as_type(cls).dirs
            await anyio.to_thread.run_sync(remove_sample_dirs, dirs)
            cls._live.discard(dirs.root)

    @override
    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        if not cleanup:  # --no-sandbox-cleanup: leave the dirs for inspection
            return
        for root in list(cls._live):
            await anyio.to_thread.run_sync(remove_all, root.parent, root.name)
            cls._live.discard(root)

    @override
    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        await anyio.to_thread.run_sync(remove_all, default_base_dir(), id)

    @override
    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return BwrapConfig(**config)

    @override
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,  # not retried: a killed training run rarely should be
        concurrency: bool = True,
    ) -> ExecResult[str]:
        self._check_user(user)
        if not self.dirs.work.is_dir():
            raise SandboxUnavailableError(f"sandbox {self.dirs.root} was cleaned up")
        limits = self.config.limits
        argv = bwrap_argv(
            _bwrap_path(), self.dirs,
            cmd=cmd, cwd=posixpath.join(WORK_DIR, cwd or "."),
            env={"PATH": self._path, **BASE_ENV, **(env or {})},
            limits=limits, public_dir=self.public_dir, ro_binds=self._ro_binds,
        )  # fmt: skip
        outcome = await run_limited(
            argv,
            input=input.encode() if isinstance(input, str) else input,
            timeout=timeout or limits.command_timeout_s,
            max_output=min(limits.max_output_bytes, SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE),
            watch_dirs=self.dirs.writable(),
            disk_limit=limits.disk_mb * 1024**2,
            poll_interval=limits.poll_interval_s,
        )
        stderr = outcome.stderr.decode("utf-8", errors="replace")
        if outcome.disk_exceeded:
            stderr += (
                f"\nsandbox: killed: files in /home/agent, /home/submission and /tmp exceed "
                f"the {limits.disk_mb} MiB disk quota; delete some before going on.\n"
            )
        return ExecResult(
            success=outcome.returncode == 0 and not outcome.disk_exceeded,
            returncode=outcome.returncode,
            stdout=outcome.stdout.decode("utf-8", errors="replace"),
            stderr=stderr,
        )

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        path = resolve_host_path(self._host_mounts(), file, write=True)
        owner = self.dirs.uid if self.dirs.privileged else None
        await anyio.to_thread.run_sync(write_host_file, path, contents, owner)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        path = resolve_host_path(self._host_mounts(), file, write=False)
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        return await anyio.to_thread.run_sync(read_host_file, path, text, limit)

    @override
    def default_polling_interval(self) -> float:
        return 0.2

    def _host_mounts(self) -> list[tuple[str, Path, bool]]:
        """(sandbox dir, host dir, writable) for the dirs read_file/write_file may touch."""
        mounts = [
            (WORK_DIR, self.dirs.work, True),
            (SUBMISSION_DIR, self.dirs.submission, True),
            (TMP_DIR, self.dirs.tmp, True),
        ]
        if self.public_dir is not None:
            mounts.append((DATA_DIR, self.public_dir, False))
        return mounts

    def _check_user(self, user: str | None) -> None:
        if user not in (None, SANDBOX_USER, str(self.dirs.uid)):
            raise SandboxUserUnsupportedError(
                f"the bwrap sandbox runs everything as {SANDBOX_USER!r}, not {user!r}"
            )
