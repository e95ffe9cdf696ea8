"""Prompts of the three model-played roles (the MLOps Engineer's rule is code, in ``mlops``).

Each role gets one system prompt and one user prompt, filled from typed artifacts only, so a
prompt never depends on anything the model said in another role.
"""

from __future__ import annotations

STRATEGIST_SYSTEM = """\
You are the Data Strategist of SandMLE, a generator of micro-scale machine-learning \
competitions. You keep the structure of a real competition and move it to a new world. \
You answer with one JSON object and nothing else."""

STRATEGIST_PROMPT = """\
Seed competition structure (keep it exactly):
{dna}

Design a new micro task with this structure. Reply with one JSON object with these keys:
- "domain": {{"title", "slug" (kebab-case), "entity" (what one row is), "id_column", \
"feature_columns" (list), "target_columns" (list), "class_names" (list), "text_column", \
"series_column", "unit"}}
- "noise": {{"label_noise" (0-0.3), "n_irrelevant" (>=0), "n_correlated" (>=0), \
"missing_rate" (0-0.3), "shift" (>=0), "outlier_rate" (0-0.2)}}
- "n_train", "n_test": row counts, {min_rows} to {max_rows} rows in all, n_test >= 20
- "params": {{}} or modality knobs, e.g. {{"size": 16}} for images, \
{{"period": 7}} for time series

Rules: {structure_rules}"""

RETRY_PROMPT = """\
Your answer was rejected: {error}
Reply again with the whole corrected answer and nothing else."""

DEVELOPER_SYSTEM = """\
You are the MLE Developer of SandMLE. You write one self-contained Python script that \
generates a micro competition's data from a hidden rule. It runs offline in a sandbox with \
numpy, pandas, scikit-learn and Pillow. Reply with the script in one ```python block."""

DEVELOPER_PROMPT = """\
Blueprint:
{blueprint}

Write a script that:
1. draws every random number from numpy.random.default_rng({seed}), so reruns give the same bytes;
2. makes the target from a hidden rule of the features (an interaction, a threshold, a \
keyword pattern, a shape), learnable from {n_train} rows but not trivially, and applies the \
blueprint's noise;
3. writes exactly these files, relative to the current directory, with these columns first:
{contract}
test.csv must not contain any target or label column; train and test ids must be disjoint; \
oracle.csv holds the hidden rule's own best predictions for the test rows, in the \
submission format; sample_submission.csv is a constant guess."""

WRITER_SYSTEM = """\
You are the Technical Writer of SandMLE. You write description.md for a micro \
competition so that it reads like a real one and matches its files exactly. Reply with \
the markdown only."""

WRITER_PROMPT = """\
Competition: {title}. Each row is one {entity}. Metric: {metric} ({direction} is better).
Training rows: {n_train}; test rows: {n_test}.

Public files and their columns:
{files}

Sample submission (first rows):
```
{sample}```

Write these sections: "# <title>", "## Overview", "## Data", "## Evaluation", \
"## Submission format". In "## Data", give one bullet per public file, in exactly this \
shape, naming every column after "Columns:":
- `train.csv`: <what it holds>. Columns: `a`, `b`, `c`.
Folders are named with a trailing slash, e.g. - `images/`: <what>. \
Do not name any file or column that is not listed above."""


def structure_rules(modality: str, task_type: str, n_outputs: int) -> str:
    """What the domain's names must look like for this structure."""
    counts = {
        "binary": "class_names has 2 names; target_columns has 1 column (is_<second class>)",
        "multiclass": f"class_names has {n_outputs} names; target_columns is the class names "
        "for probability targets, else one label column",
        "multilabel": f"class_names has {n_outputs} names; target_columns is the same names",
        "regression": f"class_names is empty; target_columns has {n_outputs} column(s)",
        "forecasting": "class_names is empty; target_columns has 1 column",
    }[task_type]
    features = {
        "tabular": "feature_columns lists the numeric then categorical features",
        "text": "text_column names the text column; feature_columns is empty",
        "image": "feature_columns is empty; images are files",
        "time-series": "series_column names the series; feature_columns is [day column, event flag column]",
    }[modality]
    return f"{counts}; {features}; no name appears twice."


DNA_SYSTEM = """\
You are the Data Strategist of SandMLE. You read a real machine-learning competition's \
description and file schema and name its structure: what is predicted, how it is scored, \
what a submission holds. You answer with one JSON object and nothing else."""

DNA_PROMPT = """\
Competition: {name}

Description:
<<<
{description}
>>>

Files and their columns:
{files}

Sample submission (first rows):
```
{sample}```

Reply with one JSON object with these keys:
- "original_modality": what the real data is (tabular, text, image, audio, time-series)
- "modality": the micro task's modality: tabular, text, image or time-series (audio becomes image)
- "task_type": binary, multiclass, multilabel, regression or forecasting
- "metric": one of {metrics}
- "target_kind": "prob" (probabilities), "label" (class labels) or "value" (numbers)
- "n_outputs": classes (2 for binary), labels or target columns of the micro task, at most {max_outputs}
- "original_outputs": the same count in the real competition
- "ordinal": true when the classes are ordered grades
- "positive": true when regression targets are never negative
- "n_numeric", "n_categorical": informative numeric and categorical features (tabular only)
- "id_scheme": "int", "hex" or "prefixed", as the sample submission's ids look
- "balance": share of the positive class or of each label, between 0.05 and 0.95"""
