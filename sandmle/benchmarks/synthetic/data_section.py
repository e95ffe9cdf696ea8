"""The description's Data section and column guide: every public file and every column.

The "## Data" section lists every public file as ``- `name`: ...`` and, for CSVs, every
column after "Columns:"; ``sanity.description_mismatches`` parses exactly that shape back.
A task type with its own files states them through its :class:`~.artifacts.Specifics`.
"""

from __future__ import annotations

import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.draft import Draft
from sandmle.benchmarks.synthetic.phrases import COUNTS, FILE_KINDS, SUFFIX_UNITS, UNITS


def data(draft: Draft) -> str:
    """The file list (the three CSVs in a drawn order first), a note on blanks for tables,
    and the column guide when the layout has no section of its own for it."""
    entries = file_entries(draft)
    head = 3 if draft.spec is None else len(entries)  # a task type's files: any order
    order = [entries[i] for i in draft.rng.permutation(head)] + entries[head:]
    lead = draft.pick(
        (
            "The folder holds these files:",
            "You get these files:",
            "Files:",
            "Everything you need is in the data folder:",
        )
    )
    lines = [lead, "", *order]
    if draft.bp.dna.modality == "tabular":
        lines += [
            "",
            draft.pick(
                (
                    "Some feature values are missing or corrupted, as in real data.",
                    "As in any real log, a few values are missing or were recorded wrongly.",
                    "Expect gaps and a few implausible readings among the feature values.",
                )
            ),
        ]
    if "columns" not in draft.layout:
        lines += ["", *column_lines(draft, "table")]
    return "\n".join(lines)


def file_entries(draft: Draft) -> list[str]:
    """One ``- `name`: ...`` line per public file or folder, CSVs with their columns."""
    if draft.spec:
        frames = {"train.csv": draft.task.train, "test.csv": draft.task.test}
        frames["sample_submission.csv"] = draft.sample
        entries = []
        for name, options in draft.spec.files:
            columns = f" Columns: {cols(frames[name])}." if name in frames else ""
            entries.append(f"- `{name}`: {draft.pick(options)}.{columns}")
        return entries
    bp, task, d = draft.bp, draft.task, draft.bp.domain
    held_out = ", ".join(tg.train_label_columns(bp))
    train = draft.pick(
        (
            f"{len(task.train)} rows, one per {d.entity}, with outcomes",
            f"the training data: {len(task.train)} rows, one per {d.entity}",
            f"{len(task.train)} labelled rows (one {d.entity} each)",
        )
    )
    test = draft.pick(
        (
            f"{len(task.test)} rows, the same without {held_out}",
            f"the {len(task.test)} rows to predict; no {held_out}",
            f"test data: {len(task.test)} rows without {held_out}",
        )
    )
    sample = draft.pick(
        (
            "a valid submission in the right format",
            "a correctly formatted submission with a constant guess",
            "the submission format, filled with a constant guess",
        )
    )
    entries = [
        f"- `train.csv`: {train}. Columns: {cols(task.train)}.",
        f"- `test.csv`: {test}. Columns: {cols(task.test)}.",
        f"- `sample_submission.csv`: {sample}. Columns: {cols(draft.sample)}.",
    ]
    return entries + extra_entries(bp, task)


def column_lines(draft: Draft, style: str) -> list[str]:
    """The column guide as a markdown table (``table``) or as bullets."""
    rows = column_rows(draft)
    if style == "table":
        lead = draft.pick(("What the columns hold:", "Column meanings and units:"))
        body = ["| column | meaning |", "| --- | --- |"]
        return [lead, "", *body, *(f"| `{c}` | {m} |" for c, m in rows)]
    return [f"- `{c}`: {m}." for c, m in rows]


def column_rows(draft: Draft) -> list[tuple[str, str]]:
    """(column, meaning) for the id and every train.csv column."""
    if draft.spec:
        return list(draft.spec.columns)
    bp, d = draft.bp, draft.bp.domain
    labels = set(tg.train_label_columns(bp))
    rows = [(d.id_column, f"row id ({draft.facts.id_scheme})")]
    for column in draft.task.train.columns:
        name = str(column)
        if name == d.id_column:
            continue
        if name in labels:
            rows.append((name, label_meaning(draft, name)))
        else:
            rows.append((name, feature_meaning(draft, name)))
    return rows


def label_meaning(draft: Draft, name: str) -> str:
    """What a label column of train.csv holds."""
    d = draft.bp.domain
    if draft.bp.dna.task_type in ("regression", "forecasting"):
        unit = f"in {d.unit}" if d.unit and d.unit != name else "a count"
        return f"the outcome, {unit} (train only)"
    if draft.bp.dna.task_type == "binary":
        return f"1 if the {d.entity} is {d.class_names[-1]}, else 0 (train only)"
    if draft.bp.dna.task_type == "multilabel":
        return f"1 if the label {name} applies, else 0 (train only)"
    if draft.bp.dna.ordinal:
        return f"the grade, 0 to {draft.bp.dna.n_outputs - 1} (train only)"
    if draft.bp.dna.task_type == "multiclass":
        return "the class (train only)"
    return "the target (train only)"


def feature_meaning(draft: Draft, name: str) -> str:
    """What a feature column holds, with its unit for numbers."""
    d = draft.bp.domain
    if name == d.text_column:
        return f"the text of the {d.entity}, as written"
    if name == d.series_column:
        return f"which {d.series_column} the row belongs to"
    if draft.bp.dna.modality == "time-series":
        if name == d.feature_columns[0]:
            return "day number within the series, counted from 0"
        return f"1 on days with a {name.replace('_', ' ')}, else 0"
    if not pd.api.types.is_numeric_dtype(draft.task.train[name]):
        return "a categorical code"
    return f"numeric reading, {unit_of(name)}"


def extra_entries(bp: Blueprint, task: DevelopedTask) -> list[str]:
    """One bullet per extra top-level folder or file (images, recordings, ...)."""
    entries = []
    folders: dict[str, set[str]] = {}
    for name in sorted(task.files):
        head, _, rest = name.partition("/")
        if rest:
            folders.setdefault(head, set()).add("." + rest.rsplit(".", 1)[-1].lower())
        else:
            entries.append(f"- `{name}`: an extra public file.")
    for folder, suffixes in sorted(folders.items()):
        suffix = sorted(suffixes)[0]
        kind = FILE_KINDS.get(suffix, f"{suffix} file")
        if suffix == ".wav" and {"sample_rate", "seconds"} <= set(bp.params):
            rate, seconds = int(bp.params["sample_rate"]), float(bp.params["seconds"])
            kind = f"mono {seconds:g} s {kind} sampled at {rate} Hz"
        if suffix == ".png" and "size" in bp.params:
            size = int(bp.params["size"])
            kind = f"{size}x{size} {kind}"
        entries.append(f"- `{folder}/`: one {kind} per row of train and test, named <id>{suffix}.")
    return entries


def unit_of(name: str) -> str:
    """A numeric column's unit: by its name, its suffix, or whether it counts things."""
    if name in UNITS:
        return UNITS[name]
    for suffix, unit in SUFFIX_UNITS:
        if name.endswith(suffix):
            return unit
    return "a count" if name in COUNTS else "unitless"


def cols(frame: pd.DataFrame) -> str:
    """The frame's columns as inline code, comma-separated."""
    return ", ".join(f"`{c}`" for c in frame.columns)
