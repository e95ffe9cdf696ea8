"""A requested pack is written whole: redrawn designs, substitute seeds, resumed runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from sandmle.benchmarks.synthetic import packs, pipeline
from sandmle.benchmarks.synthetic.blueprint import Design, TaskRequest
from sandmle.benchmarks.synthetic.packs import PackSpec, SlotJob, generate_pack
from sandmle.benchmarks.synthetic.redesign import apply_design, next_design, substitutes
from sandmle.benchmarks.synthetic.sanity import Failure, check_directory
from sandmle.benchmarks.synthetic.seeds import SEEDS, get_seed
from sandmle.benchmarks.synthetic.slots import load_outcomes
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.benchmarks.synthetic.task_files import file_digests, load_blueprint
from sandmle.errors import SandmleError
from sandmle.harness.pack import load_pack

# Quick families, and the one whose slots the issue saw fail on all 8 attempts (its bands
# sat at 1.59 sigma against the 2-sigma floor), so redraws happen in most packs.
FAST_SEEDS = [
    "new-york-city-taxi-fare-prediction",
    "random-acts-of-pizza",
    "tabular-playground-series-may-2022",
    "spooky-author-identification",
]
SECRET = "whole-pack-test-secret"


def _errors(pack: Path) -> dict[str, list[Failure]]:
    return {
        task: [f for f in fs if f.severity == "error"]
        for task, fs in check_directory(pack).items()
        if any(f.severity == "error" for f in fs)
    }


# Ten packs of 24 tasks take minutes: seed 0 runs in the fast suite, the other nine under
# `python -m pytest -m slow`.
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in range(1, 10))]
)
def test_packs_of_24_are_written_whole_and_pass_the_check(tmp_path: Path, seed: int):
    spec = PackSpec(name="whole", n=24, seed=seed, seed_ids=FAST_SEEDS, secret=SECRET)
    outcomes = generate_pack(spec, tmp_path / "p", workers=2, progress=False)
    assert [o.index for o in outcomes if o.task_id is None] == []
    pack = load_pack(tmp_path / "p")
    assert len(pack) == 24
    assert _errors(tmp_path / "p") == {}
    for task, outcome in zip(pack.manifest.tasks, outcomes, strict=True):
        assert task.attempts == outcome.attempts == len(outcome.rejections) + 1
        assert len(task.rejections) == len(outcome.rejections)
        assert all(":" in reason for reason in task.rejections)


def test_a_rejected_slot_is_redrawn_with_more_test_rows_and_sharper_labels():
    widened = next_design(Design(), {"noise_bands"})
    assert widened.test_factor > 1 and widened.noise_factor < 1
    assert next_design(Design(), {"generation_runs"}) == Design()
    request = TaskRequest(index=3, dna=get_seed(FAST_SEEDS[0]), entropy=[1, 2, 3])
    plain = plan(request)
    redrawn = plan(request.model_copy(update={"design": widened}))
    assert redrawn.n_test == -(-plain.n_test * widened.test_factor // 1)
    assert redrawn.noise.label_noise <= plain.noise.label_noise
    assert redrawn.design == widened and plain.design == Design()
    assert apply_design(plain, Design()) == plain


def test_series_and_pages_grow_by_their_own_unit():
    design = Design(test_factor=2.0)
    for seed_id in ("bike-sharing-demand", "denoising-dirty-documents"):
        request = TaskRequest(index=0, dna=get_seed(seed_id), entropy=[7, 0, 0])
        plain, grown = plan(request), plan(request.model_copy(update={"design": design}))
        key = "n_series" if "n_series" in plain.params else "n_test_images"
        assert int(grown.params[key]) == 2 * int(plain.params[key])
        assert grown.n_test == 2 * plain.n_test


def test_substitutes_share_the_task_type_same_modality_first():
    dna = get_seed("new-york-city-taxi-fare-prediction")
    subs = substitutes(dna, list(SEEDS.values()))
    assert subs and all(s.task_type == "regression" and s != dna for s in subs)
    assert subs[0].modality == "tabular"


def test_a_family_that_never_passes_goes_to_a_substitute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Every attempt on the taxi seed is rejected (the gate is made to refuse it): its slot is
    written from another regression seed, and pack.yaml says so."""
    real = pipeline.check_task

    def refuse_taxi(root: Path, rules: list[str] | None = None) -> list[Failure]:
        if load_blueprint(root).dna.seed_task == FAST_SEEDS[0]:
            return [Failure(rule="noise_bands", reason="refused by the test")]
        return real(root, rules)

    monkeypatch.setattr(pipeline, "check_task", refuse_taxi)
    spec = PackSpec(name="sub", n=2, seed=1, seed_ids=FAST_SEEDS[:2], secret=SECRET)
    outcomes = generate_pack(spec, tmp_path / "p", workers=1, progress=False)
    assert all(o.task_id for o in outcomes)
    manifest = yaml.safe_load((tmp_path / "p" / "pack.yaml").read_text())
    first = manifest["tasks"][0]
    assert first["substitute_for"] == FAST_SEEDS[0]
    assert get_seed(first["seed_task"]).task_type == "regression"
    assert first["attempts"] == pipeline.MAX_ATTEMPTS + 1
    assert first["rejections"][0] == "noise_bands: refused by the test"
    assert manifest["tasks"][1].get("substitute_for") is None


def test_an_interrupted_run_resumes_to_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    spec = PackSpec(name="resume", n=3, seed=4, seed_ids=FAST_SEEDS[1:], secret=SECRET)
    generate_pack(spec, tmp_path / "whole", workers=1, progress=False)
    real = SlotJob.run

    def killed_at_slot_2(self: SlotJob, first_attempt: int = 0):
        if self.index == 2:
            raise KeyboardInterrupt
        return real(self, first_attempt)

    monkeypatch.setattr(SlotJob, "run", killed_at_slot_2)
    with pytest.raises(KeyboardInterrupt):
        generate_pack(spec, tmp_path / "resumed", workers=1, progress=False)
    assert not (tmp_path / "resumed" / "pack.yaml").exists()
    (tmp_path / "resumed" / ".staging-002").mkdir()  # what a killed worker leaves behind
    first = load_outcomes(tmp_path / "resumed")[0].task_id
    shutil.rmtree(tmp_path / "resumed" / str(first))  # a recorded task lost: its slot is redone
    monkeypatch.setattr(SlotJob, "run", real)
    generate_pack(spec, tmp_path / "resumed", workers=1, progress=False)
    assert file_digests(tmp_path / "resumed") == file_digests(tmp_path / "whole")
    other = spec.model_copy(update={"n": 4})
    with pytest.raises(SandmleError, match="not empty"):
        generate_pack(other, tmp_path / "resumed", progress=False)


def test_a_run_killed_inside_a_transfer_round_resumes_to_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The gate's regenerations are recorded as they finish and its round is kept on disk, so
    a killed run neither loses them nor regenerates a slot from the wrong attempt."""
    solved: set[str] = set()  # the one task "the others solve": slot 1's first draw

    def gate(pack: Path, task_ids: list[str], progress: bool, workers: int) -> dict[str, str]:
        solved.update(task_ids[1:2] if not solved else [])
        return {
            t: "a model trained on 2 other image task(s) scores 1" for t in solved & set(task_ids)
        }

    monkeypatch.setattr(packs, "transfer_failures", gate)
    spec = PackSpec(name="resume", n=3, seed=5, seed_ids=FAST_SEEDS[1:], secret=SECRET)
    whole = generate_pack(spec, tmp_path / "whole", workers=1, progress=False)
    assert [f.rule for r in whole[1].rejections for f in r.failures].count("transfer") == 1
    real = SlotJob.run

    def killed_when_regenerating(self: SlotJob, first_attempt: int = 0):
        if first_attempt >= pipeline.MAX_ATTEMPTS:
            raise KeyboardInterrupt
        return real(self, first_attempt)

    monkeypatch.setattr(SlotJob, "run", killed_when_regenerating)
    with pytest.raises(KeyboardInterrupt):
        generate_pack(spec, tmp_path / "resumed", workers=1, progress=False)
    assert (tmp_path / "resumed" / "generation" / packs.TRANSFER_STATE_FILE).is_file()
    monkeypatch.setattr(SlotJob, "run", real)
    resumed = generate_pack(spec, tmp_path / "resumed", workers=1, progress=False)
    assert file_digests(tmp_path / "resumed") == file_digests(tmp_path / "whole")
    assert [o.model_dump() for o in resumed] == [o.model_dump() for o in whole]
    assert not (tmp_path / "resumed" / "generation" / packs.TRANSFER_STATE_FILE).exists()
