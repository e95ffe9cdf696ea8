"""The paper-in-miniature report: base / SFT / GRPO / GRPO-sparse side by side.

``sandmle reproduce`` writes ``reproduce.json`` beside its ``eval/`` log dir, naming which model
is which role and which scaffold was trained. From the leaderboard's samples this module builds
the report's tables (one per question of the paper) and its training-curve figure; the CLI, the
HTML report and the app's Reproduce tab all show these same frames.

Every comparison is the leaderboard's one paired test (``stats.compare``: exact sign-flip on
per-competition means, "too few shared competitions" below ``stats.MIN_DECIDABLE``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from sandmle.leaderboard import stats
from sandmle.leaderboard.choices import CHOICE_COLUMNS, choice_table
from sandmle.specs.benchmarks import by_log_name

MANIFEST = "reproduce.json"
CURVES = "curves.csv"
"""Training curves (run, step, metric, value), written by ``sandmle reproduce``'s report stage."""
METRICS = {"valid_submission": "valid", "any_medal": "medal", "above_median": ">median"}
FIXED_LOGS = "eval-fixed"
"""Beside ``eval/``: the fixed toolkit options' logs (``eval.fixed_options``)."""
BASE_LOGS = "eval-base"
"""Beside ``eval/``: the base model's logs when it runs only the trained scaffold on the
held-out pack (``eval.base_cells: trained``)."""
FIXED_PREFIX = "fixed: "
"""Roles of the fixed toolkit options: ``fixed: table``, ``fixed: images``..."""
BEST_FIXED = "best fixed"
"""Per benchmark × scaffold, the fixed option above the median most often there (chosen in
hindsight on the pack it is tested on, which favours it): the command to beat."""
PAIRS = [("GRPO", "SFT"), ("GRPO", BEST_FIXED), ("SFT", BEST_FIXED), ("GRPO", "GRPO-sparse"),
         ("GRPO-from-base", "base")]  # fmt: skip
"""The paper's comparisons: GRPO vs the SFT start, the learnt policies vs the best command
that ignores the task, dense vs sparse, (GRPO from base vs base)."""


def is_fixed(role: str) -> bool:
    return role.startswith(FIXED_PREFIX)


def log_dirs(folder: Path) -> list[Path]:
    """A reproduce folder's eval log dirs: ``eval`` and, when they ran, ``eval-base`` and
    ``eval-fixed``."""
    return [folder / "eval"] + [
        folder / d for d in (BASE_LOGS, FIXED_LOGS) if (folder / d).is_dir()
    ]


def manifest_dir(log_dir: str | Path) -> Path | None:
    """The reproduce folder a log dir belongs to (it, or its parent, holds the manifest)."""
    for folder in (Path(log_dir), Path(log_dir).parent):
        if (folder / MANIFEST).is_file():
            return folder
    return None


def read_manifest(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / MANIFEST).read_text(encoding="utf-8")))


def with_roles(samples: pd.DataFrame, manifest: dict[str, Any]) -> pd.DataFrame:
    """The manifest's models only, with ``role``, ``solver`` and ``bench`` columns."""
    role_of = {model: role for role, model in manifest["roles"].items()}
    out = samples[samples["model"].isin(role_of)].copy()
    out["role"] = out["model"].map(role_of)
    out["solver"] = out["scaffold"].str.split("(").str[0]
    out["bench"] = [bench_label(b) for b in map(str, out["benchmark"])]
    return out


def choice_frame(folder: Path, manifest: dict[str, Any]) -> pd.DataFrame:
    """The learnt roles' first toolkit calls by modality on the held-out pack, under the
    trained scaffold (empty without the toolkit): whether a policy reads the task, beside how
    it scored. A manifest from before its ``toolkit`` key says it by its fixed-option roles."""
    toolkit = manifest.get("toolkit", any(map(is_fixed, manifest["roles"])))
    held_out = [name for name, b in manifest.get("benchmarks", {}).items() if b == "heldout"]
    if not toolkit or not held_out or not (folder / "eval").is_dir():
        return pd.DataFrame(columns=CHOICE_COLUMNS)
    roles = {model: role for role, model in manifest["roles"].items() if not is_fixed(role)}
    trained = str(manifest.get("trained_scaffold", "react"))
    learnt = [d for d in log_dirs(folder) if d.name != FIXED_LOGS]
    return choice_table(learnt, roles, trained, task=held_out[0].replace("-", "_"))


def bench_label(log_name: str) -> str:
    """The report's label of the benchmark whose logs carry ``log_name``."""
    entry = by_log_name(log_name)
    return entry.label if entry else log_name


def role_order(manifest: dict[str, Any]) -> list[str]:
    return list(manifest["roles"])


def _rate_cells(group: pd.DataFrame) -> dict[str, Any]:
    cells: dict[str, Any] = {"n": len(group)}
    for metric in METRICS:
        r = stats.rate(group[metric].astype(float), group["competition_id"])
        cells[metric], cells[f"{metric}_low"], cells[f"{metric}_high"] = r.value, r.low, r.high
    return cells


def cell_table(samples: pd.DataFrame, manifest: dict[str, Any]) -> pd.DataFrame:
    """One row per role × scaffold × benchmark: valid / medal / above-median with intervals."""
    columns = ["role", "solver", "bench", "n"]
    columns += [f"{m}{s}" for m in METRICS for s in ("", "_low", "_high")]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    rows = [{"role": r, "solver": s, "bench": b, **_rate_cells(g)}
            for (r, s, b), g in samples.groupby(["role", "solver", "bench"], sort=False)]  # fmt: skip
    table = pd.DataFrame(rows)[columns]
    order = {role: i for i, role in enumerate(role_order(manifest))}
    solvers = {
        s: i for i, s in enumerate(manifest.get("scaffolds") or dict.fromkeys(samples["solver"]))
    }
    trained = manifest.get("trained_scaffold")
    table["_k"] = [(b, order.get(r, 99), s != trained, solvers.get(s, 99))
                   for r, s, b in zip(table["role"], table["solver"], table["bench"], strict=True)]  # fmt: skip
    return table.sort_values("_k", kind="stable").drop(columns="_k").reset_index(drop=True)


def rate_text(row: pd.Series, metric: str) -> str:
    value, low, high = (row[f"{metric}{s}"] for s in ("", "_low", "_high"))
    if pd.isna(value):
        return "—"
    return f"{100 * value:.0f} [{100 * low:.0f}–{100 * high:.0f}]"


def with_best_fixed(samples: pd.DataFrame) -> pd.DataFrame:
    """``samples`` plus, per benchmark × scaffold with fixed options, the best one's rows again
    as role ``best fixed`` (``fixed: X``'s name kept in ``best_of``)."""
    if samples.empty:
        return samples
    fixed = samples[samples["role"].astype(str).str.startswith(FIXED_PREFIX)]
    best = []
    for _, part in fixed.groupby(["bench", "solver"], sort=False):
        rates = part.groupby("role", sort=True)["above_median"].mean()
        chosen = part[part["role"] == rates.idxmax()].copy()
        chosen["best_of"], chosen["role"] = chosen["role"], BEST_FIXED
        best.append(chosen)
    return pd.concat([samples, *best], ignore_index=True) if best else samples


def paired_table(samples: pd.DataFrame, manifest: dict[str, Any]) -> pd.DataFrame:
    """The paper's pairs on shared tasks, per benchmark × scaffold × metric."""
    columns = ["A", "B", "bench", "solver", "metric", "A − B", "p", "tasks", "verdict"]
    rows = []
    samples = with_best_fixed(samples)
    present = set(samples["role"]) if not samples.empty else set()
    for a, b in PAIRS:
        if not {a, b} <= present:
            continue
        for (bench, solver), part in samples.groupby(["bench", "solver"], sort=True):
            if not {a, b} <= set(part["role"]):  # e.g. the fixed options: held-out react only
                continue
            for metric, label in METRICS.items():
                series = {r: stats.per_competition(part[part["role"] == r], metric) for r in (a, b)}
                c = stats.compare(series[a], series[b])
                verdict = {"A better": f"{a} better", "B better": f"{b} better"}.get(
                    c.label, c.label
                )
                diff = "—" if math.isnan(c.diff) else f"{100 * c.diff:+.0f}"
                rows.append([a, b, bench, solver, label, diff,
                             "—" if c.pairs == 0 else f"{c.p_value:.3f}", c.pairs, verdict])  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def drop_table(samples: pd.DataFrame, manifest: dict[str, Any]) -> pd.DataFrame:
    """Valid rate under the trained scaffold vs the unseen ones, per role and benchmark, on
    the tasks every scaffold of that row ran (a scaffold with a ``limit`` runs fewer), whose
    number the ``tasks`` column gives: the trained rate there may differ from its cell's."""
    trained = manifest.get("trained_scaffold", "react")
    columns = ["role", "bench", "tasks", "trained", "unseen", "drop", "worst unseen"]
    rows = []
    for (role, bench), part in samples.groupby(["role", "bench"], sort=False):
        tasks = shared_tasks(part)
        part = part[part["competition_id"].isin(tasks)]
        by_solver = part.groupby("solver")["valid_submission"].mean() * 100
        if trained not in by_solver:
            continue
        unseen = by_solver.drop(trained)
        worst = f"{unseen.idxmin()} {unseen.min():.0f}" if len(unseen) else "—"
        mean_unseen = unseen.mean() if len(unseen) else math.nan
        rows.append([role, bench, len(tasks), by_solver[trained], mean_unseen,
                     by_solver[trained] - mean_unseen, worst])  # fmt: skip
    order = {role: i for i, role in enumerate(role_order(manifest))}
    table = pd.DataFrame(rows, columns=columns)
    return table.sort_values(["bench", "role"], key=lambda c: c.map(order) if c.name == "role" else c,
                             kind="stable").reset_index(drop=True)  # fmt: skip


def shared_tasks(part: pd.DataFrame) -> set[str]:
    """The tasks every solver in ``part`` ran."""
    ran = [set(tasks) for _, tasks in part.groupby("solver")["competition_id"]]
    return set.intersection(*ran) if ran else set()


def read_curves(folder: Path) -> pd.DataFrame:
    path = folder / CURVES
    if not path.is_file():
        return pd.DataFrame(columns=["run", "step", "metric", "value"])
    return pd.read_csv(path)


def curve_figure(curves: pd.DataFrame, title: str = "training curves") -> go.Figure:
    """One line per run × metric over optimizer steps (reward parts, valid and medal rate)."""
    fig = go.Figure()
    for (run, metric), part in curves.groupby(["run", "metric"], sort=True):
        part = part.sort_values("step")
        fig.add_trace(go.Scatter(x=part["step"], y=part["value"], mode="lines+markers",
                                 name=f"{run} · {metric}"))  # fmt: skip
    if curves.empty:
        fig.add_annotation(text="no training curves recorded", showarrow=False, x=0.5, y=0.5,
                           xref="paper", yref="paper")  # fmt: skip
    fig.update_layout(title=title, height=460, xaxis_title="optimizer step",
                      yaxis_title="mean over the step's episodes", legend={"font": {"size": 11}})  # fmt: skip
    return fig


def cells_figure(table: pd.DataFrame, metric: str = "valid_submission") -> go.Figure:
    """Grouped bars: each role's rate per benchmark · scaffold, with its Wilson interval."""
    fig = go.Figure()
    for role, part in table.groupby("role", sort=False):
        x = part["bench"] + " · " + part["solver"]
        y = 100 * part[metric]
        fig.add_trace(go.Bar(x=x, y=y, name=str(role), error_y={
            "type": "data", "symmetric": False, "array": 100 * part[f"{metric}_high"] - y,
            "arrayminus": y - 100 * part[f"{metric}_low"]}))  # fmt: skip
    fig.update_layout(barmode="group", height=460, yaxis={"range": [0, 105], "title": "%"},
                      title=f"{METRICS[metric]} % per benchmark · scaffold (95% Wilson)")  # fmt: skip
    return fig
