"""Answer leaks: answer columns, or their values, reachable from the public files."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.determinism import BLUEPRINT_FILE, load_blueprint
from sandmle.harness.competition import Competition

MIN_ROWS = 10  # below this, a column can match the answers by chance


def find_leaks(competition: Competition) -> list[str]:
    public, answers_path = competition.public_dir, competition.answers_path
    answers = pd.read_csv(answers_path)
    reasons = _leaked_names(competition)
    answer_bytes = answers_path.read_bytes()
    for path in sorted(public.rglob("*")):
        relative = path.relative_to(public).as_posix()
        if not path.is_file():
            continue
        if any(word in path.name.lower() for word in ("answer", "solution")):
            reasons.append(f"public file {relative} looks like an answers file")
        if path.read_bytes() == answer_bytes:
            reasons.append(f"public file {relative} is a copy of the answers")
        elif path.suffix == ".csv":
            reasons += _value_leaks(relative, pd.read_csv(path), answers, competition)
    return reasons


def _leaked_names(competition: Competition) -> list[str]:
    labels = set(competition.config.target_columns)
    if (competition.root / BLUEPRINT_FILE).is_file():
        labels |= set(tg.train_label_columns(load_blueprint(competition.root)))
    header = pd.read_csv(competition.public_dir / "test.csv", nrows=0).columns
    return [f"test.csv has the answer column {c!r}" for c in header if c in labels]


def _value_leaks(
    relative: str, frame: pd.DataFrame, answers: pd.DataFrame, competition: Competition
) -> list[str]:
    id_column = competition.config.id_columns[0]
    if id_column not in frame.columns or len(answers) < MIN_ROWS:
        return []
    merged = answers.merge(frame, on=id_column, suffixes=("__answer", ""))
    if len(merged) != len(answers):
        return []
    reasons = []
    for target in competition.config.target_columns:
        truth = merged[target + "__answer" if target + "__answer" in merged else target]
        if truth.nunique() < 2:
            continue
        for column in frame.columns:
            if column != id_column and column in merged and _same(merged[column], truth):
                reasons.append(f"{relative} column {column!r} equals the answer {target!r}")
    return reasons


def _same(a: pd.Series, b: pd.Series) -> bool:
    if a.name == b.name:
        return False
    x, y = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
    if x.notna().all() and y.notna().all():
        return bool(np.allclose(x.to_numpy(float), y.to_numpy(float), rtol=1e-6, atol=1e-9))
    return bool((a.astype(str).to_numpy() == b.astype(str).to_numpy()).all())
