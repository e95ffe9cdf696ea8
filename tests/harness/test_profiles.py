import shutil
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
from sandmle.benchmarks.mle_bench.task import mle_bench_lite
from sandmle.errors import SandmleError
from sandmle.harness.profiles import DEFAULT_PROFILE, PROFILES, profile_values
from sandmle.harness.sandbox import BwrapSandboxEnvironment, SandboxLimits
from sandmle.harness.sandbox._command import gpu_device_args
from sandmle.harness.sandbox._isolation import host_isolation
from sandmle.harness.task import TaskLimits


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_value_is_a_task_limit_and_validates(name: str) -> None:
    assert set(PROFILES[name]) <= set(TaskLimits.model_fields)
    limits = TaskLimits.from_args({"profile": name})
    assert {k: getattr(limits, k) for k in PROFILES[name]} == {
        k: tuple(v) if isinstance(v, list) else v for k, v in PROFILES[name].items()
    }


def test_micro_is_the_default_and_equals_the_field_defaults() -> None:
    assert DEFAULT_PROFILE == "micro"
    assert TaskLimits.from_args({}) == TaskLimits()
    assert TaskLimits().sandbox_limits() == SandboxLimits(command_timeout_s=600)


def test_mle_bench_profile_is_mle_benchs_budget() -> None:
    limits = TaskLimits.from_args({"profile": "mle-bench"})
    assert limits.time_limit == 24 * 3600
    assert limits.message_limit == 2 * 500 + 2
    box = limits.sandbox_limits()
    assert (box.shm_mb, box.cpus, box.gpus, box.threads) == (4096, 4.0, -1, 4)


def test_explicit_values_override_the_profile() -> None:
    limits = TaskLimits.from_args({"profile": "mle-bench", "gpus": 0, "time_limit": 60})
    assert (limits.gpus, limits.time_limit, limits.shm_mb) == (0, 60, 4096)


def test_every_sandbox_limit_is_settable_from_task_arguments() -> None:
    args = {"cpu_time_s": 11, "file_size_mb": 12, "shm_mb": 13, "cpus": 1.5, "gpus": 2}
    box = TaskLimits.from_args({**args, "threads": 3}).sandbox_limits()
    assert (box.cpu_time_s, box.file_size_mb, box.shm_mb, box.cpus, box.gpus) == tuple(
        args.values()
    )
    assert box.threads == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"profile": "huge"}, "unknown profile 'huge'; known: micro, mle-bench"),
        ({"shm_gb": 4}, "unknown task argument(s): shm_gb"),
        ({"sandbox": "vm"}, "task argument sandbox:"),
    ],
)
def test_bad_arguments_are_one_line_errors(args: dict, message: str) -> None:
    with pytest.raises(SandmleError) as info:
        TaskLimits.from_args(args)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_profile_values_are_copies() -> None:
    profile_values("micro")["time_limit"] = 1
    assert PROFILES["micro"]["time_limit"] == 1800


def test_gpu_devices_are_bound_into_bwrap(tmp_path: Path) -> None:
    for name in ("nvidia0", "nvidia1", "nvidia10", "nvidiactl", "nvidia-uvm", "null"):
        (tmp_path / name).touch()
    bound = gpu_device_args(2, tmp_path)[2::3]
    assert bound == [str(tmp_path / n) for n in ("nvidia0", "nvidia1", "nvidia-uvm", "nvidiactl")]
    assert str(tmp_path / "nvidia10") in gpu_device_args(-1, tmp_path)
    assert gpu_device_args(0, tmp_path) == []
    with pytest.raises(SandmleError, match="4 GPU"):
        gpu_device_args(4, tmp_path)


def test_all_gpus_on_a_host_without_any_binds_nothing(tmp_path: Path) -> None:
    (tmp_path / "nvidiactl").touch()
    assert gpu_device_args(-1, tmp_path) == []


@solver
def _probe_limits() -> Solver:
    """Test-only: reads the limits from inside the sandbox, and the sample's cgroup files."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        box = sandbox()
        inside = await box.exec(["sh", "-c", "cat /proc/self/limits /proc/self/cgroup; env"])
        shm = await box.exec(["df", "-Pk", "/dev/shm"])
        state.metadata["inside"] = inside.stdout + shm.stdout
        group = box.as_type(BwrapSandboxEnvironment).cgroup
        files = {} if group is None else {str(p): _cgroup_values(p) for p in group.paths}
        state.metadata["cgroup"] = files
        return state

    return solve


def _cgroup_values(path: Path) -> dict[str, str]:
    names = ("memory.limit_in_bytes", "memory.max", "pids.max", "cpu.cfs_quota_us", "cpu.max")
    return {n: (path / n).read_text().strip() for n in names if (path / n).is_file()}


def _limit(text: str, name: str) -> str:
    (line,) = [line for line in text.splitlines() if line.startswith(name)]
    return line[len(name) :].split()[0]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
def test_mle_bench_profile_round_trips_into_the_sandbox(tmp_path: Path) -> None:
    cid = "spooky-author-identification"
    build_replicas(tmp_path / "data", [cid])
    # agent_extras off: building a runtime with torch is for the runtime's own (slow) tests.
    task = mle_bench_lite(
        data_dir=str(tmp_path / "data"), competitions=cid, profile="mle-bench", agent_extras=[]
    )
    assert task.time_limit == 24 * 3600 and task.message_limit == 1002
    (log,) = inspect_eval(
        task, model="mockllm/model", solver=_probe_limits(), log_dir=str(tmp_path / "logs"),
        display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    assert log.eval.task_args.get("profile") == "mle-bench"
    (sample,) = log.samples or []
    inside = sample.metadata["inside"]
    assert _limit(inside, "Max cpu time") == str(4 * 24 * 3600)
    assert _limit(inside, "Max file size") == str(65536 * 1024**2)
    (shm_line,) = [line for line in inside.splitlines() if line.endswith("/dev/shm")]
    shm_kib = int(shm_line.split()[1])
    assert shm_kib == 4096 * 1024  # df -Pk: the 4 GiB /dev/shm tmpfs
    assert "memory" in inside and "pids" in inside  # in its own cgroup namespace
    assert "OMP_NUM_THREADS=4" in inside and "MKL_NUM_THREADS=4" in inside
    cgroup = sample.metadata["cgroup"]
    if host_isolation().cgroup is not None:  # the sample's own cgroup carries the limits
        values = {k: v for files in cgroup.values() for k, v in files.items()}
        memory = values.get("memory.limit_in_bytes") or values.get("memory.max")
        assert memory == str(65536 * 1024**2)
        assert values["pids.max"] == "1024"
        quota = values.get("cpu.cfs_quota_us") or values["cpu.max"].split()[0]
        assert quota == "400000"  # 4 CPUs of 100 ms periods


def test_agent_extras_pick_the_agent_python(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from sandmle.harness import task as task_module

    built: list[tuple[str, ...]] = []

    class _Runtime:
        python = tmp_path / "runtime" / "bin" / "python"

    def ensure(extras: tuple[str, ...]) -> _Runtime:
        built.append(tuple(extras))
        return _Runtime()

    monkeypatch.delenv("SANDMLE_AGENT_PYTHON", raising=False)
    monkeypatch.setattr(task_module, "ensure_runtime", ensure)
    assert task_module.bwrap_python(("lightgbm",)) == _Runtime.python
    assert task_module.bwrap_python(()) is None and built == [("lightgbm",)]
    monkeypatch.setenv("SANDMLE_AGENT_PYTHON", "/opt/mine/bin/python")
    assert task_module.bwrap_python(("torch",)) == Path("/opt/mine/bin/python")
    limits = TaskLimits.from_args({"profile": "mle-bench"})
    assert task_module.agent_image(limits) == "sandmle-agent:lightgbm-torch-xgboost"
    assert task_module.agent_image(limits.model_copy(update={"image": "r/a:1"})) == "r/a:1"
    assert task_module.agent_image(TaskLimits()) == "sandmle-agent:latest"
