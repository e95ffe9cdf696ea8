"""Seed DNA from a real description and schema, read by the llm backend (scripted mockllm).

No model is reachable from the test machines: every answer here is scripted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import get_model
from typer.testing import CliRunner

from sandmle.benchmarks.synthetic.cli import synth_app
from sandmle.benchmarks.synthetic.llm.backend import LLMBackend
from sandmle.benchmarks.synthetic.llm.from_seed import extract_dna, generate_from_seed
from sandmle.benchmarks.synthetic.llm.seed_dna import SeedMaterial, parse_dna, read_seed
from sandmle.benchmarks.synthetic.packs import PackSpec
from sandmle.benchmarks.synthetic.sanity import check_task
from sandmle.errors import SandmleError
from tests.benchmarks.synthetic.llm import scripted

DESCRIPTION = """\
# Bridge Joint Corrosion

Inspectors score expansion joints on road bridges. Predict the probability that a joint is
corroded. Submissions are evaluated on area under the ROC curve.
"""
DNA = {
    "original_modality": "tabular",
    "modality": "tabular",
    "task_type": "binary",
    "metric": "roc_auc",
    "target_kind": "prob",
    "n_outputs": 2,
    "original_outputs": 2,
    "n_numeric": 6,
    "n_categorical": 1,
    "id_scheme": "int",
    "balance": 0.4,
}


def make_seed(root: Path) -> Path:
    seed = root / "Bridge Joint Corrosion"
    seed.mkdir(parents=True)
    (seed / "description.md").write_text(DESCRIPTION)
    ids = list(range(1001, 1031))
    pd.DataFrame({"id": ids, "is_corroded": 0.5}).to_csv(
        seed / "sample_submission.csv", index=False
    )
    train = pd.DataFrame({"id": ids, "humidity": 1.0, "coating": "zinc", "is_corroded": 0})
    train.to_csv(seed / "train.csv", index=False)
    return seed


def answer(**changes: object) -> str:
    return "```json\n" + json.dumps({**DNA, **changes}) + "\n```"


def scripted_backend(answers: list[str]) -> LLMBackend:
    model = get_model("mockllm/model", custom_outputs=[scripted.output(a) for a in answers])
    return LLMBackend(model=model)


def test_a_seed_folder_gives_its_description_and_schema(tmp_path: Path):
    material = read_seed(make_seed(tmp_path))
    assert material.name == "bridge-joint-corrosion"
    assert material.description.startswith("# Bridge Joint Corrosion")
    assert material.columns == {
        "sample_submission.csv": ["id", "is_corroded"],
        "train.csv": ["id", "humidity", "coating", "is_corroded"],
    }
    assert material.sample_rows.splitlines()[:2] == ["id,is_corroded", "1001,0.5"]
    assert read_seed(make_seed(tmp_path / "x") / "description.md").sample_ids == material.sample_ids


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: p / "absent", "no such file or folder"),
        (lambda p: p, "no description.md or description.txt in the folder"),
        (lambda p: (p / "description.md").write_text("  \n") and p / "description.md", "empty"),
    ],
)
def test_unreadable_seeds_are_one_line_errors(tmp_path: Path, setup, message: str):
    with pytest.raises(SandmleError, match=message) as caught:
        read_seed(setup(tmp_path))
    assert "\n" not in str(caught.value)


def test_the_answer_is_checked_against_the_schema_and_the_files(tmp_path: Path):
    material = read_seed(make_seed(tmp_path))
    dna = parse_dna(json.loads(answer()[8:-4]), material)
    assert (dna.seed_task, dna.task_type, dna.metric) == (
        "bridge-joint-corrosion",
        "binary",
        "roc_auc",
    )
    cases = {
        "metric 'auc' is not one of": {"metric": "auc"},
        "task_type: Input should be": {"task_type": "clustering"},
        "n_outputs: Input should be greater than or equal to 1": {"n_outputs": 0},
        "target_kind 'value' does not fit binary": {"target_kind": "value"},
        "ids look int, not hex": {"id_scheme": "hex"},
        r"sample_submission.csv has 1 target column\(s\)": {
            "task_type": "multilabel", "n_outputs": 3, "original_outputs": 3,
        },
    }  # fmt: skip
    for expected, changes in cases.items():
        with pytest.raises(ValueError, match=expected) as caught:
            parse_dna({**DNA, **changes}, material)
        assert "\n" not in str(caught.value)


def test_the_backend_retries_once_with_the_error_then_says_so(tmp_path: Path):
    material = read_seed(make_seed(tmp_path))
    dna = extract_dna(scripted_backend([answer(metric="auc"), answer()]), material)
    assert dna.metric == "roc_auc" and dna.n_numeric == 6
    with pytest.raises(
        SandmleError, match="seed structure not extracted: .*metric 'f1' is not one of"
    ) as caught:
        extract_dna(scripted_backend([answer(metric="auc"), answer(metric="f1")]), material)
    assert "\n" not in str(caught.value)


def test_without_a_schema_only_the_dna_rules_apply():
    material = SeedMaterial(name="plain", description=DESCRIPTION)
    assert parse_dna({**DNA, "id_scheme": "hex"}, material).id_scheme == "hex"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
def test_a_pack_is_generated_from_the_extracted_dna(tmp_path: Path):
    answers = [
        answer(),
        scripted.blueprint_answer(),
        scripted.code_answer(),
        scripted.description(),
    ]
    model = get_model("mockllm/model", custom_outputs=[scripted.output(a) for a in answers])
    spec = PackSpec(n=1, seed=3, backend="llm", model="mockllm/model", secret="s" * 32)
    out = tmp_path / "pack"
    dna, outcomes = generate_from_seed(spec, make_seed(tmp_path), out, model, progress=False)
    assert dna.seed_task == "bridge-joint-corrosion"
    assert [o.task_id for o in outcomes] == ["bridge-corrosion-000"]
    blueprint = json.loads((out / "bridge-corrosion-000/generation/blueprint.json").read_text())
    assert blueprint["dna"] == json.loads((out / "generation/seed_dna.json").read_text())
    assert blueprint["dna"]["seed_task"] == "bridge-joint-corrosion"
    assert [f for f in check_task(out / "bridge-corrosion-000") if f.severity == "error"] == []
    assert (out / "pack.yaml").is_file()


def test_cli_seed_description(tmp_path: Path):
    seed = make_seed(tmp_path)
    runner = CliRunner()
    args = ["generate", "--n", "1", "--seed-description", str(seed)]
    result = runner.invoke(synth_app, [*args, "--out", str(tmp_path / "a")])
    assert result.exit_code != 0 and "needs --backend llm" in str(result.exception)
    llm = ["--backend", "llm", "--model", "mockllm/model"]
    result = runner.invoke(
        synth_app, [*args, *llm, "--seeds", "titanic", "--out", str(tmp_path / "b")]
    )
    assert result.exit_code != 0 and "replaces --seeds" in str(result.exception)
    absent = [*args[:4], str(tmp_path / "absent"), *llm, "--out", str(tmp_path / "c")]
    result = runner.invoke(synth_app, absent)
    assert result.exit_code != 0 and "absent: no such file or folder" in str(result.exception)
    assert not (tmp_path / "c").exists()  # nothing is written before the seed is read
