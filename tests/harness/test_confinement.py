"""A pack is untrusted data: each probe of issue #50 is refused at load and by `synth check`,
in one line naming the field, before any sample is built or any grader runs."""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai._util.error import PrerequisiteError
from typer.testing import CliRunner

from sandmle.benchmarks.synthetic.cli import synth_app
from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.errors import CompetitionError, SandmleError
from sandmle.harness.competition import load_competition
from sandmle.harness.confinement import TRUST_ENV, UnsafePackError
from sandmle.harness.layout import PUBLIC_DIR_METADATA_KEY
from sandmle.harness.pack import PackManifest, PackTask, load_pack, write_manifest
from sandmle.harness.sandbox.bwrap_config import BwrapConfig, sample_public_dir
from tests.conftest import FIXTURES
from tests.harness.test_competition import _edit

TASK = "plant-watering"
HOST_SECRET = "host secret: must never reach an agent"
Probe = Callable[[Path, Path], None]
"""Breaks the pack ``pack`` (task folder ``pack/TASK``), given a ``host`` folder outside it."""


def _relink(link: Path, target: str | Path) -> None:
    shutil.rmtree(link)
    link.symlink_to(target, target_is_directory=True)


def _outside_task() -> PackTask:
    return PackTask.model_construct(id=f"../host/elsewhere/{TASK}")  # as a hand-written yaml


def _pack_code(marker: Path) -> dict:
    source = f"open({str(marker)!r}, 'w').write('ran')\nprint('{{\"score\": 1.0}}')\n"
    return {"name": "sandmle-release-evaluator", "options": {"source": source}}


PROBES: dict[str, tuple[Probe, str]] = {
    "absolute description": (
        lambda pack, host: _edit(pack / TASK, description=str(host / "secret.md")),
        "description: .*is an absolute path",
    ),
    "../ description": (
        lambda pack, host: _edit(
            pack / TASK, description="prepared/public/../../../host/secret.md"
        ),
        "description: .*climbs out with '..'",
    ),
    "absolute answers": (
        lambda pack, host: _edit(pack / TASK, answers=str(host / "answers.csv")),
        "answers: .*is an absolute path",
    ),
    "../ answers": (
        lambda pack, host: _edit(pack / TASK, answers="prepared/private/../../../host/answers.csv"),
        "answers: .*climbs out with '..'",
    ),
    "answers linked out": (
        lambda pack, host: (
            (pack / TASK / "prepared/private/answers.csv").unlink(),
            (pack / TASK / "prepared/private/answers.csv").symlink_to(host / "answers.csv"),
        ),
        "answers: .*resolves outside prepared/private",
    ),
    "absolute leaderboard": (
        lambda pack, host: _edit(pack / TASK, thresholds=None, leaderboard=str(host / "lb.csv")),
        "leaderboard: .*is an absolute path",
    ),
    "../ leaderboard": (
        lambda pack, host: _edit(pack / TASK, thresholds=None, leaderboard="../host/lb.csv"),
        "leaderboard: .*climbs out with '..'",
    ),
    "../ task id": (
        lambda pack, host: (
            shutil.rmtree(pack / TASK),  # the pack's only task is the one outside it
            write_manifest(PackManifest(name="p", tasks=[_outside_task()]), pack),
        ),
        r"tasks\.0\.id: String should match pattern",
    ),
    "task folder linked out": (
        lambda pack, host: _relink(pack / TASK, host / "elsewhere" / TASK),
        "task 'plant-watering' is a symlink",
    ),
    "public -> private symlink": (
        lambda pack, host: _relink(pack / TASK / "prepared/public", "private"),
        "prepared/public is a symlink",
    ),
    "public -> host symlink": (
        lambda pack, host: _relink(pack / TASK / "prepared/public", host),
        "prepared/public is a symlink",
    ),
    "symlink inside public": (
        lambda pack, host: (pack / TASK / "prepared/public/answers.csv").symlink_to(
            "../private/answers.csv"
        ),
        "prepared/public: .*answers.csv is a symlink",
    ),
    "pack-supplied evaluator code": (
        lambda pack, host: _edit(
            pack / TASK, metric="sandmle_release_evaluator", grader=_pack_code(host / "ran.txt")
        ),
        "grader.name: 'sandmle-release-evaluator' runs code the pack supplies",
    ),
}


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A folder outside the pack holding what an attacker would reach for."""
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "secret.md").write_text(HOST_SECRET)
    shutil.copy(FIXTURES / TASK / "prepared/private/answers.csv", folder / "answers.csv")
    (folder / "lb.csv").write_text("score\n0.9\n0.8\n0.7\n")
    shutil.copytree(FIXTURES / TASK, folder / "elsewhere" / TASK)
    return folder


@pytest.mark.parametrize("name", list(PROBES))
def test_each_probe_is_refused_at_load_and_by_synth_check(
    name: str, tmp_path: Path, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRUST_ENV, raising=False)
    pack = tmp_path / "pack"
    shutil.copytree(FIXTURES / TASK, pack / TASK)
    probe, message = PROBES[name]
    load_pack(pack)  # the unbroken pack loads: the refusal below is the probe's doing
    probe(pack, host)

    with pytest.raises(CompetitionError, match=message) as info:
        load_pack(pack)
    assert "\n" not in str(info.value)
    # under @task the refusal is Inspect's PrerequisiteError (printed as its one line)
    with pytest.raises(PrerequisiteError, match=message):
        synthetic(pack=str(pack), sandbox="local")  # no Task, so no sample is ever built

    result = CliRunner().invoke(synth_app, ["check", str(pack), "--json", "--workers", "1"])
    assert result.exit_code == 1, result.output
    results = json.loads(result.output)["tasks"]
    refused = {
        k: fs for k, fs in results.items() if any(re.search(message, f["reason"]) for f in fs)
    }
    assert refused, results
    for failures in refused.values():  # the refusal is all: no rule went on to grade
        assert [f["rule"] for f in failures] in (["competition_loads"], ["pack_loads"])
    assert not (host / "ran.txt").exists()  # the pack's evaluator never ran


def test_pack_code_runs_only_when_trusted(
    tmp_path: Path, host: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The trust flag is the one way in, and it is explicit (argument, flag or variable);
    a trusted pack's code is still said out loud, once per competition."""
    monkeypatch.delenv(TRUST_ENV, raising=False)
    task = Path(shutil.copytree(FIXTURES / TASK, tmp_path / TASK))
    _edit(task, metric="sandmle_release_evaluator", grader=_pack_code(host / "ran.txt"))
    with pytest.raises(UnsafePackError, match="--trust-pack-code"):
        load_competition(task)
    with caplog.at_level(logging.WARNING, logger="sandmle.harness.confinement"):
        assert load_competition(task, trust_code=True).config.grader.name.startswith("sandmle")
        monkeypatch.setenv(TRUST_ENV, "1")
        load_competition(task)
    warned = [r for r in caplog.records if "runs the pack's own code" in r.getMessage()]
    assert len(warned) == 1
    with pytest.raises(UnsafePackError):
        load_competition(task, trust_code=False)


def test_sandbox_refuses_a_public_dir_with_a_link_planted_after_load(tmp_path: Path) -> None:
    task = Path(shutil.copytree(FIXTURES / TASK, tmp_path / TASK))
    public = load_competition(task).public_dir
    config = BwrapConfig(python=Path("/usr/bin/python3"))
    assert sample_public_dir(config, {PUBLIC_DIR_METADATA_KEY: str(public)}) == public.resolve()
    (public / "peek").symlink_to("/etc")
    with pytest.raises(SandmleError, match="peek is a symlink"):
        sample_public_dir(config, {PUBLIC_DIR_METADATA_KEY: str(public)})


def test_linked_views_still_keep_public_apart_from_private(tmp_path: Path) -> None:
    """A view sandmle writes may link its folders (MLE-Dojo's), never public onto private."""
    view = Path(shutil.copytree(FIXTURES / TASK, tmp_path / "data" / TASK))
    data = tmp_path / "elsewhere"
    shutil.move(view / "prepared", data)
    (view / "prepared").mkdir()
    for side in ("public", "private"):
        (view / "prepared" / side).symlink_to(data / side, target_is_directory=True)
    with pytest.raises(UnsafePackError, match="prepared/public is a symlink"):
        load_competition(view)
    assert load_competition(view, linked_dirs=True).answers_path.is_file()
    (view / "prepared/public").unlink()
    (view / "prepared/public").symlink_to(data / "private", target_is_directory=True)
    with pytest.raises(UnsafePackError, match="overlaps prepared/private"):
        load_competition(view, linked_dirs=True)
