"""``sandmle reproduce``'s report: the terminal tables (80 columns without a terminal), the
training curves file, ``report.html`` (offline, Plotly inline) and the leaderboard's export.

The tables are the leaderboard's (``leaderboard.reproduce_view``), so the app's Reproduce tab
shows the same numbers.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sandmle.leaderboard import reproduce_view as view
from sandmle.leaderboard.choices import CHOICE_COLUMNS
from sandmle.leaderboard.export import export_html
from sandmle.leaderboard.logs import SCORER, load_logs
from sandmle.leaderboard.stats import MIN_DECIDABLE, too_few
from sandmle.specs.checkpoint import TRAINER_STATE, last_complete_checkpoint

LOADED_NOTE = (
    "Figures from a shared, loaded machine: timings are 'loaded'. Rates are % of sample-epochs "
    "[95% Wilson interval]; p: exact paired sign-flip test on shared tasks (McNemar's with one "
    f"epoch); below {MIN_DECIDABLE} shared tasks no outcome can be significant (no power)."
)


def trainer_history(run_dir: Path) -> list[dict[str, Any]]:
    """TRL's ``log_history`` from the run's newest ``trainer_state.json``."""
    last = last_complete_checkpoint(run_dir)
    if last is None:
        return []
    state = json.loads((last / TRAINER_STATE).read_text(encoding="utf-8"))
    return list(state.get("log_history", []))


def reward_rows(name: str, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reward, its spread and each reward component's mean, per logged step."""
    rows = []
    for entry in history:
        if "reward" not in entry or "step" not in entry:
            continue
        for key, value in entry.items():
            part = key.removeprefix("rewards/").removesuffix("/mean")
            if key in ("reward", "reward_std") or (
                key.startswith("rewards/") and key.endswith("/mean")
            ):
                rows.append({"run": name, "step": entry["step"], "metric": part, "value": value})
    return rows


def rollout_rows(name: str, run_dir: Path) -> list[dict[str, Any]]:
    """Valid and medal rate of each step's training episodes, from their Inspect logs: the
    sampler's draw only (``rank-*/``), not the refills of flat groups (``rank-*/refill-*/``),
    whose tasks were picked for their first round's lack of spread."""
    from inspect_ai.log import read_eval_log_sample_summaries

    rows = []
    for step_dir in sorted((run_dir / "rollouts").glob("step-*")):
        flags: dict[str, list[float]] = {"valid_submission": [], "any_medal": []}
        for log in step_dir.glob("rank-*/*.eval"):
            for summary in read_eval_log_sample_summaries(str(log)):
                score = (summary.scores or {}).get(SCORER)
                value = score.value if score is not None and isinstance(score.value, dict) else {}
                for key, got in flags.items():
                    got.append(float(value.get(key, 0.0) or 0.0))
        # step-000000 holds the episodes optimizer step 1 learns from (TRL logs them as step 1)
        step = int(step_dir.name.split("-")[-1]) + 1
        for key, got in flags.items():
            if got:
                label = "valid rate" if key == "valid_submission" else "medal rate"
                rows.append(
                    {"run": name, "step": step, "metric": label, "value": sum(got) / len(got)}
                )
    return rows


def signal_warnings(manifest: dict[str, Any]) -> list[str]:
    """One line per GRPO run where most steps had no reward spread in any group.

    Such a step has zero advantage everywhere, so no policy gradient: the checkpoint then differs
    from its start only by what the KL term or the optimizer's momentum did, and a "GRPO vs SFT"
    verdict says nothing about the reward.
    """
    lines = []
    for name, folder in manifest.get("runs", {}).items():
        flags = [e["frac_reward_zero_std"] for e in trainer_history(Path(folder))
                 if "frac_reward_zero_std" in e]  # fmt: skip
        dead = sum(1 for f in flags if f >= 1.0)
        if flags and dead * 2 > len(flags):
            lines.append(f"warning: {name}: {dead} of {len(flags)} steps had no reward spread in "
                         "any group (no learning signal); its checkpoint barely reflects the reward")  # fmt: skip
    return lines


def write_curves(out: Path, manifest: dict[str, Any]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for name, folder in manifest.get("runs", {}).items():
        rows += reward_rows(name, trainer_history(Path(folder)))
        rows += rollout_rows(name, Path(folder))
    curves = pd.DataFrame(rows, columns=["run", "step", "metric", "value"])
    curves.to_csv(out / view.CURVES, index=False)
    return curves


LEFT = ("role", "solver", "modality", "mix")


def _table(title: str, columns: list[str], caption: str = "") -> Table:
    out = Table(title=title, caption=caption or None, box=box.SIMPLE_HEAD, pad_edge=False,
                caption_justify="left", title_justify="left")  # fmt: skip
    for name in columns:
        out.add_column(name, no_wrap=True, justify="left" if name in LEFT else "right")
    return out


def cells_rich(table: pd.DataFrame) -> Table:
    out = _table("valid / medal / above median, % [95% interval]",
                 ["bench", "role", "solver", "valid", "medal", ">median", "n"])  # fmt: skip
    for _, row in table.iterrows():
        out.add_row(str(row["bench"]), str(row["role"]), str(row["solver"]),
                    *(view.rate_text(row, m) for m in view.METRICS), str(row["n"]))  # fmt: skip
    return out


def pairs_rich(pairs: pd.DataFrame, trained: str) -> Table:
    """The pairs under the trained scaffold (every scaffold's: report.html and the app)."""
    out = _table(
        f"paired tests under {trained} on shared tasks (A − B in points)",
        ["A vs B", "bench", "metric", "A − B", "p", "k", "verdict"],
        f"k: shared tasks; 'too few (k < {MIN_DECIDABLE})': no outcome could be significant (no "
        "power). Every scaffold's pairs: report.html, the app's Reproduce tab.",
    )
    for _, row in pairs[pairs["solver"] == trained].iterrows():
        verdict = str(row["verdict"]).replace(too_few(), f"too few (k < {MIN_DECIDABLE})")
        out.add_row(f"{row['A']} vs {row['B']}", str(row["bench"]), str(row["metric"]),
                    str(row["A − B"]), str(row["p"]), str(row["tasks"]), verdict)  # fmt: skip
    return out


def transfer_rich(pairs: pd.DataFrame, trained: str) -> Table:
    """GRPO vs SFT under the scaffolds training never ran: the paper's transfer claim."""
    out = _table(
        f"transfer: GRPO vs SFT under unseen scaffolds (trained in {trained})",
        ["solver", "bench", "metric", "GRPO − SFT", "p", "k", "verdict"],
    )
    rows = pairs[(pairs["A"] == "GRPO") & (pairs["B"] == "SFT") & (pairs["solver"] != trained)]
    for _, row in rows.iterrows():
        verdict = str(row["verdict"]).replace(too_few(), f"too few (k < {MIN_DECIDABLE})")
        out.add_row(str(row["solver"]), str(row["bench"]), str(row["metric"]),
                    str(row["A − B"]), str(row["p"]), str(row["tasks"]), verdict)  # fmt: skip
    return out


def choices_rich(choices: pd.DataFrame, trained: str) -> Table:
    out = _table(
        f"first toolkit call by task modality: held-out pack, {trained} (task × epoch)",
        CHOICE_COLUMNS,
        "call ok: calls that are a toolkit option; mix: calls per option (broken: malformed or "
        "another command). tv, p: does the mix "
        "depend on the modality (permutation test over tasks)? A policy that reads the task "
        "calls by modality; one that ignores it draws one mix everywhere.",
    )
    for _, row in choices.iterrows():
        # a pack names its modalities: shown as text, never as rich markup
        out.add_row(escape(str(row["role"])), escape(str(row["modality"])), str(row["calls"]),
                    f"{row['call ok %']:.0f}", _stacked(str(row["mix"])),
                    *("" if pd.isna(row[k]) else str(row[k]) for k in ("tv", "p")))  # fmt: skip
    return out


def _stacked(mix: str) -> str:
    """``table 10 · broken 9`` as one option a line: the table fits 80 columns, and no count is
    split from its option (rich wraps at any space, non-breaking ones too)."""
    return "\n".join(mix.split(" · "))


def drop_rich(drops: pd.DataFrame) -> Table:
    out = _table("cross-scaffold drop: valid % trained scaffold vs unseen (mean)",
                 ["role", "bench", "tasks", "trained", "unseen", "drop", "worst unseen"])  # fmt: skip
    for _, row in drops.iterrows():
        out.add_row(str(row["role"]), str(row["bench"]), str(row["tasks"]), *(_num(row[k]) for k in
                    ("trained", "unseen", "drop")), str(row["worst unseen"]))  # fmt: skip
    return out


def _num(value: float) -> str:
    return "—" if pd.isna(value) else f"{value:.0f}"


def _html_table(frame: pd.DataFrame) -> str:
    return frame.to_html(
        index=False, border=0, classes="t", na_rep="—", float_format="{:.1f}".format
    )


def report_html(manifest: dict[str, Any], cells: pd.DataFrame, pairs: pd.DataFrame,
                drops: pd.DataFrame, curves: pd.DataFrame, warnings: Sequence[str] = (),
                choices: pd.DataFrame | None = None) -> str:  # fmt: skip
    shown = cells[["bench", "role", "solver", "n"]].copy()
    for metric, label in view.METRICS.items():
        shown[label] = [view.rate_text(row, metric) for _, row in cells.iterrows()]
    figures = [view.cells_figure(cells, m) for m in ("valid_submission", "above_median")]
    figures.append(view.curve_figure(curves, "training curves (loaded machine)"))
    plots = "".join(f.to_html(full_html=False, include_plotlyjs=(i == 0))
                    for i, f in enumerate(figures))  # fmt: skip
    chosen = ""
    if choices is not None and not choices.empty:
        chosen = f"<h2>First toolkit call by modality</h2>{_html_table(choices)}"
    title = f"sandmle reproduce: {html.escape(str(manifest.get('profile')))}"
    alerts = "".join(f"<p style='color:#b00'><b>{html.escape(w)}</b></p>" for w in warnings)
    roles = "".join(f"<li><b>{html.escape(r)}</b>: {html.escape(m)}</li>"
                    for r, m in manifest["roles"].items())  # fmt: skip
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>"
        "body{font-family:sans-serif;max-width:1400px;margin:auto}table.t{border-collapse:collapse}"
        "table.t td,table.t th{padding:2px 8px;border-bottom:1px solid #ddd}</style></head><body>"
        f"<h1>{title}</h1><p>{html.escape(LOADED_NOTE)}</p>{alerts}<ul>{roles}</ul>"
        f"<p>trained scaffold: {html.escape(str(manifest.get('trained_scaffold')))}</p>"
        f"<h2>Cells</h2>{_html_table(shown)}<h2>Paired tests</h2>{_html_table(pairs)}"
        f"<h2>Cross-scaffold drop</h2>{_html_table(drops)}{chosen}"
        f"<h2>Figures</h2>{plots}</body></html>"
    )


def write_reproduce_report(out: Path, console: Console | None = None) -> Path:
    """Print the tables, write ``curves.csv``, ``report.html`` and ``leaderboard.html``."""
    console = console or Console()
    manifest = view.read_manifest(out)
    samples = view.with_roles(load_logs(view.log_dirs(out)).samples, manifest)
    cells = view.cell_table(samples, manifest)
    pairs = view.paired_table(samples, manifest)
    drops = view.drop_table(samples, manifest)
    curves = write_curves(out, manifest)
    trained = str(manifest.get("trained_scaffold", "react"))
    choices = view.choice_frame(out, manifest)
    tables = [cells_rich(cells), pairs_rich(pairs, trained), transfer_rich(pairs, trained),
              drop_rich(drops)]  # fmt: skip
    tables += [choices_rich(choices, trained)] if not choices.empty else []
    for table in tables:
        console.print(table)
    console.print(LOADED_NOTE, highlight=False)
    warnings = signal_warnings(manifest)
    for line in warnings:
        console.print(line, style="bold red", highlight=False)
    path = out / "report.html"
    path.write_text(
        report_html(manifest, cells, pairs, drops, curves, warnings, choices), encoding="utf-8"
    )
    if not samples.empty:
        export_html(view.log_dirs(out), out / "leaderboard.html")
    console.print(f"report: {path}", highlight=False)
    return path
