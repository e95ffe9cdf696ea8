"""Structural DNA from a seed's real description and schema, read by the llm backend.

``synth generate --backend llm --seed-description PATH`` takes a competition's own
``description.md`` (a file, or a folder holding it beside ``sample_submission.csv`` and the
data CSVs). This module reads that material, words the question for the model, and checks
the answer against the DNA schema and against the files: the metric must be registered, the
target kind must fit the task type, and the sample submission's columns and ids must agree
with what the model said. Asking the model and generating the pack is :mod:`.from_seed`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from sandmle.benchmarks.synthetic.blueprint import StructuralDNA
from sandmle.benchmarks.synthetic.llm import prompts
from sandmle.errors import SandmleError
from sandmle.harness.grading.metrics import metric_names

DESCRIPTION_FILES = ("description.md", "description.txt")
SAMPLE_FILE = "sample_submission.csv"
MAX_DESCRIPTION_CHARS = 12_000
MAX_OUTPUTS = 5
"""Micro tasks cap classes, labels and target columns (as the seed table does)."""
LLM_MODALITIES = ("tabular", "text", "image", "time-series")
LLM_TASK_TYPES = ("binary", "multiclass", "multilabel", "regression", "forecasting")
TARGET_KINDS = {
    "binary": ("prob", "label"),
    "multiclass": ("prob", "label"),
    "multilabel": ("prob",),
    "regression": ("value",),
    "forecasting": ("value",),
}
_HEX = re.compile(r"^[0-9a-f]{6,}$")
_SLUG = re.compile(r"[^a-z0-9]+")


class SeedMaterial(BaseModel):
    """What the model reads about the seed: its own words and its files' schema."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Seed task id (kebab-case, from the folder or file name)."""
    description: str
    """The competition's description, cut to ``MAX_DESCRIPTION_CHARS``."""
    columns: dict[str, list[str]] = {}
    """Header of every CSV beside the description, by file name."""
    sample_rows: str = ""
    """The sample submission's first rows as CSV text (empty when there is none)."""
    sample_ids: list[str] = []
    """Up to 50 of the sample submission's ids, for the id scheme check."""


def read_seed(path: Path) -> SeedMaterial:
    """A description file, or a folder with one (and, ideally, its sample submission)."""
    path = Path(path)
    if path.is_dir():
        found = [path / n for n in DESCRIPTION_FILES if (path / n).is_file()]
        if not found:
            raise SandmleError(f"{path}: no {' or '.join(DESCRIPTION_FILES)} in the folder")
        folder, description, name = path, found[0], path.name
    elif path.is_file():
        folder, description = path.parent, path
        name = path.stem if path.stem not in ("description", "README") else path.parent.name
    else:
        raise SandmleError(f"{path}: no such file or folder")
    text = description.read_text(encoding="utf-8", errors="replace").strip()
    if not text:
        raise SandmleError(f"{description}: the description is empty")
    columns = {p.name: _header(p) for p in sorted(folder.glob("*.csv"))}
    material = SeedMaterial(
        name=_SLUG.sub("-", name.lower()).strip("-") or "seed",
        description=text[:MAX_DESCRIPTION_CHARS],
        columns=columns,
    )
    if (folder / SAMPLE_FILE).is_file():
        sample = _read(folder / SAMPLE_FILE, nrows=50)
        material.sample_rows = sample.head(3).to_csv(index=False, lineterminator="\n")
        material.sample_ids = [str(v) for v in sample.iloc[:, 0]]
    return material


def _header(path: Path) -> list[str]:
    return [str(c) for c in _read(path, nrows=0).columns]


def _read(path: Path, nrows: int) -> pd.DataFrame:
    try:
        return pd.read_csv(path, nrows=nrows, dtype=str)
    except (ValueError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SandmleError(f"{path}: not a readable CSV ({first})") from None


def dna_prompt(material: SeedMaterial) -> str:
    files = [f"- {name}: {', '.join(cols)}" for name, cols in material.columns.items()]
    return prompts.DNA_PROMPT.format(
        name=material.name,
        description=material.description,
        files="\n".join(files) or "(no CSV files given)",
        sample=material.sample_rows or "(no sample submission given)\n",
        metrics=", ".join(llm_metrics()),
        max_outputs=MAX_OUTPUTS,
    )


def llm_metrics() -> list[str]:
    """Registered metrics a micro task of the llm backend can be scored with."""
    return [m for m in metric_names() if m != "sandmle_release_evaluator" and "map_at" not in m]


def parse_dna(data: dict[str, Any], material: SeedMaterial) -> StructuralDNA:
    """The model's JSON as DNA; a ValueError (one line) says what is wrong."""
    fixed = {"seed_task": material.name}
    try:
        dna = StructuralDNA.model_validate({**data, **fixed})
    except ValidationError as exc:
        raise ValueError(one_line(exc)) from None
    problems = dna_problems(dna, material)
    if problems:
        raise ValueError("; ".join(problems))
    return dna


def one_line(exc: ValidationError) -> str:
    """A pydantic error as one line: ``field: message`` per problem."""
    parts = [f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors()]
    return "; ".join(parts)


def dna_problems(dna: StructuralDNA, material: SeedMaterial) -> list[str]:
    """What the schema cannot check: a known metric, and agreement with the files."""
    problems = []
    if dna.metric not in llm_metrics():
        problems.append(f"metric {dna.metric!r} is not one of {', '.join(llm_metrics())}")
    if dna.modality not in LLM_MODALITIES or dna.task_type not in LLM_TASK_TYPES:
        problems.append(
            f"the llm backend makes {'/'.join(LLM_TASK_TYPES)} tasks of modality "
            f"{'/'.join(LLM_MODALITIES)}, not {dna.task_type} {dna.modality}"
        )
        return problems
    if dna.target_kind not in TARGET_KINDS[dna.task_type]:
        problems.append(f"target_kind {dna.target_kind!r} does not fit {dna.task_type}")
    if dna.task_type == "binary" and dna.n_outputs != 2:
        problems.append("a binary task has n_outputs 2")
    if dna.n_outputs > MAX_OUTPUTS or dna.n_outputs > dna.original_outputs:
        problems.append(f"n_outputs must be at most {MAX_OUTPUTS} and original_outputs")
    return problems + _schema_problems(dna, material)


def _schema_problems(dna: StructuralDNA, material: SeedMaterial) -> list[str]:
    if not material.sample_ids:
        return []
    targets = len(material.columns.get(SAMPLE_FILE, [])) - 1
    single = dna.task_type == "binary" or dna.target_kind == "label"
    expected = 1 if single else dna.original_outputs
    problems = []
    if targets != expected:
        problems.append(
            f"sample_submission.csv has {targets} target column(s); a {dna.task_type} task "
            f"with target_kind {dna.target_kind} and original_outputs "
            f"{dna.original_outputs} has {expected}"
        )
    scheme = id_scheme(material.sample_ids)
    if scheme != dna.id_scheme:
        problems.append(f"sample_submission.csv ids look {scheme}, not {dna.id_scheme}")
    return problems


def id_scheme(ids: list[str]) -> str:
    """How ids look: whole numbers, hex strings, or anything else (prefixed)."""
    if all(i.isdigit() for i in ids):
        return "int"
    if all(_HEX.match(i) for i in ids):
        return "hex"
    return "prefixed"
