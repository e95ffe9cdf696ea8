"""The file contract between the model-written generation code and the pipeline.

The code must leave the same tables the procedural developer returns, so the same
baselines, milestones and sanity gate apply. ``contract_text`` tells the model the exact
columns; ``collect_task`` reads the sandbox's files back and checks them.
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule
from sandmle.benchmarks.synthetic.blueprint import Blueprint

TRAIN, TEST, SAMPLE = "public/train.csv", "public/test.csv", "public/sample_submission.csv"
ANSWERS, ORACLE, RULE = "private/answers.csv", "private/oracle.csv", "rule.json"
IMAGE_DIR = "images"
MIN_ROWS, MAX_ROWS = 600, 2000  # test sets must be large enough for medals above noise
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class ContractError(ValueError):
    """The generated files break the contract; the message is for the model."""


def feature_columns(bp: Blueprint) -> list[str]:
    """Columns that train.csv and test.csv share besides the id, by modality."""
    d = bp.domain
    return {
        "tabular": list(d.feature_columns),
        "text": [d.text_column],
        "image": [],
        "time-series": [d.series_column, *d.feature_columns],
    }[bp.dna.modality]


def expected_columns(bp: Blueprint) -> dict[str, list[str]]:
    """Required columns of every CSV, keyed by path under ``out/``."""
    ids, targets = [bp.domain.id_column], list(bp.domain.target_columns)
    features = feature_columns(bp)
    return {
        TRAIN: ids + features + tg.train_label_columns(bp),
        TEST: ids + features,
        SAMPLE: ids + targets,
        ANSWERS: ids + targets,
        ORACLE: ids + targets,
    }


def contract_text(bp: Blueprint) -> str:
    """The contract as the developer prompt states it."""
    lines = [
        f"- `out/{path}` with columns {', '.join(cols)}"
        for path, cols in expected_columns(bp).items()
    ]
    lines.append(
        f'- `out/{RULE}`: {{"summary": one sentence on the hidden rule, "params": {{...}}}}'
    )
    if bp.dna.modality == "image":
        size = int(bp.params.get("size", 16))
        lines.append(
            f"- `out/public/{IMAGE_DIR}/<id>.png`: one {size}x{size} grayscale PNG per train and test row"
        )
    return "\n".join(lines)


def blueprint_problems(bp: Blueprint) -> list[str]:
    """What pydantic cannot check: sizes, slug, and names that fit the structure."""
    d, dna, problems = bp.domain, bp.dna, []
    if not MIN_ROWS <= bp.n_train + bp.n_test <= MAX_ROWS:
        problems.append(f"n_train + n_test must lie in {MIN_ROWS}..{MAX_ROWS}")
    if not _SLUG.match(d.slug):
        problems.append(f"slug {d.slug!r} is not kebab-case")
    labelled = dna.task_type in ("binary", "multiclass", "multilabel")
    if labelled and len(d.class_names) != dna.n_outputs:
        problems.append(f"class_names needs {dna.n_outputs} names, got {len(d.class_names)}")
    wanted = 1 if dna.task_type == "binary" or dna.target_kind == "label" else dna.n_outputs
    if len(d.target_columns) != wanted:
        problems.append(f"target_columns needs {wanted} column(s), got {len(d.target_columns)}")
    if (
        dna.task_type == "multiclass"
        and dna.target_kind == "prob"
        and d.target_columns != d.class_names
    ):
        problems.append("target_columns must equal class_names for class probabilities")
    if not all(feature_columns(bp)):
        problems.append(f"the {dna.modality} modality needs its text/series column named")
    if dna.modality == "time-series" and (len(d.feature_columns) != 2 or "period" not in bp.params):
        problems.append("time series need feature_columns = [day, event flag] and params.period")
    if dna.modality == "image" and "size" not in bp.params:
        problems.append("images need params.size")
    names = expected_columns(bp)[TRAIN]
    if len(set(names)) != len(names) or set(d.target_columns) & {d.id_column, *feature_columns(bp)}:
        problems.append("id, feature and target column names must all differ")
    return problems


def collect_task(bp: Blueprint, files: dict[str, bytes], code: str) -> DevelopedTask:
    """The sandbox's files as a :class:`DevelopedTask`; raises ContractError listing what is wrong."""
    missing = [p for p in [*expected_columns(bp), RULE] if p not in files]
    if missing:
        raise ContractError(f"missing output file(s): {', '.join('out/' + p for p in missing)}")
    tables = {path: _read_csv(files[path], path) for path in expected_columns(bp)}
    problems = _column_problems(bp, tables) + _row_problems(bp, tables)
    if problems:
        raise ContractError("; ".join(problems))
    test_ids = tables[TEST][bp.domain.id_column]
    return DevelopedTask(
        rule=_rule(files[RULE], code),
        train=tables[TRAIN],
        test=tables[TEST],
        answers=tables[ANSWERS],
        files={p.removeprefix("public/"): data for p, data in files.items() if _is_extra(p)},
        oracle=canon_from_submission(bp, tables[ORACLE], test_ids),
    )


def _read_csv(data: bytes, path: str) -> pd.DataFrame:
    try:
        return pd.read_csv(io.BytesIO(data))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ContractError(f"out/{path} is not a readable CSV: {exc}") from None


def _column_problems(bp: Blueprint, tables: dict[str, pd.DataFrame]) -> list[str]:
    problems = []
    for path, required in expected_columns(bp).items():
        absent = [c for c in required if c not in tables[path].columns]
        if absent:
            problems.append(f"out/{path} lacks column(s) {', '.join(absent)}")
    return problems


def _row_problems(bp: Blueprint, tables: dict[str, pd.DataFrame]) -> list[str]:
    id_column, problems = bp.domain.id_column, []
    if len(tables[TRAIN]) != bp.n_train or len(tables[TEST]) != bp.n_test:
        problems.append(
            f"train/test have {len(tables[TRAIN])}/{len(tables[TEST])} rows, "
            f"the blueprint says {bp.n_train}/{bp.n_test}"
        )
    test_ids = set(tables[TEST].get(id_column, []))
    for path in (ANSWERS, ORACLE, SAMPLE):
        if id_column in tables[path] and set(tables[path][id_column]) != test_ids:
            problems.append(f"out/{path} ids differ from test.csv ids")
    return problems


def _is_extra(path: str) -> bool:
    return path.startswith("public/") and path not in (TRAIN, TEST, SAMPLE)


def _rule(data: bytes, code: str) -> HiddenRule:
    try:
        payload = json.loads(data)
        summary, params = str(payload["summary"]), dict(payload.get("params", {}))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ContractError(
            f"out/{RULE} must be {{'summary': str, 'params': dict}}: {exc}"
        ) from None
    # The code is the rule's full statement; keeping it here lets the sanity gate replay it.
    return HiddenRule(kind="llm-code", summary=summary, params={**params, "code": code})


def canon_from_submission(bp: Blueprint, frame: pd.DataFrame, ids: pd.Series) -> np.ndarray:
    """Submission-format predictions (in ``ids`` order) → canonical matrix (see ``targets``)."""
    aligned = frame.set_index(bp.domain.id_column).loc[ids.to_numpy()]
    targets = bp.domain.target_columns
    if bp.dna.target_kind == "label":
        index = _class_index(bp, aligned[targets[0]])
        return np.eye(bp.dna.n_outputs)[index]
    values = aligned[targets].to_numpy(dtype=np.float64)
    if bp.dna.task_type == "binary":
        return np.column_stack([1 - values[:, 0], values[:, 0]])
    return values


def _class_index(bp: Blueprint, values: pd.Series) -> np.ndarray:
    if bp.dna.task_type == "binary" or bp.dna.ordinal:
        return values.to_numpy(dtype=np.int64)
    lookup = {name: i for i, name in enumerate(bp.domain.class_names)}
    unknown = sorted(set(values.astype(str)) - set(lookup))
    if unknown:
        raise ContractError(f"out/{ORACLE} has unknown class(es) {', '.join(unknown[:3])}")
    return values.astype(str).map(lookup).to_numpy(dtype=np.int64)
