"""Scripted model answers for the llm backend: one tabular binary task, and broken variants."""

from __future__ import annotations

import json

from inspect_ai.model import ModelOutput, ModelUsage

FEATURES = ["humidity", "salt", "load", "age", "span", "paint", "coating"]
TARGET = "is_corroded"

BLUEPRINT = {
    "domain": {
        "title": "Bridge Joint Corrosion",
        "slug": "bridge-corrosion",
        "entity": "bridge joint inspection",
        "id_column": "id",
        "feature_columns": FEATURES,
        "target_columns": [TARGET],
        "class_names": ["sound", "corroded"],
        "text_column": "",
        "series_column": "",
        "unit": "",
    },
    "noise": {
        "label_noise": 0.0,
        "n_irrelevant": 3,
        "n_correlated": 0,
        "missing_rate": 0.0,
        "shift": 0.0,
        "outlier_rate": 0.0,
    },
    "n_train": 300,
    "n_test": 1000,
    "params": {},
}

CODE = """\
import json
import os

import numpy as np
import pandas as pd

rng = np.random.default_rng(7)
n_train, n_test = 300, 1000
n = n_train + n_test
ids = rng.permutation(np.arange(1, 10 * n))[:n]
x = rng.normal(size=(n, 6))
coating = rng.choice(["epoxy", "zinc", "none"], size=n)
logit = 3.0 * np.sin(3.0 * x[:, 0]) * np.sign(x[:, 1]) + 1.5 * x[:, 2] + np.where(coating == "none", 1.0, -0.5)
p = 1 / (1 + np.exp(-logit))
y = (rng.random(n) < p).astype(int)
frame = pd.DataFrame(x, columns=["humidity", "salt", "load", "age", "span", "paint"])
frame.insert(0, "id", ids)
frame["coating"] = coating
train = frame.iloc[:n_train].copy()
train["is_corroded"] = y[:n_train]
test = frame.iloc[n_train:].reset_index(drop=True)
LEAK
os.makedirs("out/public", exist_ok=True)
os.makedirs("out/private", exist_ok=True)
train.to_csv("out/public/train.csv", index=False)
test[[c for c in test.columns]].to_csv("out/public/test.csv", index=False)
ids_test = test["id"]
pd.DataFrame({"id": ids_test, "is_corroded": y[n_train:]}).to_csv("out/private/answers.csv", index=False)
pd.DataFrame({"id": ids_test, "is_corroded": ORACLE}).to_csv("out/private/oracle.csv", index=False)
pd.DataFrame({"id": ids_test, "is_corroded": 0.5}).to_csv("out/public/sample_submission.csv", index=False)
with open("out/rule.json", "w") as f:
    json.dump({"summary": "periodic humidity response signed by salt, plus load and coating", "params": {}}, f)
"""


def code(leak: bool = False, oracle: str = "p[n_train:]") -> str:
    leak_line = 'test["is_corroded"] = y[n_train:]' if leak else ""
    return CODE.replace("LEAK", leak_line).replace("ORACLE", oracle)


def description(leak: bool = False) -> str:
    test_columns = ["id", *FEATURES] + ([TARGET] if leak else [])
    return (
        "# Bridge Joint Corrosion\n\n## Overview\n\nPredict whether a joint is corroded.\n\n"
        "## Data\n\n"
        f"- `train.csv`: inspections with outcomes. Columns: {_cols(['id', *FEATURES, TARGET])}.\n"
        f"- `test.csv`: inspections to score. Columns: {_cols(test_columns)}.\n"
        f"- `sample_submission.csv`: the format. Columns: {_cols(['id', TARGET])}.\n\n"
        "## Evaluation\n\nArea under the ROC curve.\n\n"
        "## Submission format\n\nOne row per test id with a probability.\n"
    )


def _cols(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def output(text: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken offline
    return out


def blueprint_answer(**domain_changes: object) -> str:
    data = json.loads(json.dumps(BLUEPRINT))
    data["domain"].update(domain_changes)
    return "```json\n" + json.dumps(data, indent=2) + "\n```"


def code_answer(leak: bool = False, oracle: str = "p[n_train:]") -> str:
    return "Here is the script.\n```python\n" + code(leak, oracle) + "```\n"
