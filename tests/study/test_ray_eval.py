"""``sandmle reproduce``'s eval on a Ray cluster (``eval.backend: ray``): the matrix split into
one ``eval_set`` per (model, benchmark, scaffold) cell, each in a folder of its own; the stage
wiring (fast); and, on a real cluster of a head and two worker nodes (slow), the same samples
and scores as the in-process eval, spread over both nodes, a rerun that resumes every finished
cell, and the eval's health read back over the cells' folders."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from sandmle.errors import SandmleError
from sandmle.specs.profile import load_profile
from sandmle.specs.study import EvalRay, StudyConfig
from sandmle.study import reproduce
from sandmle.study.ray_eval import cell_studies
from tests.conftest import copy_pack


def _micro_run(tmp_path: Path) -> reproduce.Run:
    profile, path = load_profile("cpu-micro")
    run = reproduce.Run(profile, path, tmp_path, Console())
    for stage in ("sft", *(arm.stage for arm in profile.grpo.arms())):
        run.finish(stage, {"checkpoint": str(tmp_path / stage)})
    return run


def test_the_matrix_splits_into_one_study_per_model_and_cell(tmp_path: Path) -> None:
    study = reproduce.eval_study(_micro_run(tmp_path))
    cells = cell_studies(study)
    assert len(cells) == len(study.models) * len(study.cells())  # 2 models (SFT, GRPO) x 15 cells
    names = [name for name, _ in cells]
    assert len(set(names)) == len(names) and names[0] == "m0-heldout-s0-react"
    seen = set()
    for name, single in cells:
        (model,), (bench,), (scaffold,) = single.models, single.benchmarks, single.scaffolds
        assert single.log_dir == str(tmp_path / "eval" / name) and single.max_tasks == 1
        assert single.cells() == [(bench, scaffold)] and scaffold.benchmarks is None
        assert (single.epochs, single.limit, single.max_samples) == (
            study.epochs, study.limit, study.max_samples,
        )  # fmt: skip
        original = next(s for s in study.scaffolds if s.solver == scaffold.solver)
        assert (scaffold.args, scaffold.epochs) == (original.args, original.epochs)
        seen.add((model.model, bench.key, scaffold.solver))
    expected = {(m.model, b.key, s.solver) for m in study.models for b, s in study.cells()}
    assert seen == expected
    assert [n for n, _ in cell_studies(study)] == names  # a rerun finds the same folders


def test_the_eval_stage_runs_on_ray_when_the_profile_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandmle.study import ray_eval

    run = _micro_run(tmp_path)
    settings = {"address": "10.0.0.1:6379", "gpus_per_cell": 1, "resources": {"gpu_node": 1}}
    eval_spec = run.profile.eval.model_copy(
        update={"backend": "ray", "ray": EvalRay.model_validate(settings)}
    )
    run.profile = run.profile.model_copy(update={"eval": eval_spec})
    asked: list[tuple[StudyConfig, EvalRay]] = []
    monkeypatch.setattr(ray_eval, "run_study_on_ray", lambda s, r: asked.append((s, r)) or True)
    monkeypatch.setattr(reproduce, "run_study", lambda *a, **k: pytest.fail("ran in-process"))
    monkeypatch.setattr(reproduce, "study_tasks", lambda study: [])  # no packs built here
    monkeypatch.setattr(reproduce, "sample_count", lambda study, tasks: 0)
    outcome = reproduce.stage_eval(run)
    (study, ray_settings), (base, _), (fixed, _) = asked
    assert outcome["success"] and study == reproduce.eval_study(run)
    assert base == reproduce.base_study(run)  # cpu-micro's base: held-out react alone
    assert fixed == reproduce.fixed_study(run)  # the toolkit's fixed options, on the cluster too
    assert ray_settings.gpus_per_cell == 1 and ray_settings.address == "10.0.0.1:6379"


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"backend": "slurm"}, "eval.backend: Input should be 'local' or 'ray'"),
        ({"backend": "ray", "ray": {"gpus_per_cel": 1}}, "eval.ray.gpus_per_cel: Extra inputs"),
        ({"ray": {"retries": -1}}, "eval.ray.retries: Input should be greater than or equal"),
    ],
)
def test_a_wrong_eval_backend_setting_is_one_line(
    tmp_path: Path, change: dict[str, Any], word: str
) -> None:
    from sandmle.specs.profile import PROFILE_DIR
    from tests.study.test_reproduce import _profile_file

    toy = yaml.safe_load((PROFILE_DIR / "toy.yaml").read_text())
    with pytest.raises(SandmleError) as err:
        load_profile(_profile_file(tmp_path, eval={**toy["eval"], **change}))
    assert word in str(err.value) and "\n" not in str(err.value), str(err.value)


def _scores(log_dir: Path) -> dict[tuple[str, str, int], Any]:
    from inspect_ai.log import list_eval_logs, read_eval_log

    out = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        assert log.status == "success", log.error
        for sample in log.samples or []:
            value = sample.scores["medal_scorer"].value
            out[(log.eval.model, str(sample.id), sample.epoch)] = value
    return out


@pytest.mark.slow
def test_the_eval_on_a_ray_cluster_gives_the_in_process_scores_on_both_nodes(
    tmp_path: Path,
) -> None:
    """Two reference policies x react on a two-task pack, in-process and on a cluster whose two
    worker nodes have room for one cell each: the same samples and scores, both nodes used; a
    rerun finds every cell finished; ``eval_health`` reads the cells' folders."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed")
    ray = pytest.importorskip("ray", reason="needs Ray: pip install -e '.[ray]'")
    from ray.cluster_utils import Cluster

    from sandmle.study.ray_eval import CELL_LOG, run_study_on_ray
    from sandmle.study.runner import run_study

    pack = copy_pack(tmp_path / "pack")
    study = StudyConfig.model_validate(
        {
            "name": "ray-eval",
            "models": [{"model": "sandmle/heuristic"}, {"model": "sandmle/sample-submission"}],
            "scaffolds": [{"solver": "react"}],
            "benchmarks": [{"task": "synthetic", "args": {"pack": str(pack)}}],
            "max_samples": 2,
            "log_dir": str(tmp_path / "local"),
        }
    )
    assert run_study(study, display="none")
    local = _scores(tmp_path / "local")
    assert len(local) == 4  # 2 models x 2 tasks

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        on_ray = study.model_copy(update={"log_dir": str(tmp_path / "ray")})
        assert run_study_on_ray(on_ray, EvalRay(cpus_per_cell=1))
        assert _scores(tmp_path / "ray") == local  # the same samples, the same scores
        lines = (tmp_path / "ray" / CELL_LOG).read_text().splitlines()
        cells = [json.loads(line) for line in lines]
        assert [c["cell"] for c in cells] == ["m0-synthetic-s0-react", "m1-synthetic-s0-react"]
        assert all(c["success"] and c["error"] is None for c in cells)
        assert {c["node_id"] for c in cells} == {w.node_id for w in workers}  # one cell a node
        logs = sorted((tmp_path / "ray").rglob("*.eval"))
        assert run_study_on_ray(on_ray, EvalRay(cpus_per_cell=1))  # a rerun: resumed, all done
        assert sorted((tmp_path / "ray").rglob("*.eval")) == logs
        assert _scores(tmp_path / "ray") == local
    finally:
        ray.shutdown()
        cluster.shutdown()
    health = reproduce.eval_health(tmp_path / "ray")
    assert health["logs"] == 2 and health["samples"] == 4 and health["unfinished"] == 0


def test_a_profile_names_its_eval_cluster(tmp_path: Path) -> None:
    from sandmle.specs.profile import PROFILE_DIR
    from tests.study.test_reproduce import _profile_file

    toy = yaml.safe_load((PROFILE_DIR / "toy.yaml").read_text())
    cluster = {"address": "auto", "gpus_per_cell": 1, "resources": {"gpu_node": 1}}
    profile, _ = load_profile(
        _profile_file(tmp_path, eval={**toy["eval"], "backend": "ray", "ray": cluster})
    )
    assert profile.eval.backend == "ray" and profile.eval.ray.model_dump() == {
        **EvalRay().model_dump(), **cluster,
    }  # fmt: skip
    assert load_profile("toy")[0].eval.backend == "local"  # the shipped profiles: in-process


@pytest.mark.slow
def test_a_cell_whose_node_dies_runs_again_elsewhere_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two cells (two models x a slow copying scaffold on four tasks), one on each worker node;
    a node removed once both cells have finished two samples: its cell runs again on the
    other node and resumes from its log, so every sample is graded once and at most the one in
    flight at the loss runs twice."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed")
    ray = pytest.importorskip("ray", reason="needs Ray: pip install -e '.[ray]'")
    from ray.cluster_utils import Cluster

    from sandmle.study.ray_eval import CELL_LOG, LEDGER, run_study_on_ray
    from tests.study.test_study import HERE, _pack, _results

    counter = tmp_path / "runs.txt"
    monkeypatch.setenv("SANDMLE_TEST_COUNTER", str(counter))  # the nodes' workers inherit it
    pack = _pack(tmp_path / "pack")
    study = StudyConfig.model_validate(
        {
            "name": "ray-eval-lost",
            "models": [{"model": "mockllm/alpha"}, {"model": "mockllm/beta"}],
            "scaffolds": [{"solver": f"{HERE / 'slow_solver.py'}@slow_copy",
                           "args": {"delay": 3}}],
            "benchmarks": [{"task": "synthetic", "args": {"pack": str(pack)}}],
            "max_samples": 1,
            "log_dir": str(tmp_path / "ray"),
        }
    )  # fmt: skip
    fast_health = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "_system_config": fast_health}
    )
    doomed, survivor = [cluster.add_node(num_cpus=1) for _ in range(2)]
    outcome: dict[str, Any] = {}
    try:
        ray.init(address=cluster.address, log_to_driver=False)

        def run() -> None:
            try:
                outcome["ok"] = run_study_on_ray(study, EvalRay(cpus_per_cell=1))
            except BaseException as exc:  # the assertions below show it
                outcome["error"] = exc

        thread = threading.Thread(target=run)
        thread.start()

        def runs(model: str) -> int:
            lines = counter.read_text().splitlines() if counter.exists() else []
            return sum(line.startswith(model) for line in lines)

        deadline = time.monotonic() + 600
        while min(runs("mockllm/alpha"), runs("mockllm/beta")) < 3:  # two done, one in flight
            assert time.monotonic() < deadline and thread.is_alive(), outcome
            time.sleep(0.2)
        records = [json.loads(r.read_text()) for r in (tmp_path / "ray" / LEDGER).glob("*.cell")]
        works = [Path(r["work"]) for r in records]
        assert len(works) == 2 and all(w.is_dir() for w in works)  # each cell's sandboxes
        assert _left(works)  # the samples in flight: their sandbox folders (and quota mounts)
        cluster.remove_node(doomed)
        thread.join(timeout=900)
        assert not thread.is_alive() and outcome.get("ok"), outcome
    finally:
        ray.shutdown()
        cluster.shutdown()
    cells = [json.loads(line) for line in (tmp_path / "ray" / CELL_LOG).read_text().splitlines()]
    assert len(cells) == 2 and all(c["success"] and c["error"] is None for c in cells)
    assert {c["node_id"] for c in cells} == {survivor.node_id}  # the lost node's cell: rerun
    # the rerun released what the killed cell's sandboxes left; nothing is left of either cell
    assert sorted(c["swept"] for c in cells) == [0, 1]
    assert not list((tmp_path / "ray" / LEDGER).glob("*.cell")) and not _left(works)
    results = _results(tmp_path / "ray")
    assert len(results) == 8 and set(results.values()) == {1}  # every sample graded once
    assert all(valid == 1.0 for (_, _, valid, _) in results), results
    total = len(counter.read_text().splitlines())
    assert total <= 8 + 1, total  # resumed: only the sample in flight at the loss ran again


def _left(works: list[Path]) -> list[str]:
    """What is left of cells' folders: the folders, and mounts (sandbox quotas) inside."""
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    inside = [m for m in mounts if any(m.startswith(f"{w}/") for w in works)]
    return [str(w) for w in works if w.exists()] + inside


def test_a_sweep_releases_dead_cells_of_this_host_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    import subprocess
    import tempfile

    from sandmle.harness.sandbox import process_start_time
    from sandmle.study.ray_eval import sweep_cells

    temp = tmp_path / "temp"  # the host's temp folder, where cells make theirs
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()

    def cell(name: str, pid: int, start: str | None, host: str = socket.gethostname()) -> Path:
        work = temp / f"sandmle-cell-{name}"
        (work / "tmp" / "sandmle-sandboxes" / "123" / "rw").mkdir(parents=True)
        line = {"host": host, "pid": pid, "start": start, "work": str(work)}
        (ledger / f"{name}.cell").write_text(json.dumps(line))
        return work

    gone = cell("gone", dead.pid, "1")
    running = cell("running", os.getpid(), process_start_time(os.getpid()))
    elsewhere = cell("elsewhere", dead.pid, "1", host="another-node")
    precious = tmp_path / "precious"  # a record naming any other folder: never removed
    precious.mkdir()
    (ledger / "forged.cell").write_text(
        json.dumps(
            {"host": socket.gethostname(), "pid": dead.pid, "start": "1", "work": str(precious)}
        )
    )
    assert sweep_cells(ledger) == 2
    assert precious.is_dir()
    assert not gone.exists() and not (ledger / "gone.cell").exists()
    assert running.is_dir() and (ledger / "running.cell").exists()  # a live cell's
    assert elsewhere.is_dir() and (ledger / "elsewhere.cell").exists()  # its node's to sweep
