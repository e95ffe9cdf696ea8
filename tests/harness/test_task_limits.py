"""Every benchmark task turns its ``-T`` limits into the sandbox's, read back from inside.

The issue "Sandbox v3" (#30) found ``-T file_size_mb=64`` running at 2048 MiB on the synthetic
task and ``cpus``/``threads``/``shm_mb`` dropped with only Inspect's warning: here each limit
is set away from its default on the synthetic, MLE-bench and MLE-Dojo tasks, and each task's
first sample's sandbox must show it (the CPU cap is read from the cgroup of a process
running inside, since the sandbox has no /sys).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task

from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
from sandmle.benchmarks.mle_bench.task import mle_bench
from sandmle.benchmarks.mle_dojo.competitions import VIEWS_ENV
from sandmle.benchmarks.mle_dojo.replicas import DOJO_SUBDIR, build_replicas_with_dojo
from sandmle.benchmarks.mle_dojo.task import mle_dojo
from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.errors import SandmleError
from sandmle.harness.sandbox import BwrapSandboxEnvironment
from sandmle.harness.sandbox._cgroup import CFS_PERIOD_US
from sandmle.harness.task import ENFORCED, SANDBOX_FIELDS, TaskLimits

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")

COMPETITION = "spooky-author-identification"
DOJO_COMPETITION = "new-york-city-taxi-fare-prediction"  # one MLE-Dojo's own metric grades
ARGS = {
    "file_size_mb": 64,
    "cpus": 1.5,
    "threads": 3,
    "shm_mb": 32,
    "cpu_time_s": 777,
    "max_processes": 99,
    "warm_python": False,
}
PROBE = (
    "echo fsize=$(ulimit -f) cpu=$(ulimit -t) nproc=$(ulimit -u)"
    " threads=$OMP_NUM_THREADS,$OPENBLAS_NUM_THREADS,$MKL_NUM_THREADS"
    " shm=$(($(stat -f -c '%b*%S' /dev/shm) / 1048576)); sleep 3 & wait"
)
EXPECTED = "fsize=65536 cpu=777 nproc=99 threads=3,3,3 shm=32\n"  # ulimit -f counts KiB


def _synthetic(root: Path, **args: Any) -> Task:
    return synthetic(pack=str(root / "pack"), tasks="plant-watering", **args)


def _mle_bench(root: Path, **args: Any) -> Task:
    return mle_bench(split="lite", data_dir=str(root / "mle"), competitions=COMPETITION, **args)


def _mle_dojo(root: Path, **args: Any) -> Task:
    return mle_dojo(
        data_dir=str(root / "dojo" / DOJO_SUBDIR), competitions=DOJO_COMPETITION, **args
    )


TASKS: dict[str, Callable[..., Task]] = {
    "synthetic": _synthetic,
    "mle_bench": _mle_bench,
    "mle_dojo": _mle_dojo,
}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    root = tmp_path_factory.mktemp("limits")
    shutil.copytree(Path(request.config.rootpath) / "tests/fixtures/competitions", root / "pack")
    build_replicas(root / "mle", [COMPETITION])
    build_replicas_with_dojo(root / "dojo", [DOJO_COMPETITION])
    return root


@pytest.fixture(autouse=True)
def _views(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(VIEWS_ENV, str(tmp_path / "views"))


def _cpu_quota_of(pid: int) -> int | None:
    """The CFS quota (µs per period) of the cgroup `pid` runs in (v1 cpu or v2 cpu.max)."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            text = Path(f"/sys/fs/cgroup{path}/cpu.max").read_text().split()[0]
            return None if text == "max" else int(text)
        if "cpu" in controllers.split(","):
            for mount in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
                quota = Path(f"/sys/fs/cgroup/{mount}{path}/cpu.cfs_quota_us")
                if quota.exists():
                    value = int(quota.read_text())
                    return None if value < 0 else value
    return None


async def _read_back(task: Task) -> tuple[str, list[int | None]]:
    sample = task.dataset[0]
    assert sample.sandbox is not None and sample.sandbox.type == "bwrap"
    config = sample.sandbox.config
    envs = await BwrapSandboxEnvironment.sample_init("limits", config, sample.metadata or {})
    sandbox = envs["default"].as_type(BwrapSandboxEnvironment)
    try:
        running = asyncio.ensure_future(sandbox.exec(["bash", "-c", PROBE]))
        quotas: list[int | None] = []
        while not quotas and not running.done():
            await asyncio.sleep(0.2)
            if sandbox.cgroup is not None:
                quotas = [_cpu_quota_of(pid) for pid in sandbox.cgroup.pids()]
        result = await running
        assert result.success, result.stderr
        return result.stdout, quotas
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("limits", config, envs, False)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_each_limit_is_in_force_inside(name: str, data_root: Path) -> None:
    task = TASKS[name](data_root, **ARGS)
    assert task.metadata is not None
    assert {k: task.metadata["limits"][k] for k in ARGS} == ARGS
    stdout, quotas = asyncio.run(_read_back(task))
    assert stdout == EXPECTED
    if os.geteuid() == 0:  # root: the sample's cgroup holds every process, CPU capped
        assert quotas and set(quotas) == {int(1.5 * CFS_PERIOD_US)}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_an_unknown_or_unenforced_limit_is_a_one_line_error(name: str, data_root: Path) -> None:
    with pytest.raises(SandmleError, match=r"unknown task argument\(s\): cpu_count"):
        TASKS[name](data_root, cpu_count=2)
    with pytest.raises(SandmleError, match="sandbox 'local' does not enforce cpus, shm_mb"):
        TASKS[name](data_root, sandbox="local", cpus=1, shm_mb=32)


def test_every_sandbox_field_is_placed() -> None:
    """Each sandbox names what it enforces; bwrap enforces every limit of the sandbox."""
    assert set(ENFORCED) == {"bwrap", "docker", "k8s", "local"}
    assert all(fields <= SANDBOX_FIELDS for fields in ENFORCED.values())
    assert SANDBOX_FIELDS <= set(TaskLimits.model_fields)
    assert ENFORCED["bwrap"] == SANDBOX_FIELDS - {"image", "k8s_data_claim"}
    # a value equal to the default changes nothing, so it is no error anywhere
    assert TaskLimits.from_args({"sandbox": "local", "threads": 1}).threads == 1
