"""Sandbox v2 isolation, attacked for real: seccomp, keyring, per-sample cgroup and tmpfs
quota, no-follow host file operations, the agent Python's mounts, host paths, preflight."""

import asyncio
import ctypes
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.util import SandboxEnvironment, SandboxUnavailableError

from sandmle.errors import SandmleError
from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment, SandboxLimits
from sandmle.harness.sandbox._isolation import host_isolation
from sandmle.harness.sandbox._preflight import AgentPythonError, SandboxPreflightError
from sandmle.harness.sandbox._quota import max_inodes
from sandmle.harness.sandbox.runtime import find_runtime

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
needs_cgroup = pytest.mark.skipif(
    host_isolation().cgroup is None, reason="per-sample cgroups need root and cgroupfs"
)
needs_quota = pytest.mark.skipif(
    not host_isolation().disk_quota, reason="per-sample tmpfs needs root"
)
needs_seccomp = pytest.mark.skipif(not host_isolation().seccomp, reason="libseccomp missing")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="per-sample uids need root")

DISK_MB = 64
LIMITS = SandboxLimits(
    memory_mb=512,
    max_processes=64,
    cpu_time_s=60,
    command_timeout_s=60,
    max_output_bytes=1024**2,
    disk_mb=DISK_MB,
    file_size_mb=1024,
)
Body = Callable[[SandboxEnvironment], Awaitable[Any]]


@pytest.fixture
def config(tmp_path: Path) -> BwrapConfig:
    return BwrapConfig(limits=LIMITS, base_dir=tmp_path / "sandboxes")


def in_sample(config: BwrapConfig, body: Body) -> Any:
    """Run `body(sandbox)` in a fresh sample, then check nothing of it is left."""

    async def main() -> Any:
        envs = await BwrapSandboxEnvironment.sample_init("test", config, {})
        try:
            return await body(envs["default"])
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("test", config, envs, False)

    result = asyncio.run(main())
    assert config.base_dir is not None and list(config.base_dir.iterdir()) == []
    return result


def sh(script: str, **kwargs: Any) -> Body:
    async def body(sandbox: SandboxEnvironment) -> Any:
        return await sandbox.exec(["bash", "-c", script], **kwargs)

    return body


def py(code: str) -> Body:
    async def body(sandbox: SandboxEnvironment) -> Any:
        return await sandbox.exec(["python", "-c", code])

    return body


# --- seccomp and the keyring --------------------------------------------------------

# x86_64 numbers; each call gets harmless arguments, so whatever fails is the filter.
SYSCALLS = {
    "keyctl": 250, "add_key": 248, "request_key": 249, "unshare": 272, "clone": 56,
    "mount": 165, "umount2": 166, "pivot_root": 155, "ptrace": 101, "perf_event_open": 298,
    "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "setns": 308, "open_tree": 428, "fsopen": 430,
    "pidfd_open": 434, "pidfd_getfd": 438, "process_madvise": 440, "process_mrelease": 448,
    "kcmp": 312, "migrate_pages": 256, "move_pages": 279,
}  # fmt: skip
CLONE_NEWUSER = 0x10000000
PROBE = f"""
import ctypes, json, os, signal, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
params = ctypes.create_string_buffer(120)
args = {{"unshare": ({CLONE_NEWUSER},), "clone": ({CLONE_NEWUSER} | signal.SIGCHLD, 0),
        "io_uring_setup": (1, params), "keyctl": (0, -3), "add_key": (b"user", b"k", b"v", 1, -3),
        "request_key": (b"user", b"k", None, 0), "userfaultfd": (0,),
        "pidfd_open": (os.getpid(), 0), "kcmp": (os.getpid(), os.getpid(), 0, 0, 0)}}
out = {{}}
for name, number in {SYSCALLS!r}.items():
    ctypes.set_errno(0)
    ret = libc.syscall(number, *args.get(name, (0, 0, 0, 0, 0)))
    if ret == 0 and name == "clone":
        os._exit(0)  # the filter let a user-namespace child through: let the test see it
    out[name] = ctypes.get_errno() if ret == -1 else "succeeded"
thread = threading.Thread(target=lambda: None); thread.start(); thread.join()
out["fork"] = os.waitpid(pid, 0)[1] if (pid := os.fork()) else os._exit(0)
out["threads"] = "ok"
out["seccomp"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0]
print(json.dumps(out))
"""


@needs_seccomp
def test_seccomp_denies_the_listed_syscalls_and_allows_fork_and_threads(
    config: BwrapConfig,
) -> None:
    import json

    result = in_sample(config, py(PROBE))
    assert result.success, result.stderr
    found = json.loads(result.stdout)
    assert found.pop("seccomp") == "2"
    assert (found.pop("fork"), found.pop("threads")) == (0, "ok")
    assert found == dict.fromkeys(SYSCALLS, 1)  # EPERM each, none succeeded


@needs_seccomp
def test_host_keyring_cannot_be_read_or_added_to(config: BwrapConfig) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    secret = b"sandmle-keyring-secret-5521"
    key = libc.syscall(248, b"user", b"sandmle-test-key", secret, len(secret), -3)
    if key < 0:
        pytest.skip("this host does not let us add a key to our session keyring")
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long\n"
        "buf = ctypes.create_string_buffer(128)\n"
        f"print(libc.syscall(250, 11, {key}, buf, 128), buf.value)\n"  # KEYCTL_READ
        "print(libc.syscall(248, b'user', b'from-sandbox', b'x', 1, -3))\n"
        "try:\n"
        "    print(open('/proc/keys').read())\n"
        "except OSError as error:\n"
        "    print('proc-keys', error.errno)\n"
    )
    try:
        result = in_sample(config, py(code))
        listing = Path("/proc/keys").read_text()
    finally:
        libc.syscall(250, 21, ctypes.c_long(key))  # KEYCTL_INVALIDATE
    assert result.success, result.stderr
    read, add = result.stdout.splitlines()[:2]
    assert read == "-1 b''" and add == "-1"
    assert secret.decode() not in result.stdout and "sandmle-test-key" not in result.stdout
    assert "from-sandbox" not in listing  # nothing was added to the host's keyring


# --- per-sample limits: cgroup and tmpfs ----------------------------------------------


@needs_cgroup
def test_four_400_mib_processes_under_a_512_mib_sample_limit_are_killed(
    config: BwrapConfig,
) -> None:
    script = (
        "for i in 1 2 3 4; do python -c "
        '"import time; b = b\'x\' * (400 << 20); time.sleep(4)" & pids="$pids $!"; done; '
        "for p in $pids; do wait $p; echo $?; done"
    )
    result = in_sample(config, sh(script))
    codes = [int(line) for line in result.stdout.split()]
    assert len(codes) == 4
    assert 137 in codes  # SIGKILL from the cgroup's OOM killer
    assert "512 MiB memory limit" in result.stderr


@needs_quota
def test_parallel_writers_stop_at_the_quota(config: BwrapConfig) -> None:
    script = (
        "for i in 1 2 3 4; do dd if=/dev/zero of=/tmp/w$i bs=1M count=100 2>/dev/null & done; "
        "wait; du -sk --apparent-size /tmp /home/agent /home/submission | awk '{s+=$1} END {print s}'"
    )

    async def body(sandbox: SandboxEnvironment) -> tuple[Any, int]:
        result = await sandbox.exec(["bash", "-c", script])
        rw = sandbox.as_type(BwrapSandboxEnvironment).dirs.rw
        info = os.statvfs(rw)
        return result, (info.f_blocks - info.f_bfree) * info.f_frsize

    result, used = in_sample(config, body)
    assert used <= DISK_MB * 1024**2
    assert int(result.stdout.split()[-1]) <= DISK_MB * 1024
    assert "disk quota" in result.stderr


@needs_quota
def test_deleted_but_open_files_count_toward_the_quota(config: BwrapConfig) -> None:
    code = (
        "import os\n"
        "f = open('/home/agent/hidden', 'wb'); os.unlink('/home/agent/hidden')\n"
        "written = 0\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        f.write(b'x' * 2**20); f.flush(); written += 2**20\n"
        "except OSError as error:\n"
        "    print(error.errno, written)\n"
    )
    result = in_sample(config, py(code))
    errno_, written = map(int, result.stdout.split())
    assert errno_ == 28  # ENOSPC
    assert written <= DISK_MB * 1024**2


@needs_quota
def test_30k_inodes_stop_at_the_quota(config: BwrapConfig) -> None:
    code = (
        "import os\n"
        "made = 0\n"
        "try:\n"
        "    for i in range(15000):\n"
        "        os.mkdir(f'/tmp/d{i}'); made += 1\n"
        "        open(f'/home/agent/f{i}', 'w').close(); made += 1\n"
        "except OSError as error:\n"
        "    print(error.errno, made)\n"
    )
    result = in_sample(config, py(code))
    errno_, made = map(int, result.stdout.split())
    assert errno_ == 28
    assert made < max_inodes(DISK_MB) < 30_000


# --- host-side file operations never follow the agent's paths -------------------------


def test_fifo_at_a_write_path_does_not_block(config: BwrapConfig) -> None:
    async def body(sandbox: SandboxEnvironment) -> tuple[float, Any, str]:
        await sandbox.exec(["mkfifo", "/home/submission/submission.csv"])
        start = time.monotonic()
        with pytest.raises(PermissionError):
            await sandbox.read_file("/home/submission/submission.csv")
        await sandbox.write_file("/home/submission/submission.csv", "id,y\n1,2\n")
        elapsed = time.monotonic() - start
        kind = await sandbox.exec(["stat", "-c", "%F", "/home/submission/submission.csv"])
        return elapsed, kind, await sandbox.read_file("/home/submission/submission.csv")

    elapsed, kind, text = in_sample(config, body)
    assert elapsed < 5
    assert kind.stdout.strip() == "regular file"  # the FIFO was replaced, never opened
    assert text == "id,y\n1,2\n"


async def _exists(sandbox: SandboxEnvironment, path: str) -> bool:
    try:
        await sandbox.read_file(path)
    except FileNotFoundError:
        return False
    return True


@needs_root
def test_paths_swapped_between_check_and_open_never_reach_the_host(
    config: BwrapConfig, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("host-secret")
    swapper = (  # d flips between the agent's dir and a link to a host dir, f.txt likewise,
        # until the hammer has met the links (stop) or a minute passed
        f"touch started; end=$((SECONDS + 60)); while [ ! -e stop ] && [ $SECONDS -lt $end ];"
        f" do rm -rf d; ln -sfn {outside} d; sleep 0.001; rm -f d; mkdir d; "
        f"ln -sfn {outside}/secret.txt d/f.txt; sleep 0.001; done"
    )

    async def body(sandbox: SandboxEnvironment) -> list[str]:
        outcomes: list[str] = []

        async def hammer() -> None:
            # Under load the swapper may start late: go once it runs, stop once the race
            # was met often enough (not after a fixed count that a slow host may not reach).
            deadline = time.monotonic() + 60
            while not await _exists(sandbox, "started") and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            i = 0
            while outcomes.count("PermissionError") < 20 and time.monotonic() < deadline:
                i += 1
                for action in (
                    sandbox.write_file(f"d/w{i}.txt", "agent-data"),
                    sandbox.write_file("d/f.txt", "agent-data"),
                    sandbox.read_file("d/secret.txt"),
                    sandbox.read_file("d/f.txt"),
                ):
                    try:
                        outcomes.append(str(await action))
                    except OSError as error:  # refused: a link or a vanished dir was met
                        outcomes.append(type(error).__name__)
            await sandbox.write_file("stop", "")

        await asyncio.gather(sandbox.exec(["bash", "-c", swapper], timeout=120), hammer())
        return outcomes

    outcomes = in_sample(config, body)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "host-secret"
    assert "host-secret" not in outcomes
    assert "PermissionError" in outcomes, Counter(outcomes)  # the race ran: links were met


def _make_venv(where: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(where)],
        check=True,
    )
    return where / "bin" / "python"


@needs_root
def test_venv_under_tmp_is_mounted_outside_writable_dirs(tmp_path: Path) -> None:
    """The old attack: a venv under /tmp was a mount point in the sample's /tmp; replacing
    it with a symlink made the next exec create a root-owned dir on the host."""
    venv_python = _make_venv(tmp_path / "x" / "venv")
    target = tmp_path / "pwned"
    config = BwrapConfig(
        limits=LIMITS, base_dir=tmp_path / "sandboxes", python=venv_python, required_modules=()
    )
    mount_points = (
        "import sys\n"
        "print(sys.prefix, sys.base_prefix)\n"
        "writable = ('/home/agent/', '/home/submission/', '/tmp/', '/dev/shm/')\n"
        "for line in open('/proc/self/mountinfo'):\n"
        "    point = line.split()[4]\n"
        "    if (point + '/').startswith(writable) and point.rstrip('/') + '/' not in writable:\n"
        "        print('inside', point)\n"
    )

    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        first = await sandbox.exec(["python", "-c", mount_points])
        venv = venv_python.parent.parent  # under /tmp: the old mount point in the sample's /tmp
        attack = await sandbox.exec(
            ["bash", "-c", f"mkdir -p {venv.parent} && ln -sfn {target} {venv}"]
        )
        second = await sandbox.exec(["python", "-c", "print('ran')"])
        return first, attack, second

    first, attack, second = in_sample(config, body)
    assert first.success, first.stderr
    assert first.stdout.split() == ["/opt/sandmle/venv", "/opt/sandmle/python"]
    assert second.stdout == "ran\n"
    assert not target.exists()


def test_mount_targets_inside_writable_dirs_are_refused() -> None:
    with pytest.raises(ValueError, match="inside a dir the agent can write"):
        BwrapConfig(ro_binds=((Path("/usr/share"), "/tmp/share"),))


# --- what the agent sees of the host --------------------------------------------------


def test_sandmle_is_not_importable_inside(config: BwrapConfig) -> None:
    pythons = [Path(sys.executable)]
    if (runtime := find_runtime()) is not None:
        pythons.append(runtime.python)
    check = (
        "import importlib\n"
        "for name in ('sandmle', 'inspect_ai'):\n"
        "    try:\n"
        "        importlib.import_module(name); print(name, 'imported')\n"
        "    except ImportError:\n"
        "        print(name, 'missing')\n"
    )
    for python in pythons:
        found = in_sample(config.model_copy(update={"python": python}), py(check)).stdout
        assert "sandmle missing" in found, python
        if python != Path(sys.executable):  # the agent runtime holds neither
            assert "inspect_ai missing" in found, python


def test_host_paths_are_hidden(config: BwrapConfig) -> None:
    script = "tr '\\0' ' ' </proc/1/cmdline; echo; cat /proc/self/mountinfo"

    async def main() -> tuple[Any, Any, str]:
        envs = await BwrapSandboxEnvironment.sample_init("test", config, {})
        sandbox = envs["default"]
        shown = await sandbox.exec(["bash", "-c", script])
        cgroup = await sandbox.exec(["cat", "/proc/self/cgroup"])
        await BwrapSandboxEnvironment.sample_cleanup("test", config, envs, False)
        with pytest.raises(SandboxUnavailableError) as gone:
            await sandbox.exec(["true"])
        return shown, cgroup, str(gone.value)

    shown, cgroup, gone = asyncio.run(main())
    assert " --args " in shown.stdout.splitlines()[0]  # options come through an fd
    assert str(config.base_dir) not in shown.stdout  # no sample dir in cmdline or mounts
    assert "sandmle" not in cgroup.stdout  # a cgroup namespace: the sample's cgroup is /
    assert str(config.base_dir) not in gone


# --- preflight ------------------------------------------------------------------------


def test_preflight_passes_for_the_default_python(
    config: BwrapConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    BwrapSandboxEnvironment._preflown.clear()
    asyncio.run(BwrapSandboxEnvironment.task_init("test", config))
    assert BwrapSandboxEnvironment._preflown  # passed, and remembered

    async def no_second_sample(*args: Any) -> None:
        raise AssertionError("the preflight ran twice")

    monkeypatch.setattr(BwrapSandboxEnvironment, "sample_init", no_second_sample)
    other_task = config.model_copy(update={"public_dir": None, "base_dir": config.base_dir})
    asyncio.run(BwrapSandboxEnvironment.task_init("other", other_task))


def test_preflight_stops_a_python_without_the_stack(tmp_path: Path) -> None:
    bare = tmp_path / "bare" / "bin" / "python"
    _make_venv(bare.parent.parent)
    (bare.parent.parent / "pyvenv.cfg").write_text(
        (bare.parent.parent / "pyvenv.cfg").read_text().replace("= true", "= false")
    )
    config = BwrapConfig(limits=LIMITS, base_dir=tmp_path / "sandboxes", python=bare)
    with pytest.raises(SandboxPreflightError) as raised:
        asyncio.run(BwrapSandboxEnvironment.task_init("test", config))
    message = str(raised.value)
    assert "\n" not in message
    assert "numpy" in message and "sandmle sandbox runtime" in message
    assert list((tmp_path / "sandboxes").iterdir()) == []


def test_exec_whose_python_cannot_run_is_an_error_not_a_failure(tmp_path: Path) -> None:
    bare = _make_venv(tmp_path / "bare")
    (tmp_path / "bare" / "pyvenv.cfg").write_text(
        (tmp_path / "bare" / "pyvenv.cfg").read_text().replace("= true", "= false")
    )
    config = BwrapConfig(limits=LIMITS, base_dir=tmp_path / "sandboxes", python=bare)

    async def body(sandbox: SandboxEnvironment) -> Any:
        with pytest.raises(AgentPythonError, match="No module named 'numpy'"):
            await sandbox.exec(["python", "-c", "import numpy"])
        with pytest.raises(AgentPythonError, match="python: command not found"):
            await sandbox.exec(["bash", "-c", "PATH=/nowhere; python -c 1"])
        return await sandbox.exec(["python", "-c", "import no_such_module_here"])

    other = in_sample(config, body)
    assert not other.success and "ModuleNotFoundError" in other.stderr  # the agent's own bug


def test_missing_isolation_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from sandmle.harness.sandbox import _isolation

    monkeypatch.setattr(_isolation, "seccomp_program", _raise_unavailable)
    _isolation.host_isolation.cache_clear()
    try:
        found = _isolation.host_isolation()
    finally:
        _isolation.host_isolation.cache_clear()
    assert not found.seccomp
    assert any("seccomp" in line and "libseccomp2" in line for line in found.missing)
    assert found.as_metadata()["seccomp"] is False


def _raise_unavailable() -> bytes:
    from sandmle.harness.sandbox._seccomp import SeccompUnavailableError

    raise SeccompUnavailableError("libseccomp is unavailable (test)")


def test_unrunnable_agent_python_is_a_one_line_error(tmp_path: Path) -> None:
    config = BwrapConfig(limits=LIMITS, base_dir=tmp_path / "s", python=tmp_path / "nope")
    with pytest.raises(SandmleError, match="SANDMLE_AGENT_PYTHON"):
        asyncio.run(BwrapSandboxEnvironment.sample_init("test", config, {}))


def test_failed_preflight_stops_the_eval(tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.util import SandboxEnvironmentSpec

    bare = _make_venv(tmp_path / "bare")
    cfg = tmp_path / "bare" / "pyvenv.cfg"
    cfg.write_text(cfg.read_text().replace("= true", "= false"))
    config = BwrapConfig(limits=LIMITS, base_dir=tmp_path / "sandboxes", python=bare)
    task = Task(dataset=[Sample(input="go")], sandbox=SandboxEnvironmentSpec("bwrap", config))
    with pytest.raises(SandboxPreflightError, match="sandmle sandbox runtime"):
        inspect_eval(task, model="mockllm/model", display="none", log_dir=str(tmp_path / "logs"))


@needs_cgroup
def test_cpus_caps_the_whole_sample(config: BwrapConfig) -> None:
    limited = config.model_copy(update={"limits": LIMITS.model_copy(update={"cpus": 0.1})})
    burn = (
        "import time\n"
        "wall, cpu = time.monotonic(), time.process_time()\n"
        "while time.process_time() - cpu < 0.3: pass\n"
        "print(time.monotonic() - wall, time.process_time() - cpu)\n"
    )

    async def body(sandbox: SandboxEnvironment) -> tuple[Any, str]:
        cgroup = sandbox.as_type(BwrapSandboxEnvironment).cgroup
        assert cgroup is not None
        result = await sandbox.exec(["python", "-c", burn])
        if cgroup.version == "v2":
            return result, (cgroup.paths[0] / "cpu.max").read_text().split()[0]
        return result, (cgroup.paths[-1] / "cpu.cfs_quota_us").read_text().strip()

    result, quota = in_sample(limited, body)
    assert result.success, result.stderr
    wall, cpu = map(float, result.stdout.split())
    assert quota == "10000"  # 0.1 of each 100 ms period
    assert wall >= cpu / 0.1 * 0.9  # never more than a tenth of a core, however idle the host


def test_a_tool_that_cannot_run_python_errors_the_sample(tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import bash
    from inspect_ai.util import SandboxEnvironmentSpec

    config = BwrapConfig(limits=LIMITS, base_dir=tmp_path / "sandboxes", required_modules=())
    calls = [
        ModelOutput.for_tool_call("mockllm", "bash", {"command": "PATH=/none; python train.py"}),
        ModelOutput.from_content("mockllm", "done"),
    ]
    for call in calls:  # with usage given, Inspect counts no tokens (which needs a download)
        call.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    task = Task(
        dataset=[Sample(input="train")],
        solver=[use_tools(bash()), generate()],
        sandbox=SandboxEnvironmentSpec("bwrap", config),
    )
    model = get_model("mockllm/model", custom_outputs=calls)
    log = inspect_eval(task, model=model, display="none", log_dir=str(tmp_path / "logs"))[0]
    sample = (log.samples or [])[0]
    assert sample.error is not None
    assert "could not run in the sandbox" in sample.error.message


def test_weaker_isolation_is_warned_once_and_logged_per_sample(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import InfoEvent
    from inspect_ai.util import SandboxEnvironmentSpec

    from sandmle.harness.sandbox import _isolation
    from sandmle.harness.sandbox import bwrap as bwrap_module

    full = host_isolation()
    weaker = _isolation.HostIsolation(full.cgroup, full.disk_quota, False, ("no seccomp (test)",))
    monkeypatch.setattr(_isolation, "host_isolation", lambda: weaker)
    with caplog.at_level("WARNING"):
        _isolation.warn_if_weaker.__wrapped__()
    assert [r.message for r in caplog.records if "WEAKER" in r.message] == [
        "SANDBOX ISOLATION IS WEAKER ON THIS HOST: no seccomp (test)"
    ]

    monkeypatch.setattr(bwrap_module, "warn_if_weaker", lambda: weaker)
    config = BwrapConfig(limits=LIMITS, base_dir=tmp_path / "sandboxes", required_modules=())
    task = Task(dataset=[Sample(input="go")], sandbox=SandboxEnvironmentSpec("bwrap", config))
    log = inspect_eval(task, model="mockllm/model", display="none", log_dir=str(tmp_path))[0]
    events = [e for e in (log.samples or [])[0].events if isinstance(e, InfoEvent)]
    assert {"sandbox_isolation": weaker.as_metadata()} in [e.data for e in events]


def test_exec_survives_losing_the_bwrap_started_ahead(config: BwrapConfig) -> None:
    import signal

    async def body(sandbox: SandboxEnvironment) -> Any:
        box = sandbox.as_type(BwrapSandboxEnvironment)
        assert box._launch is not None  # started with the sample
        os.killpg(box._launch.process.pid, signal.SIGKILL)  # as the OOM killer might
        await box._launch.process.wait()
        return await sandbox.exec(["echo", "ok"])

    assert in_sample(config, body).stdout == "ok\n"
