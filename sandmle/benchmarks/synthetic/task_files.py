"""A generated task's folder on disk: its layout, byte-stable writers and readers.

```
<task>/competition.yaml
<task>/prepared/public/{description.md, train.csv, test.csv, sample_submission.csv, images/}
<task>/prepared/private/answers.csv
<task>/generation/{blueprint,rule,baselines,ladder,milestones,rejections}.json
<task>/generation/submissions/{constant,generic,structure,oracle}.csv
```
``generation/`` sits beside ``prepared/``: it reveals the rule and is never shown to agents.
Same data, same bytes: CSVs have a fixed float format and '\\n' line ends, JSON is sorted.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Protocol

import pandas as pd
from pydantic import BaseModel

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import Description, DevelopedTask
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.harness.competition import PUBLIC_DIR

GENERATION_DIR = "generation"
PREPARED_DIR = "prepared"
BLUEPRINT_FILE = f"{GENERATION_DIR}/blueprint.json"
RULE_FILE = f"{GENERATION_DIR}/rule.json"
ANSWERS_FILE = "prepared/private/answers.csv"
DATA_FLOAT_FORMAT = "%.6g"
"""Floats in the data CSVs (train, test, answers)."""
SUBMISSION_FLOAT_FORMAT = "%.8g"
"""Floats in the baselines' submissions."""


class TechnicalWriter(Protocol):
    """Whatever writes description.md (every generator backend does)."""

    def writer(
        self, blueprint: Blueprint, task: DevelopedTask, sample: pd.DataFrame
    ) -> Description:
        """Technical Writer: description.md."""
        ...


def write_csv(frame: pd.DataFrame, path: Path, float_format: str = DATA_FLOAT_FORMAT) -> None:
    """Stable bytes: fixed float format, '\\n' line ends, no index."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, float_format=float_format, lineterminator="\n")


JSON_FLOAT_DIGITS = 12
"""Significant digits of the floats in the generation records. A score's last bits depend on
the CPU: numpy sums with AVX-512 on one machine and AVX2 on another, and the results differ in
the last place (a built-in task's ladder read 0.19529553927247395 on one, ...392 on the other)."""


def stable_floats(value: Any) -> Any:
    """``value`` with every float rounded to ``JSON_FLOAT_DIGITS`` significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{JSON_FLOAT_DIGITS}g}")
    if isinstance(value, dict):
        return {k: stable_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stable_floats(v) for v in value]
    return value


def write_json(model: BaseModel, path: Path) -> None:
    """Sorted keys, floats to ``JSON_FLOAT_DIGITS``: the same bytes on every machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(stable_floats(model.model_dump(mode="json")), sort_keys=True, indent=2)
    path.write_text(text + "\n", encoding="utf-8")


def write_prepared(
    root: Path, bp: Blueprint, task: DevelopedTask, backend: TechnicalWriter
) -> None:
    """The data roles' files: everything under prepared/ (public and private)."""
    public = root / PUBLIC_DIR
    sample = task.sample
    if sample is None:
        sample = tg.submission_frame(
            bp, task.test[bp.domain.id_column], tg.constant_canon(bp, len(task.test))
        )
    write_csv(task.train, public / "train.csv")
    write_csv(task.test, public / "test.csv")
    write_csv(sample, public / "sample_submission.csv")
    for relative, data in sorted(task.files.items()):
        (public / relative).parent.mkdir(parents=True, exist_ok=True)
        (public / relative).write_bytes(data)
    description = backend.writer(bp, task, sample)
    (public / "description.md").write_text(description.markdown, encoding="utf-8")
    write_csv(task.answers, root / ANSWERS_FILE)


def file_digests(root: Path, under: str = "") -> dict[str, str]:
    """SHA-256 of every file below ``root/under``, keyed by POSIX path relative to ``root``."""
    base = root / under if under else root
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(base.rglob("*"))
        if path.is_file()
    }


def load_blueprint(root: Path) -> Blueprint:
    return Blueprint.model_validate_json((root / BLUEPRINT_FILE).read_text(encoding="utf-8"))
