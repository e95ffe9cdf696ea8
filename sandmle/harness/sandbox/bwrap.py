"""The `bwrap` sandbox: each sample gets one sandbox, set up once, and every exec runs in it.

Inside, the agent sees `/usr` (and the /bin, /lib links), a few /etc files, the agent
Python at fixed read-only paths under /opt/sandmle, the competition's public data read-only
at `/home/data`, and its own writable `/home/agent` (cwd and HOME), `/home/submission` and
`/tmp`. No network, fresh PID/IPC/UTS/cgroup namespaces and /proc, a seccomp deny list, and,
when we run as root, a per-sample unprivileged uid, a per-sample cgroup holding every process
(total memory, pids, CPU) and a sized tmpfs holding the writable dirs (the disk quota).
Limits: see `SandboxLimits`; the security model is in the README.
"""

import asyncio
import functools
import logging
import os
import posixpath
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, overload

import anyio
from inspect_ai.log import transcript
from inspect_ai.util import (
    ExecResult,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    SandboxUserUnsupportedError,
    sandboxenv,
)
from pydantic import BaseModel
from typing_extensions import override

from ._cgroup import SampleCgroup, remove_cgroup_named
from ._command import (
    BASE_ENV,
    COMMAND_ENV,
    DATA_DIR,
    MAX_TRAMPOLINE_COMMAND,
    SUBMISSION_DIR,
    TMP_DIR,
    TRAMPOLINE,
    WORK_DIR,
    Bind,
    SampleDirs,
    exec_options,
    quote_command,
    sample_options,
    sandbox_command,
)
from ._files import locate, read_host_file, write_host_file
from ._isolation import ISOLATION_EVENT, HostIsolation, warn_if_weaker
from ._preflight import (
    AgentPythonError,
    SandboxPreflightError,
    check_preflight,
    preflight_argv,
    python_failure,
)
from ._process import (
    DiskWatch,
    Launch,
    LaunchLostError,
    ProcessOutcome,
    launch,
    run_launched,
    run_limited,
)
from ._python import PythonLayout, python_layout
from ._quota import quota_full
from ._release import release_orphans
from ._samples import (
    LAUNCH_FILE,
    SANDBOX_USER,
    create_sample_dirs,
    default_base_dir,
    record_process,
    remove_all,
    remove_sample_dirs,
)
from ._seccomp import seccomp_program
from .bwrap_config import (
    AGENT_PYTHON_ENV,
    BwrapConfig,
    bwrap_path,
    resolve_config,
    sample_public_dir,
)
from .limits import THREAD_ENV_VARS
from .warm import (
    SHIM_DIR,
    WARM_DIR,
    WarmPythonConfig,
    WarmServer,
    prepare_warm_dir,
    skip_shim,
    start_server,
    wants_server,
)

logger = logging.getLogger(__name__)


@functools.cache
def _seccomp_or_none(enabled: bool) -> bytes | None:
    return seccomp_program() if enabled else None


def _memfd(name: str, data: bytes) -> int:
    """A fresh fd holding `data`, read from the start (bwrap reads it to the end)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _preflight_key(config: BwrapConfig) -> tuple:
    """What the preflight checks depend on (not the data or base dirs, which vary per task)."""
    return (config.python, config.required_modules, config.limits, config.ro_binds)


@sandboxenv(name="bwrap")
class BwrapSandboxEnvironment(SandboxEnvironment):
    """One sample's bubblewrap sandbox."""

    _live: set[Path] = set()  # sample roots this process made and has not removed
    _cgroups: dict[Path, SampleCgroup] = {}  # their cgroups, by root
    _preflown: set[tuple] = set()  # `_preflight_key`s whose preflight passed in this process

    def __init__(
        self,
        dirs: SampleDirs,
        config: BwrapConfig,
        public_dir: Path | None,
        cgroup: SampleCgroup | None = None,
        isolation: HostIsolation | None = None,
    ) -> None:
        super().__init__()
        self.dirs = dirs
        self.config = config
        self.public_dir = public_dir
        self.cgroup = cgroup
        self.isolation = isolation or warn_if_weaker()
        layout = python_layout(config.python)
        self._python_env = dict(layout.env)
        self._path = ":".join([layout.bin_dir, "/usr/local/bin", "/usr/bin", "/bin"])
        self.warm: WarmServer | None = None  # warm Python hook (see `warm`)
        self._warm_python = f"{layout.bin_dir}/python"
        if config.warm_python.enabled:
            self._path = f"{SHIM_DIR}:{self._path}"
        self._options = sample_options(
            dirs, limits=config.limits, public_dir=public_dir, binds=self._binds(layout)
        )  # built once: each exec only adds its env and cwd
        self._seccomp = _seccomp_or_none(self.isolation.seccomp)
        self._launch: Launch | None = None  # the next exec's bwrap, started ahead
        self._launch_loop: object = None

    def _binds(self, layout: PythonLayout) -> list[Bind]:
        binds = list(layout.binds) + layout.pyvenv_bind(self.dirs.etc / "pyvenv.cfg")
        if self.config.warm_python.enabled:
            binds.append(("--ro-bind", str(self.dirs.root / "warm"), WARM_DIR))
        return binds + [("--ro-bind", str(host), dest) for host, dest in self.config.ro_binds]

    @override
    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        bwrap_path()
        resolved = resolve_config(config)
        warn_if_weaker()
        base = resolved.base_dir or default_base_dir()
        released = await anyio.to_thread.run_sync(release_orphans, base)
        if released:  # a run killed before its cleanup (SIGKILL, OOM, SIGTERM) left them
            logger.warning(
                "released %d sandbox sample(s) of ended runs under %s", len(released), base
            )
        await cls.preflight(resolved)

    @classmethod
    async def preflight(cls, config: BwrapConfig) -> None:
        """Once per config and process: in a throwaway sample, check that the agent's Python
        runs and imports its stack, that sandmle does not import, and that the limits hold.

        Raises:
          SandboxPreflightError: one line naming what failed and the fix.
        """
        key = _preflight_key(config)
        if key in cls._preflown:
            return
        config = config.model_copy(update={"warm_python": WarmPythonConfig()})  # no server
        envs = await cls.sample_init("preflight", config, {})
        sandbox = envs["default"].as_type(cls)
        try:
            result = await sandbox.exec(preflight_argv(config.required_modules), timeout=120)
            check_preflight(
                config.python,
                result,
                seccomp=sandbox.isolation.seccomp,
                privileged=sandbox.dirs.privileged,
            )
            sandbox.check_limits()
        finally:
            await cls.sample_cleanup("preflight", config, envs, False)
        cls._preflown.add(key)

    def check_limits(self) -> None:
        """Raise `SandboxPreflightError` unless the sample's cgroup and quota are in force."""
        limits = self.config.limits
        if self.cgroup is not None:
            if self.cgroup.memory_limit() != limits.memory_mb * 1024**2:
                raise SandboxPreflightError("the sample cgroup's memory limit did not take")
            if self.cgroup.memory_peak() == 0:  # None: this kernel does not say
                raise SandboxPreflightError(
                    "sandboxed processes do not run in the sample's cgroup; check that "
                    "/sys/fs/cgroup is writable"
                )
        if self.isolation.disk_quota:
            info = os.statvfs(self.dirs.rw)
            if info.f_blocks * info.f_frsize != limits.disk_mb * 1024**2:
                raise SandboxPreflightError("the sample's tmpfs quota is not mounted")

    @override
    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, Any]
    ) -> dict[str, SandboxEnvironment]:
        bwrap_path()
        resolved = resolve_config(config)
        public_dir = sample_public_dir(resolved, metadata)
        isolation = warn_if_weaker()
        layout = await anyio.to_thread.run_sync(python_layout, resolved.python)
        base = resolved.base_dir or default_base_dir()
        quota = resolved.limits.disk_mb if isolation.disk_quota else None
        dirs = await anyio.to_thread.run_sync(create_sample_dirs, base, quota)
        cls._live.add(dirs.root)
        try:
            cgroup = None
            if isolation.cgroup is not None:
                cgroup = SampleCgroup.create(dirs.root.name, resolved.limits)
                cls._cgroups[dirs.root] = cgroup
            if layout.pyvenv_cfg is not None:
                (dirs.etc / "pyvenv.cfg").write_text(layout.pyvenv_cfg)
                os.chmod(dirs.etc / "pyvenv.cfg", 0o644)
            environment = cls(dirs, resolved, public_dir, cgroup, isolation)
            environment._launch = await environment._new_launch()
            environment._prepare_warm()
        except BaseException:
            await cls._remove(dirs)
            raise
        if isolation.missing:
            transcript().info({ISOLATION_EVENT: isolation.as_metadata()}, source="bwrap")
        return {"default": environment}

    @classmethod
    async def _remove(cls, dirs: SampleDirs) -> None:
        cgroup = cls._cgroups.pop(dirs.root, None)
        if cgroup is not None:  # kill first: no process may write on while dirs go
            await anyio.to_thread.run_sync(cgroup.kill)
        await anyio.to_thread.run_sync(remove_sample_dirs, dirs)
        if cgroup is not None:
            await anyio.to_thread.run_sync(cgroup.remove)
        cls._live.discard(dirs.root)

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
            await environment.as_type(cls)._close_launch()
            await anyio.to_thread.run_sync(environment.as_type(cls)._stop_warm)
            await cls._remove(environment.as_type(cls).dirs)

    @override
    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        if not cleanup:  # --no-sandbox-cleanup: leave the dirs for inspection
            return
        for root in list(cls._live):
            cgroup = cls._cgroups.pop(root, None)
            if cgroup is not None:
                await anyio.to_thread.run_sync(cgroup.remove)
            await anyio.to_thread.run_sync(remove_all, root.parent, root.name)
            cls._live.discard(root)

    @override
    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        removed = await anyio.to_thread.run_sync(remove_all, default_base_dir(), id)
        for root in removed:
            await anyio.to_thread.run_sync(remove_cgroup_named, root.name)

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
            raise SandboxUnavailableError("this sample's sandbox was cleaned up")
        self._warm_on_demand(cmd)
        if env is None or "PATH" not in env:  # `python` is the shim: skip it where it would
            cmd = skip_shim(self.config.warm_python, self._warm_python, cmd)
        oom_before = self.cgroup.oom_kills() if self.cgroup is not None else 0
        outcome = await self._run(
            cmd,
            posixpath.join(WORK_DIR, cwd or "."),
            env or {},
            input.encode() if isinstance(input, str) else input,
            timeout or self.config.limits.command_timeout_s,
        )
        result = ExecResult(
            success=outcome.returncode == 0 and not outcome.disk_exceeded,
            returncode=outcome.returncode,
            stdout=outcome.stdout.decode("utf-8", errors="replace"),
            stderr=outcome.stderr.decode("utf-8", errors="replace")
            + self._notes(outcome.disk_exceeded, oom_before),
        )
        if (failure := python_failure(result, self.config.required_modules)) is not None:
            raise AgentPythonError(
                f"the agent's Python could not run in the sandbox ({failure}); build the agent "
                f"runtime with `sandmle sandbox runtime` or set {AGENT_PYTHON_ENV}"
            )
        return result

    async def _run(
        self, cmd: list[str], cwd: str, env: dict[str, str], input: bytes | None, timeout: float
    ) -> ProcessOutcome:
        """Run `cmd` in a bwrap started ahead (see `Launch`), or in a fresh one when none
        is ready (concurrent execs, another event loop, a very long command)."""
        limits = self.config.limits
        max_output = min(limits.max_output_bytes, SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE)
        quoted = quote_command(cmd) if cmd else ""
        started = self._take_launch()
        if started is not None and quoted and len(quoted) <= MAX_TRAMPOLINE_COMMAND:
            self._launch = await self._new_launch()  # the next exec's, joining meanwhile
            options = self._options + exec_options(cwd=cwd, env=self._exec_env(env))
            options += ["--setenv", COMMAND_ENV, quoted]
            try:
                return await run_launched(
                    started, b"".join(arg.encode() + b"\0" for arg in options),
                    input=input, timeout=timeout, max_output=max_output,
                    disk_watch=self._disk_watch(),
                )  # fmt: skip
            except LaunchLostError:
                started = None  # nothing ran: run it in a fresh bwrap below
        if started is not None:
            self._launch = started  # unused: keep it for the next exec
        argv, fds = self._bwrap(cmd, cwd, env)
        try:
            return await run_limited(
                argv, input=input, timeout=timeout, max_output=max_output,
                launcher=self.cgroup.join_prefix() if self.cgroup is not None else (),
                pass_fds=fds, disk_watch=self._disk_watch(),
            )  # fmt: skip
        finally:
            for fd in fds:
                os.close(fd)

    # --- launches: a bwrap per exec, started one exec ahead so the cgroup join (which
    # waits for an RCU grace period in cgroup v1, 100s of ms on a loaded host) is not timed

    async def _new_launch(self) -> Launch | None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio): every exec starts its own bwrap
            return None
        command = sandbox_command(
            self.dirs, self.config.limits, TRAMPOLINE, cgroup=self.cgroup is not None
        )
        argv, fds = [bwrap_path()], []
        if self._seccomp is not None:
            fds.append(_memfd("bwrap-seccomp", self._seccomp))
            argv += ["--seccomp", str(fds[0])]
        launcher = self.cgroup.join_prefix() if self.cgroup is not None else ()
        try:
            started = await launch([*argv, "--", *command], launcher=launcher, pass_fds=fds)
        finally:
            for fd in fds:
                os.close(fd)
        self._launch_loop = loop
        record_process(self.dirs.root / LAUNCH_FILE, started.process.pid)
        return started

    def _take_launch(self) -> Launch | None:
        started, self._launch = self._launch, None
        if started is None:
            return None
        try:
            same_loop = asyncio.get_running_loop() is self._launch_loop
        except RuntimeError:
            same_loop = False
        if not same_loop:  # its pipes belong to a loop that may be gone
            started.discard()
            return None
        return started

    async def _close_launch(self) -> None:
        started = self._take_launch()  # one from another loop is discarded there
        if started is not None:
            await started.aclose()

    def _exec_env(self, env: dict[str, str]) -> dict[str, str]:
        threads = {name: str(self.config.limits.threads) for name in THREAD_ENV_VARS}
        return {"PATH": self._path, **BASE_ENV, **threads, **self._python_env, **env}

    def _bwrap(self, cmd: list[str], cwd: str, env: dict[str, str]) -> tuple[list[str], list[int]]:
        """The bwrap argv that runs `cmd` (after the cgroup launcher), and the fds it reads
        (the caller passes them to bwrap and closes them)."""
        options = self._options + exec_options(cwd=cwd, env=self._exec_env(env))
        command = sandbox_command(
            self.dirs, self.config.limits, cmd, cgroup=self.cgroup is not None
        )
        fds = [_memfd("bwrap-args", b"".join(arg.encode() + b"\0" for arg in options))]
        argv = [bwrap_path(), "--args", str(fds[0])]
        if self._seccomp is not None:
            fds.append(_memfd("bwrap-seccomp", self._seccomp))
            argv += ["--seccomp", str(fds[1])]
        return [*argv, "--", *command], fds

    # --- warm Python hook: one server per sample, started and stopped with it (see `warm`) ---

    def _prepare_warm(self) -> None:
        if self.config.warm_python.enabled:
            prepare_warm_dir(self.dirs.root, self._warm_python, self.config.warm_python)
            if self.config.warm_python.start == "sample":
                self._start_warm()

    def _warm_on_demand(self, cmd: list[str]) -> None:
        if self.warm is None and wants_server(self.config.warm_python, cmd):
            self._start_warm()

    def _start_warm(self) -> None:
        owner = self.dirs.uid if self.dirs.privileged else None
        self.warm = start_server(
            self._spawn, self.dirs.root, self._warm_python, self.config.warm_python, owner
        )

    def _spawn(self, cmd: list[str], pass_fds: Sequence[int], stderr: int) -> subprocess.Popen:
        """Start `cmd` in this sample's sandbox in the background, set up as exec sets it up."""
        argv, fds = self._bwrap(cmd, WORK_DIR, {})
        launcher = self.cgroup.join_prefix() if self.cgroup is not None else ()
        try:
            return subprocess.Popen(
                [*launcher, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=stderr, pass_fds=(*fds, *pass_fds), start_new_session=True,
            )  # fmt: skip
        finally:
            for fd in fds:
                os.close(fd)

    def _stop_warm(self) -> None:
        if self.warm is not None:
            self.warm.stop()
            self.warm = None

    def _disk_watch(self) -> DiskWatch | None:
        if self.isolation.disk_quota:
            return None  # the tmpfs enforces it
        limits = self.config.limits
        return DiskWatch(self.dirs.writable(), limits.disk_mb * 1024**2, limits.poll_interval_s)

    def _notes(self, disk_exceeded: bool, oom_before: int) -> str:
        """Lines appended to stderr saying which sample limit stopped the command."""
        limits = self.config.limits
        notes = ""
        if disk_exceeded:
            notes += (
                f"\nsandbox: killed: files in /home/agent, /home/submission and /tmp exceed "
                f"the {limits.disk_mb} MiB disk quota; delete some before going on.\n"
            )
        elif self.isolation.disk_quota and quota_full(self.dirs.rw):
            notes += (
                f"\nsandbox: files in /home/agent, /home/submission and /tmp fill the "
                f"{limits.disk_mb} MiB disk quota (or its file count); delete some before "
                f"going on.\n"
            )
        if self.cgroup is not None and self.cgroup.oom_kills() > oom_before:
            notes += (
                f"\nsandbox: killed: the sample's processes (and its files, which live in "
                f"memory) passed its {limits.memory_mb} MiB memory limit.\n"
            )
        return notes

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        target = locate(self._host_mounts(), file, write=True)
        owner = self.dirs.uid if self.dirs.privileged else None
        await anyio.to_thread.run_sync(write_host_file, target, contents, owner)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        target = locate(self._host_mounts(), file, write=False)
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        return await anyio.to_thread.run_sync(read_host_file, target, text, limit)

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
