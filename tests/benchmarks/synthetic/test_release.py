"""``synth import --format sandmle-release``: a fake release task, converted and graded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from sandmle.benchmarks.synthetic.cli import synth_app
from sandmle.benchmarks.synthetic.release import import_release
from sandmle.errors import SandmleError
from sandmle.harness.competition import load_competition
from sandmle.harness.confinement import TRUST_ENV, UnsafePackError
from sandmle.harness.grading.bounded import grade_csv_bounded, grading
from sandmle.harness.grading.report import grade_csv

EVALUATOR = """\
import argparse
import json

import pandas as pd
SCORER

parser = argparse.ArgumentParser()
parser.add_argument("--submission_path", required=True)
args = parser.parse_args()
answers = pd.read_csv("answer.csv")
submission = pd.read_csv(args.submission_path)
merged = answers.merge(submission, on="id", suffixes=("_true", "_pred"))
if len(merged) != len(answers) or len(submission) != len(answers):
    print(json.dumps({"score": None, "error": "submission ids do not match answer.csv"}))
    raise SystemExit(0)
print(json.dumps({
    "score": float(score(merged["label_true"], merged["label_pred"])),
    "is_lower_better": False,
    "gold_threshold": 0.9, "silver_threshold": 0.8,
    "bronze_threshold": 0.7, "median_threshold": 0.55,
}))
"""
SKLEARN = "from sklearn.metrics import accuracy_score as score"
CUSTOM = "def score(t, p):\n    return 0.25 + 0.75 * (t == p).mean() ** 2  # a house metric"
LABELS = ["cat", "dog", "owl"]


def make_release(root: Path, scorer: str = SKLEARN, name: str = "animal-sounds") -> Path:
    public = root / name / "prepared/public"
    public.mkdir(parents=True)
    ids = list(range(100, 130))
    labels = [LABELS[(i * 7) % 3] for i in ids]
    pd.DataFrame({"id": ids, "x": [i % 5 for i in ids]}).to_csv(public / "test.csv", index=False)
    pd.DataFrame({"id": ids, "label": labels}).to_csv(public / "answer.csv", index=False)
    pd.DataFrame({"id": ids, "label": "cat"}).to_csv(public / "sample_submission.csv", index=False)
    (public / "description.md").write_text("# Animal Sounds\n\nGuess the animal.\n")
    (public / "evaluator.py").write_text(EVALUATOR.replace("SCORER", scorer))
    return root / name


def run_original(task: Path, submission: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "evaluator.py", "--submission_path", str(submission)],
        cwd=task / "prepared/public", capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(proc.stdout)


def submissions(tmp_path: Path) -> list[Path]:
    ids = list(range(100, 130))
    rows = {
        "perfect": [LABELS[(i * 7) % 3] for i in ids],
        "mixed": [LABELS[i % 3] for i in ids],
        "dogs": ["dog"] * len(ids),
    }
    paths = []
    for name, labels in rows.items():
        paths.append(tmp_path / f"{name}.csv")
        pd.DataFrame({"id": ids, "label": labels}).to_csv(paths[-1], index=False)
    return paths


@pytest.mark.parametrize(
    ("scorer", "metric"), [(SKLEARN, "accuracy"), (CUSTOM, "sandmle_release_evaluator")]
)
def test_converted_task_grades_like_the_evaluator(tmp_path: Path, scorer: str, metric: str):
    task = make_release(tmp_path / "release", scorer)
    assert import_release(tmp_path / "release", tmp_path / "out") == ["animal-sounds"]
    competition = load_competition(tmp_path / "out/animal-sounds", trust_code=True)
    assert competition.config.metric == metric
    t = competition.config.thresholds
    assert (t.gold, t.silver, t.bronze, t.median) == (0.9, 0.8, 0.7, 0.55)
    for path in submissions(tmp_path):
        report = grade_csv(path, competition)
        assert report.valid_submission
        assert report.score == round(run_original(task, path)["score"], 5)  # graded at 5 decimals


def test_no_answer_or_evaluator_stays_public(tmp_path: Path):
    make_release(tmp_path / "release")
    import_release(tmp_path / "release", tmp_path / "out")
    root = tmp_path / "out/animal-sounds"
    public = sorted(p.name for p in (root / "prepared/public").iterdir())
    assert public == ["description.md", "sample_submission.csv", "test.csv"]
    assert (root / "prepared/private/answers.csv").is_file()
    assert (root / "prepared/private/evaluator.py").is_file()
    assert (tmp_path / "release/animal-sounds/prepared/public/answer.csv").is_file()  # source kept


def test_wrapped_evaluator_reports_its_error_as_invalid(tmp_path: Path):
    make_release(tmp_path / "release", CUSTOM)
    import_release(tmp_path / "release", tmp_path / "out")
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"id": [1, 2], "label": ["cat", "dog"]}).to_csv(bad, index=False)
    report = grade_csv(bad, load_competition(tmp_path / "out/animal-sounds", trust_code=True))
    assert not report.valid_submission
    assert "submission ids do not match answer.csv" in report.invalid_reason


@pytest.mark.parametrize("missing", ["evaluator.py", "answer.csv"])
def test_missing_release_files_are_one_line_errors(tmp_path: Path, missing: str):
    task = make_release(tmp_path / "release")
    (task / "prepared/public" / missing).unlink()
    with pytest.raises(SandmleError, match=f"animal-sounds: missing prepared/public/{missing}$"):
        import_release(tmp_path / "release", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_import(tmp_path: Path):
    make_release(tmp_path / "release")
    runner = CliRunner()
    args = ["import", str(tmp_path / "release"), "--format", "sandmle-release"]
    result = runner.invoke(synth_app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "imported 1 task(s)" in result.output
    result = runner.invoke(synth_app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code != 0 and "is not empty" in str(result.exception)
    result = runner.invoke(
        synth_app, [*args[:2], "--format", "kaggle", "--out", str(tmp_path / "o2")]
    )
    assert result.exit_code != 0


BROKEN = "def score(t, p):\n    raise RuntimeError('scorer crashed')"


def test_a_failing_task_is_skipped_and_listed(tmp_path: Path):
    make_release(tmp_path / "release", name="animal-sounds")
    make_release(tmp_path / "release", BROKEN, name="broken-task")
    assert import_release(tmp_path / "release", tmp_path / "out") == ["animal-sounds"]
    report = json.loads((tmp_path / "out/import_report.json").read_text())
    assert [(r["task"], r["status"]) for r in report] == [
        ("animal-sounds", "imported"),
        ("broken-task", "failed"),
    ]
    assert report[1]["reason"].startswith("broken-task: evaluator rejects the sample")
    assert not (tmp_path / "out/broken-task").exists()


def test_ok_competitions_sanity_is_honoured(tmp_path: Path):
    make_release(tmp_path / "release", name="animal-sounds")
    make_release(tmp_path / "release", name="bird-calls")
    (tmp_path / "release/ok_competitions_sanity.json").write_text('["bird-calls"]')
    runner = CliRunner()
    result = runner.invoke(
        synth_app, ["import", str(tmp_path / "release"), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    assert "imported 1 task(s)" in result.output
    assert "skipped: animal-sounds: not listed in ok_competitions_sanity.json" in result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "bird-calls",
        "import_report.json",
    ]


# Reads test.csv from its working directory and writes a scratch file there, as release
# evaluators may; the metric is a house one, so the task is graded by wrapping evaluator.py.
READS_TEST = (
    CUSTOM
    + """
test_ids = set(pd.read_csv("test.csv")["id"])
open("scratch.txt", "w").write("written by the evaluator")
"""
)


def test_evaluator_runs_in_a_copy_of_the_public_folder(tmp_path: Path):
    task = make_release(tmp_path / "release", READS_TEST)
    assert import_release(tmp_path / "release", tmp_path / "out") == ["animal-sounds"]
    competition = load_competition(tmp_path / "out/animal-sounds", trust_code=True)
    assert competition.config.metric == "sandmle_release_evaluator"
    public = competition.public_dir
    before = {p.name: p.read_bytes() for p in public.iterdir()}
    for path in submissions(tmp_path):
        expected = round(run_original(task, path)["score"], 5)
        assert grade_csv_bounded(path, competition).score == expected
        with grading(competition):
            assert grade_csv(path, competition).score == expected
    assert {p.name: p.read_bytes() for p in public.iterdir()} == before  # nothing added there
    assert not (competition.private_dir / "scratch.txt").exists()


def test_sandmle_grade_runs_the_evaluator_in_the_public_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`sandmle grade --trust-pack-code` grades a release task whose evaluator reads test.csv
    as the scorer does; without the flag the pack's evaluator is refused in one line."""
    from sandmle.cli import app

    monkeypatch.setenv(TRUST_ENV, "0")  # restored after the test: the flag sets it to 1
    task = make_release(tmp_path / "release", READS_TEST)
    import_release(tmp_path / "release", tmp_path / "out")
    args = ["grade", str(submissions(tmp_path)[0]), "-c", str(tmp_path / "out/animal-sounds")]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code != 0 and isinstance(refused.exception, UnsafePackError)
    assert "--trust-pack-code" in str(refused.exception) and "\n" not in str(refused.exception)
    for path in submissions(tmp_path):
        expected = round(run_original(task, path)["score"], 5)
        args = ["grade", str(path), "--competition", str(tmp_path / "out/animal-sounds")]
        result = CliRunner().invoke(app, [*args, "--trust-pack-code"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert report["valid_submission"] and report["score"] == expected
