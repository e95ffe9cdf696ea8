from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from inspect_ai.log import list_eval_logs, read_eval_log

from sandmle.errors import SandmleError
from sandmle.specs.study import load_study

from ..conftest import FIXTURES

HERE = Path(__file__).parent
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


def _pack(root: Path) -> Path:
    for name in ("plant-watering", "bike-rentals"):
        shutil.copytree(FIXTURES / name, root / name)
    # two more tasks make each cell long enough to be interrupted in the middle
    for name in ("plant-watering", "bike-rentals"):
        copy = root / f"{name}-2"
        shutil.copytree(FIXTURES / name, copy)
        text = (copy / "competition.yaml").read_text().replace(f"id: {name}", f"id: {name}-2")
        (copy / "competition.yaml").write_text(text)
    return root


def _study(tmp: Path, pack: Path, name: str) -> Path:
    config = {
        "name": name,
        "log_dir": str(tmp / name),
        "models": [{"model": "mockllm/alpha"}, {"model": "mockllm/beta"}],
        "scaffolds": [{"solver": f"{HERE / 'slow_solver.py'}@slow_copy"}],
        "benchmarks": [{"task": "synthetic", "args": {"pack": str(pack)}}],
        "max_tasks": 1,
        "max_samples": 1,
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _start(config: Path, counter: Path) -> subprocess.Popen:
    env = {**os.environ, "SANDMLE_TEST_COUNTER": str(counter)}
    return subprocess.Popen(
        [sys.executable, "-m", "sandmle.cli", "study", str(config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _results(log_dir: Path) -> Counter:
    seen: Counter = Counter()
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        if log.status != "success":
            continue  # the interrupted attempt; its finished samples live on in the retry's log
        for sample in log.samples or []:
            value = sample.scores["medal_scorer"].value
            seen[(log.eval.model, sample.id, value["valid_submission"], value["score"])] += 1
    return seen


def test_interrupted_study_finishes_like_an_uninterrupted_one(tmp_path: Path) -> None:
    pack = _pack(tmp_path / "pack")
    straight = _study(tmp_path, pack, "straight")
    assert _start(straight, tmp_path / "straight.count").wait(timeout=300) == 0

    interrupted = _study(tmp_path, pack, "interrupted")
    counter = tmp_path / "interrupted.count"
    proc = _start(interrupted, counter)
    deadline = time.time() + 120
    while time.time() < deadline and (
        not counter.exists() or len(counter.read_text().splitlines()) < 3
    ):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)  # mid-run: the first cell is half done
    proc.wait()
    runs_before = len(counter.read_text().splitlines())
    assert 3 <= runs_before < 8, "the kill did not land in the middle of the study"
    assert _start(interrupted, counter).wait(timeout=300) == 0

    expected = _results(tmp_path / "straight")
    assert len(expected) == 8 and set(expected.values()) == {1}  # 2 models x 4 samples, once each
    assert _results(tmp_path / "interrupted") == expected  # same results, nothing lost or doubled
    runs = len(counter.read_text().splitlines())
    assert runs <= 8 + 1  # at most the one sample in flight at the kill ran again


def test_bad_study_files(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: x\nmodels: []\nscaffolds: [{solver: react}]\nbenchmarks: [{task: synthetic}]\n"
    )
    with pytest.raises(SandmleError, match="models: List should have at least 1 item"):
        load_study(path)
    path.write_text("name: [\n")
    with pytest.raises(SandmleError, match="not valid YAML"):
        load_study(path)
    with pytest.raises(SandmleError, match="does not exist"):
        load_study(tmp_path / "missing.yaml")


def test_a_scaffold_runs_only_on_the_benchmarks_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow search scaffold can be kept to the small benchmarks (cpu-micro: the replicas), or
    to the first rows of each (cpu-smollm2: 20 of 40 held-out tasks)."""
    from sandmle.specs.study import StudyConfig
    from sandmle.study import runner
    from sandmle.study.runner import study_tasks

    pack = str(_pack(tmp_path / "pack"))
    data = {
        "name": "subset",
        "models": [{"model": "mockllm/model"}],
        "scaffolds": [{"solver": "react"}, {"solver": "aide", "benchmarks": ["mle_dojo"]}],
        "benchmarks": [{"task": "synthetic", "args": {"pack": pack}},
                       {"task": "mle_dojo", "args": {"data_dir": str(tmp_path)}}],
    }  # fmt: skip
    study = StudyConfig.model_validate(data)
    cells = [(bench.task, scaffold.solver) for bench, scaffold in study.cells()]
    assert cells == [("synthetic", "react"), ("mle_dojo", "react"), ("mle_dojo", "aide")]
    # the runner builds exactly those cells (each benchmark built as the pack here)
    real = runner.build_task
    monkeypatch.setattr(runner, "build_task", lambda task, args: real("synthetic", {"pack": pack}))
    assert len(study_tasks(study)) == 3
    # the progress total: each task's own rows x its epochs, under the study's limit
    twice = study.scaffolds[0].model_copy(update={"epochs": 2})
    study = study.model_copy(update={"scaffolds": [twice, study.scaffolds[1]]})
    assert runner.sample_count(study, study_tasks(study)) == 4 * 2 + 4 * 2 + 4
    study = study.model_copy(update={"limit": 3})
    assert runner.sample_count(study, study_tasks(study)) == 3 * 2 + 3 * 2 + 3
    # a scaffold's own limit: the first N rows of each of its benchmarks, within the study's
    first = study.scaffolds[1].model_copy(update={"limit": 2})
    study = study.model_copy(update={"scaffolds": [twice, first]})
    assert runner.sample_count(study, study_tasks(study)) == 3 * 2 + 3 * 2 + 2
    react, _, aide = study_tasks(study.model_copy(update={"limit": None}))
    assert [s.id for s in aide.dataset] == [s.id for s in react.dataset][:2]
    data["scaffolds"][1]["benchmarks"] = ["mle_bench"]  # not one of the study's
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SandmleError, match=r"scaffold aide: benchmarks \['mle_bench'\] are not"):
        load_study(path)
    data["scaffolds"][1]["benchmarks"] = []
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SandmleError, match="benchmarks: List should have at least 1 item"):
        load_study(path)


def test_cpu_reference_study_config_runs(tmp_path: Path) -> None:
    from sandmle.specs.study import load_study
    from sandmle.study.report import write_report
    from sandmle.study.runner import run_study

    study = load_study(Path(__file__).parents[2] / "sandmle/configs/study/cpu-reference.yaml")
    study = study.model_copy(update={"log_dir": str(tmp_path / "logs")})
    assert run_study(study, display="none")
    logs = [read_eval_log(i.name) for i in list_eval_logs(str(tmp_path / "logs"))]
    assert len(logs) == len(study.models) * len(study.scaffolds)
    assert all(log.status == "success" for log in logs)
    html = write_report(tmp_path / "logs")
    assert "sandmle/heuristic" in html.read_text()


def test_paper_study_config_is_valid() -> None:
    study = load_study(Path(__file__).parents[2] / "sandmle/configs/study/paper.yaml")
    assert {s.solver for s in study.scaffolds} == {
        "react",
        "aide",
        "aira_greedy",
        "aira_mcts",
        "aira_evo",
    }
    assert {b.task for b in study.benchmarks} == {"mle_bench_lite", "mle_dojo", "synthetic"}


def test_a_scaffold_runs_its_own_epochs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scaffold's ``epochs`` overrides the study's for its cells only (reproduce profiles give
    the trained scaffold two, so its paired test has power, and the other scaffolds one)."""
    from sandmle.specs.study import ScaffoldEntry
    from sandmle.study.runner import run_study, study_tasks

    study = load_study(_study(tmp_path, _pack(tmp_path / "pack"), "epochs"))
    copy = study.scaffolds[0]
    twice = ScaffoldEntry(solver=copy.solver, args=copy.args, epochs=2)
    pair = study.model_copy(update={"scaffolds": [twice, copy]})
    assert [t.epochs for t in study_tasks(pair)] == [2, 1]
    first_two = twice.model_copy(update={"limit": 2})  # the scaffold's own limit, in eval_set
    once = study.model_copy(update={"models": study.models[:1], "scaffolds": [first_two]})
    monkeypatch.setenv("SANDMLE_TEST_COUNTER", str(tmp_path / "runs.txt"))
    assert run_study(once, display="none")
    (log,) = [read_eval_log(i.name) for i in list_eval_logs(study.log_dir)]
    assert log.eval.config.epochs == 2 and len(log.samples or []) == 4
    assert len((tmp_path / "runs.txt").read_text().splitlines()) == 4  # 2 samples x 2 epochs
