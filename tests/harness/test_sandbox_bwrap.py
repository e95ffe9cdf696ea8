"""The bwrap sandbox: real execs through the Inspect API, basic use and a red team."""

import asyncio
import os
import resource
import shutil
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import (
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentSpec,
    SandboxUserUnsupportedError,
    sandbox,
)

from sandmle.errors import SandmleError
from sandmle.harness.sandbox import (
    PUBLIC_DIR_METADATA_KEY,
    BwrapConfig,
    BwrapSandboxEnvironment,
    BwrapUnavailableError,
    SandboxLimits,
    bwrap_config,
    host_isolation,
)
from sandmle.harness.sandbox import bwrap as bwrap_module
from sandmle.harness.sandbox._samples import UID_COUNT, UID_FIRST, uid_pids

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="per-sample uids need root")

SECRET = "sandmle-private-answer-7f3a"
LIMITS = SandboxLimits(
    memory_mb=2048,
    max_processes=64,
    cpu_time_s=60,
    command_timeout_s=30,
    max_output_bytes=1024**2,
    disk_mb=50,
    file_size_mb=20,
    poll_interval_s=0.1,
)

Body = Callable[[SandboxEnvironment], Awaitable[Any]]


@pytest.fixture
def public_dir(tmp_path: Path) -> Path:
    public = tmp_path / "public"
    public.mkdir()
    (public / "train.csv").write_text("x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(40)))
    (public / "test.csv").write_text("id,x\n" + "".join(f"{i},{i}\n" for i in range(10)))
    return public


@pytest.fixture
def private_answers(tmp_path: Path) -> Path:
    """A host file the agent must never read (stands for a competition's answers)."""
    private = tmp_path / "private"
    private.mkdir()
    answers = private / "answers.csv"
    answers.write_text(f"id,y\n0,{SECRET}\n")
    return answers


@pytest.fixture
def config(tmp_path: Path, public_dir: Path) -> BwrapConfig:
    return BwrapConfig(public_dir=public_dir, limits=LIMITS, base_dir=tmp_path / "sandboxes")


@pytest.fixture
def run(config: BwrapConfig):
    """Run `body(sandbox)` in a fresh sample; afterwards no dir or process may be left."""

    uids: list[int] = []

    def _run(body: Body, metadata: dict[str, Any] | None = None) -> Any:
        async def main() -> Any:
            envs = await BwrapSandboxEnvironment.sample_init("test", config, metadata or {})
            uids.append(envs["default"].as_type(BwrapSandboxEnvironment).dirs.uid)
            try:
                return await body(envs["default"])
            finally:
                await BwrapSandboxEnvironment.sample_cleanup("test", config, envs, False)

        return asyncio.run(main())

    yield _run
    assert config.base_dir is not None
    assert list(config.base_dir.iterdir()) == []
    if os.geteuid() == 0:
        assert [pid for uid in uids for pid in uid_pids(uid)] == []


def sh(script: str, **kwargs: Any) -> Body:
    async def body(sandbox: SandboxEnvironment) -> Any:
        return await sandbox.exec(["bash", "-c", script], **kwargs)

    return body


def py(code: str, **kwargs: Any) -> Body:
    async def body(sandbox: SandboxEnvironment) -> Any:
        return await sandbox.exec(["python", "-c", code], **kwargs)

    return body


# --- basic use -----------------------------------------------------------------------


def test_ml_stack_reads_data_and_writes_submission(run) -> None:
    code = (
        "import pandas as pd, numpy as np\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "train = pd.read_csv('/home/data/train.csv'); test = pd.read_csv('/home/data/test.csv')\n"
        "model = LogisticRegression().fit(train[['x']], train.y)\n"
        "pd.DataFrame({'id': test.id, 'y': model.predict(test[['x']])})"
        ".to_csv('/home/submission/submission.csv', index=False)\n"
    )

    async def body(sandbox: SandboxEnvironment) -> str:
        result = await sandbox.exec(["python", "-c", code])
        assert result.success, result.stderr
        return await sandbox.read_file("/home/submission/submission.csv")

    submission = run(body)
    assert submission.splitlines()[0] == "id,y"
    assert len(submission.splitlines()) == 11


def test_runs_as_unprivileged_user_in_home_agent(run) -> None:
    result = run(sh("id -u; pwd; echo $HOME; cat /proc/self/status | grep CapEff"))
    uid, cwd, home, caps = result.stdout.splitlines()
    assert (cwd, home) == ("/home/agent", "/home/agent")
    assert caps.split()[1] == "0000000000000000"
    if os.geteuid() == 0:
        assert UID_FIRST <= int(uid) < UID_FIRST + UID_COUNT


def test_write_file_read_file_roundtrip(run) -> None:
    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        await sandbox.write_file("notes/a.txt", "line1\r\nline2\n")
        await sandbox.write_file("/tmp/blob.bin", b"\x00\xff")
        appended = await sandbox.exec(["bash", "-c", "echo more >> notes/a.txt && cat notes/a.txt"])
        blob = await sandbox.read_file("/tmp/blob.bin", text=False)
        text = await sandbox.read_file("/home/agent/notes/a.txt")
        data = await sandbox.read_file("/home/data/train.csv")
        return appended, blob, text, data

    appended, blob, text, data = run(body)
    assert appended.success, appended.stderr
    assert blob == b"\x00\xff"
    assert text == "line1\r\nline2\nmore\n"
    assert data.startswith("x,y\n")


def test_exec_env_cwd_input_and_clean_environment(run) -> None:
    os.environ["SANDMLE_HOST_MARKER"] = "leak"
    try:

        async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
            await sandbox.exec(["mkdir", "sub"])
            where = await sandbox.exec(["pwd"], cwd="sub")
            env = await sandbox.exec(["env"], env={"FOO": "bar"})
            echo = await sandbox.exec(["cat"], input="from stdin")
            return where, env, echo

        where, env, echo = run(body)
    finally:
        del os.environ["SANDMLE_HOST_MARKER"]
    assert where.stdout.strip() == "/home/agent/sub"
    assert "FOO=bar" in env.stdout and "MPLBACKEND=Agg" in env.stdout
    assert "SANDMLE_HOST_MARKER" not in env.stdout
    assert echo.stdout == "from stdin"


def test_failed_command_reports_exit_code(run) -> None:
    result = run(sh("echo oops >&2; exit 3"))
    assert (result.success, result.returncode, result.stderr) == (False, 3, "oops\n")


def test_metadata_public_dir_wins_over_config(run, tmp_path: Path) -> None:
    other = tmp_path / "other-public"
    other.mkdir()
    (other / "only-here.csv").write_text("a\n1\n")
    result = run(sh("ls /home/data"), {PUBLIC_DIR_METADATA_KEY: str(other)})
    assert result.stdout.split() == ["only-here.csv"]


def test_read_file_errors(run) -> None:
    async def body(sandbox: SandboxEnvironment) -> None:
        with pytest.raises(FileNotFoundError):
            await sandbox.read_file("missing.txt")
        await sandbox.exec(["mkdir", "adir"])
        with pytest.raises(IsADirectoryError):
            await sandbox.read_file("adir")
        with pytest.raises(IsADirectoryError):
            await sandbox.write_file("adir", "x")
        with pytest.raises(PermissionError):
            await sandbox.read_file("/etc/passwd")  # not a mapped dir
        with pytest.raises(PermissionError):
            await sandbox.write_file("/home/data/train.csv", "overwrite")
        with pytest.raises(PermissionError):
            await sandbox.write_file("../../escape.txt", "x")
        work = sandbox.as_type(BwrapSandboxEnvironment).dirs.work
        (work / "sparse.bin").touch()
        os.truncate(work / "sparse.bin", 200 * 1024**2)  # sparse: no disk use
        with pytest.raises(OutputLimitExceededError):
            await sandbox.read_file("sparse.bin", text=False)

    run(body)


def test_user_other_than_agent_is_unsupported(run) -> None:
    async def body(sandbox: SandboxEnvironment) -> None:
        with pytest.raises(SandboxUserUnsupportedError):
            await sandbox.exec(["id"], user="root")
        assert (await sandbox.exec(["id"], user="agent")).success

    run(body)


def test_missing_bwrap_is_one_line_with_install_hint(monkeypatch, config: BwrapConfig) -> None:
    bwrap_config.bwrap_path.cache_clear()
    monkeypatch.setattr(bwrap_config.shutil, "which", lambda name: None)
    try:
        with pytest.raises(BwrapUnavailableError, match="apt-get install -y bubblewrap"):
            asyncio.run(BwrapSandboxEnvironment.sample_init("test", config, {}))
    finally:
        bwrap_config.bwrap_path.cache_clear()


def test_cli_cleanup_removes_stray_sample(monkeypatch, tmp_path: Path) -> None:
    base = tmp_path / "base"
    monkeypatch.setattr(bwrap_module, "default_base_dir", lambda: base)
    config = BwrapConfig(limits=LIMITS)

    async def main() -> None:
        envs = await BwrapSandboxEnvironment.sample_init("test", config, {})
        assert len(list(base.iterdir())) == 1
        await BwrapSandboxEnvironment.cli_cleanup(None)
        assert list(base.iterdir()) == []
        sandbox = envs["default"].as_type(BwrapSandboxEnvironment)
        BwrapSandboxEnvironment._live.discard(sandbox.dirs.root)
        await sandbox._close_launch()  # our handle on its bwrap (a crashed run has none)

    asyncio.run(main())


# --- red team: each attack fails and the sandbox stays usable -------------------------


def test_host_private_file_is_invisible(run, private_answers: Path) -> None:
    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        by_path = await sandbox.exec(["cat", str(private_answers)])
        found = await sandbox.exec(["bash", "-c", "find / -name answers.csv 2>/dev/null"])
        grep = await sandbox.exec(["bash", "-c", f"grep -rl {SECRET} /home /tmp /root 2>/dev/null"])
        checkout = await sandbox.exec(["ls", str(Path(bwrap_module.__file__).parent)])
        after = await sandbox.exec(["echo", "still usable"])
        return by_path, found, grep, checkout, after

    by_path, found, grep, checkout, after = run(body)
    assert not by_path.success and SECRET not in by_path.stdout
    assert found.stdout == ""
    assert grep.stdout == ""
    assert not checkout.success
    assert after.stdout == "still usable\n"


def test_symlink_to_host_file_is_refused_by_read_file(run, private_answers: Path) -> None:
    async def body(sandbox: SandboxEnvironment) -> None:
        await sandbox.exec(["ln", "-s", str(private_answers), "leak"])
        await sandbox.exec(["ln", "-s", "/etc/shadow", "/home/submission/submission.csv"])
        with pytest.raises(PermissionError):
            await sandbox.read_file("leak")
        with pytest.raises(PermissionError):
            await sandbox.read_file("/home/submission/submission.csv")

    run(body)


def test_other_samples_are_invisible(config: BwrapConfig) -> None:
    async def main() -> str:
        first = await BwrapSandboxEnvironment.sample_init("test", config, {})
        second = await BwrapSandboxEnvironment.sample_init("test", config, {})
        try:
            await first["default"].write_file("/home/submission/mine.csv", SECRET)
            found = await second["default"].exec(["bash", "-c", "find / -name mine.csv 2>&1"])
            return found.stdout
        finally:
            for envs in (first, second):
                await BwrapSandboxEnvironment.sample_cleanup("test", config, envs, False)

    assert "mine.csv" not in asyncio.run(main())


def test_host_processes_are_invisible(run) -> None:
    os.environ["SANDMLE_HOST_MARKER"] = SECRET
    try:
        result = run(
            py(
                "import os\n"
                "pids = [int(p) for p in os.listdir('/proc') if p.isdigit()]\n"
                "print(max(pids))\n"
                "for pid in pids:\n"
                "    try:\n"
                f"        assert b'{SECRET}' not in open(f'/proc/{{pid}}/environ', 'rb').read()\n"
                "    except PermissionError:\n"
                "        pass\n"
                "try:\n"
                "    os.listdir('/proc/1/root'); print('root-visible')\n"
                "except PermissionError:\n"
                "    print('root-denied')\n"
            )
        )
    finally:
        del os.environ["SANDMLE_HOST_MARKER"]
    assert result.success, result.stderr
    max_pid, root = result.stdout.split()
    assert int(max_pid) < 10  # a fresh PID namespace: only the sandbox's own processes
    assert root == "root-denied"


def test_network_is_unreachable(run) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        f"for addr in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:\n"
        "    try:\n"
        "        socket.create_connection(addr, timeout=2); print('connected')\n"
        "    except OSError:\n"
        "        print('blocked')\n"
    )
    try:
        result = run(py(code))
    finally:
        listener.close()
    assert result.stdout.split() == ["blocked"] * 3


def test_writes_outside_writable_dirs_fail(run, public_dir: Path) -> None:
    targets = ["/usr/evil", "/home/data/evil", "/etc/evil", "/evil", "/root/evil"]
    script = "; ".join(f"touch {t} 2>/dev/null && echo wrote {t}" for t in targets)
    result = run(sh(script + "; echo done"))
    assert result.stdout == "done\n"
    assert sorted(p.name for p in public_dir.iterdir()) == ["test.csv", "train.csv"]
    assert not Path("/usr/evil").exists()


def test_disk_quota_stops_writes_and_sandbox_recovers(run) -> None:
    fill = (
        "import time\n"
        "for i in range(1000):\n"
        "    open(f'/tmp/fill{i}', 'wb').write(b'x' * 5 * 1024**2); time.sleep(0.02)\n"
    )

    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        start = time.monotonic()
        filled = await sandbox.exec(["python", "-c", fill])
        elapsed = time.monotonic() - start
        used = await sandbox.exec(["du", "-sm", "/tmp"])
        await sandbox.exec(["bash", "-c", "rm -f /tmp/fill*"])
        big_file = await sandbox.exec(
            ["python", "-c", "open('big', 'wb').write(bytes(30 * 2**20))"]
        )
        after = await sandbox.exec(["bash", "-c", "rm big && echo ok"])
        return filled, elapsed, used, big_file, after

    filled, elapsed, used, big_file, after = run(body)
    assert not filled.success and "disk quota" in filled.stderr
    assert elapsed < 10
    # a tmpfs quota stops writes exactly; a polled one kills soon after passing it
    assert int(used.stdout.split()[0]) <= (50 if host_isolation().disk_quota else 50 + 40)
    assert not big_file.success and "File too large" in big_file.stderr  # RLIMIT_FSIZE
    assert after.stdout == "ok\n"


@needs_root
def test_process_limit_caps_forks_and_leaves_nothing(run) -> None:
    code = (
        "import os, time\n"
        "made = 0\n"
        "for _ in range(300):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60); os._exit(0)\n"
        "        made += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print(made)\n"
    )

    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        result = await sandbox.exec(["python", "-c", code])
        left = uid_pids(sandbox.as_type(BwrapSandboxEnvironment).dirs.uid)
        after = await sandbox.exec(["echo", "ok"])
        return result, left, after

    result, left, after = run(body)
    assert 0 < int(result.stdout) < LIMITS.max_processes
    assert left == []  # the sleeping children died with the PID namespace
    assert after.success


def test_fork_bomb_ends_at_timeout(run) -> None:
    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            await sandbox.exec(["bash", "-c", ":(){ :|:& };:; sleep 100"], timeout=3)
        elapsed = time.monotonic() - start
        after = await sandbox.exec(["echo", "ok"])
        return elapsed, after

    elapsed, after = run(body)
    assert elapsed < 8
    assert after.stdout == "ok\n"


def test_allocating_30_gb_fails(run) -> None:
    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        big = await sandbox.exec(["python", "-c", "b = bytearray(30 * 1024**3)"])
        np_big = await sandbox.exec(["python", "-c", "import numpy; numpy.ones(30 * 1024**3 // 8)"])
        after = await sandbox.exec(["python", "-c", "b = bytearray(100 * 1024**2); print('ok')"])
        return big, np_big, after

    big, np_big, after = run(body)
    assert not big.success and "MemoryError" in big.stderr
    assert not np_big.success and "MemoryError" in np_big.stderr
    assert after.stdout == "ok\n"


def test_printing_1_gb_is_capped(run) -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        start = time.monotonic()
        with pytest.raises(OutputLimitExceededError) as raised:
            await sandbox.exec(["head", "-c", str(1024**3), "/dev/zero"])
        elapsed = time.monotonic() - start
        after = await sandbox.exec(["echo", "ok"])
        return raised.value, elapsed, after

    error, elapsed, after = run(body)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert len(error.truncated_output) <= LIMITS.max_output_bytes
    assert grown_kib < 100 * 1024  # far below the 1 GiB printed
    assert elapsed < 5
    assert after.stdout == "ok\n"


def test_sleep_past_timeout_raises_and_kills(run) -> None:
    async def body(sandbox: SandboxEnvironment) -> tuple[Any, ...]:
        uid = sandbox.as_type(BwrapSandboxEnvironment).dirs.uid
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            await sandbox.exec(["bash", "-c", "sleep 300 & sleep 300"], timeout=1)
        elapsed = time.monotonic() - start
        left = uid_pids(uid) if os.geteuid() == 0 else []
        daemon = await sandbox.exec(["bash", "-c", "setsid nohup sleep 300 >/dev/null 2>&1 &"])
        left_after_daemon = uid_pids(uid) if os.geteuid() == 0 else []
        return elapsed, left, daemon, left_after_daemon

    elapsed, left, daemon, left_after_daemon = run(body)
    assert elapsed < 3
    assert left == [] and left_after_daemon == []
    assert daemon.success


@needs_root
def test_unreadable_public_dir_is_refused(config: BwrapConfig, public_dir: Path) -> None:
    public_dir.chmod(0o700)
    with pytest.raises(SandmleError, match="chmod -R o\\+rX"):
        asyncio.run(BwrapSandboxEnvironment.sample_init("test", config, {}))


def test_inspect_eval_end_to_end(config: BwrapConfig) -> None:
    """Registered as "bwrap": Inspect copies sample files in, runs the solver, cleans up."""

    @solver
    def write_submission() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            result = await sandbox().exec(["bash", "-c", "cat notes.txt > /home/submission/s.csv"])
            assert result.success, result.stderr
            return state

        return solve

    @scorer(metrics=[accuracy()])
    def submitted() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            text = await sandbox().read_file("/home/submission/s.csv")
            return Score(value=CORRECT if text == target.text else INCORRECT)

        return score

    task = Task(
        dataset=[Sample(input="go", target="a,b\n", files={"notes.txt": "a,b\n"})],
        solver=write_submission(),
        scorer=submitted(),
        sandbox=SandboxEnvironmentSpec("bwrap", config),
    )
    log = inspect_eval(task, model="mockllm/model", display="none")[0]
    assert log.status == "success", log.error
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert config.base_dir is not None and list(config.base_dir.iterdir()) == []


def test_agent_python_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from sandmle.harness.sandbox import runtime
    from sandmle.harness.sandbox.bwrap_config import AGENT_PYTHON_ENV, BwrapConfig

    monkeypatch.delenv(AGENT_PYTHON_ENV, raising=False)
    built = runtime.find_runtime()
    assert BwrapConfig().python == (built.python if built else Path(sys.executable))
    monkeypatch.setattr(runtime, "find_runtime", lambda: None)
    assert BwrapConfig().python == Path(sys.executable)
    monkeypatch.setenv(AGENT_PYTHON_ENV, str(tmp_path / "venv/bin/python"))
    assert BwrapConfig().python == tmp_path / "venv/bin/python"
