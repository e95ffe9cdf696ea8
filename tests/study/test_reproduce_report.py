"""The reproduce report on small real logs (offline evals of scripted policies) and frames."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.solver import Generate, Solver, TaskState, solver
from rich.console import Console

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.solvers import copy_sample_submission
from sandmle.leaderboard import reproduce_view as view
from sandmle.leaderboard.logs import load_logs
from sandmle.leaderboard.stats import too_few
from sandmle.study.reproduce_report import signal_warnings, write_reproduce_report
from tests.answers import hand_in_answers
from tests.conftest import copy_pack
from tests.leaderboard.conftest import open_app

ROLES = {"base": "mockllm/base", "SFT": "mockllm/sft", "GRPO": "mockllm/grpo",
         "GRPO-sparse": "mockllm/grpo-sparse"}  # fmt: skip


@solver
def react() -> Solver:
    """Stands in for the trained scaffold: GRPO hands in the answers, the others the sample."""
    floor = copy_sample_submission()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if str(state.model) != ROLES["GRPO"]:
            return await floor(state, generate)
        await hand_in_answers(state)
        state.completed = True
        return state

    return solve


@solver
def aide() -> Solver:
    """Stands in for an unseen scaffold: nobody hands anything in."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.completed = True
        return state

    return solve


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reproduce")
    pack = copy_pack(root / "pack")
    for model in ROLES.values():
        for scaffold in (react(), aide()):
            [log] = inspect_eval(synthetic(pack=str(pack)), model=model, solver=scaffold,
                                 log_dir=str(root / "eval"), display="none")  # fmt: skip
            assert log.status == "success", log.error
    run = root / "runs" / "grpo-dense" / "checkpoint-2"
    run.mkdir(parents=True)
    history = [{"step": s, "reward": 0.1 * s, "reward_std": 0.2, "rewards/valid_reward/mean": 0.5}
               for s in (1, 2)]  # fmt: skip
    (run / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    manifest = {"profile": "fixture", "roles": ROLES, "trained_scaffold": "react",
                "benchmarks": {"synthetic": "heldout"},
                "runs": {"grpo-dense": str(run.parent)}}  # fmt: skip
    (root / view.MANIFEST).write_text(json.dumps(manifest))
    return root


def test_report_holds_every_cell_and_says_when_it_cannot_decide(out: Path) -> None:
    buffer = io.StringIO()
    write_reproduce_report(out, Console(file=buffer, width=80))
    text = buffer.getvalue()
    assert max(map(len, text.splitlines())) <= 80
    manifest = view.read_manifest(out)
    samples = view.with_roles(load_logs([out / "eval"]).samples, manifest)
    cells = view.cell_table(samples, manifest)
    assert len(cells) == 4 * 2  # every role × scaffold on the one benchmark
    grpo = cells[(cells["role"] == "GRPO") & (cells["solver"] == "react")].iloc[0]
    assert grpo["valid_submission"] == 1.0 and grpo["any_medal"] == 1.0
    sft = cells[(cells["role"] == "SFT") & (cells["solver"] == "react")].iloc[0]
    assert sft["valid_submission"] == 1.0 and sft["any_medal"] == 0.0
    pairs = view.paired_table(samples, manifest)
    assert set(pairs["verdict"]) == {too_few()}  # 2 shared tasks: no outcome is significant
    assert "too few" in text and "no power" in text
    # the transfer table: GRPO vs SFT under the unseen scaffold, each metric with its test
    transfer = text[text.index("transfer: GRPO vs SFT under unseen") :]
    transfer = transfer[: transfer.index("cross-scaffold drop")]
    rows = [line for line in transfer.splitlines() if line.lstrip("│ ").startswith("aide")]
    assert len(rows) == 3 and all("too few (k < 6)" in row for row in rows), transfer
    drops = view.drop_table(samples, manifest)
    assert set(drops["drop"]) == {100.0}  # valid under react, nothing under the unseen one
    html = (out / "report.html").read_text()
    assert "plotly" in html and too_few() in html and (out / "leaderboard.html").is_file()
    curves = pd.read_csv(out / view.CURVES)
    assert set(curves["metric"]) == {"reward", "reward_std", "valid_reward"}


def test_a_base_model_logged_apart_keeps_its_cells(out: Path, tmp_path: Path) -> None:
    """``eval.base_cells: trained``: the base model's only logs (the trained scaffold) are in
    ``eval-base``; the report reads them with ``eval``'s and leaves no role out."""
    from inspect_ai.log import read_eval_log

    shutil.copytree(out, tmp_path / "run")
    run = tmp_path / "run"
    (run / view.BASE_LOGS).mkdir()
    for log in (run / "eval").glob("*.eval"):
        header = read_eval_log(str(log), header_only=True)
        if header.eval.model == ROLES["base"]:
            solver = header.plan.steps[-1].solver if header.plan.steps else ""
            if "react" in solver:
                log.rename(run / view.BASE_LOGS / log.name)
            else:
                log.unlink()
    write_reproduce_report(run, Console(file=io.StringIO(), width=80))
    manifest = view.read_manifest(run)
    samples = view.with_roles(load_logs(view.log_dirs(run)).samples, manifest)
    cells = view.cell_table(samples, manifest)
    base = cells[cells["role"] == "base"]
    assert list(base["solver"]) == ["react"] and len(cells) == 4 * 2 - 1
    assert "base" in set(view.drop_table(samples, manifest)["role"])


def test_the_drop_compares_scaffolds_on_the_tasks_both_ran() -> None:
    """A transfer scaffold with ``limit: 1`` ran task ``a`` only: the trained scaffold's valid
    rate there (100), not over both tasks (50), is what it drops from."""
    rows = [("react", "a", True), ("react", "b", False), ("aide", "a", True)]
    samples = pd.DataFrame([{"role": "SFT", "bench": "heldout", "solver": solver,
                             "competition_id": task, "valid_submission": valid}
                            for solver, task, valid in rows])  # fmt: skip
    manifest = {"trained_scaffold": "react", "roles": {"SFT": "hf/sft"}}
    (drop,) = view.drop_table(samples, manifest).to_dict("records")
    assert (drop["trained"], drop["unseen"], drop["drop"]) == (100.0, 100.0, 0.0)
    assert drop["tasks"] == 1  # said, since react's own cell (50) differs


def test_a_run_without_learning_signal_is_named(out: Path, tmp_path: Path) -> None:
    """Second cpu-micro run (2026-12-03): 45 of 48 dense steps had every group's reward equal,
    grad_norm 0, yet the policy kept drifting on the optimizer's momentum to 0/40 valid."""
    manifest = view.read_manifest(out)
    dead = tmp_path / "grpo-dense" / "checkpoint-4"
    dead.mkdir(parents=True)
    history = [{"step": s, "reward": 0.0, "frac_reward_zero_std": 1.0 if s > 1 else 0.0}
               for s in (1, 2, 3, 4)]  # fmt: skip
    (dead / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    assert signal_warnings(manifest) == []  # the fixture's run has a spread at every step
    manifest["runs"] = {"grpo-sparse": str(dead.parent)}
    [line] = signal_warnings(manifest)
    assert line.startswith("warning: grpo-sparse: 3 of 4 steps had no reward spread")
    history[1]["frac_reward_zero_std"] = 0.5  # one group of two varied: half the steps dead
    (dead / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    assert signal_warnings(manifest) == []


def _frame(wins: int, ties: int) -> pd.DataFrame:
    """GRPO beats SFT on ``wins`` tasks and ties on ``ties`` (react, one benchmark)."""
    rows = []
    for i in range(wins + ties):
        for role, valid in (("GRPO", 1.0), ("SFT", 0.0 if i < wins else 1.0)):
            rows.append({"role": role, "solver": "react", "bench": "held-out",
                         "competition_id": f"t{i}", "valid_submission": valid,
                         "any_medal": 0.0, "above_median": valid})  # fmt: skip
    return pd.DataFrame(rows)


def test_paired_test_is_the_leaderboards_sign_flip() -> None:
    manifest = {"roles": {"SFT": "s", "GRPO": "g"}}
    pairs = view.paired_table(_frame(wins=8, ties=4), manifest)
    valid = pairs[pairs["metric"] == "valid"].iloc[0]
    # McNemar's exact on 8 discordant pairs all one way: 2 / 2**8 (stats.mcnemar_exact_p)
    assert valid["p"] == f"{2 / 2**8:.3f}" and valid["verdict"] == "GRPO better"
    assert valid["A − B"] == "+67" and valid["tasks"] == 12
    medal = pairs[pairs["metric"] == "medal"].iloc[0]
    assert medal["verdict"] == "≈ tie" and medal["p"] == "1.000"
    few = view.paired_table(_frame(wins=5, ties=0), manifest)
    assert set(few["verdict"]) == {too_few()}


def test_app_reproduce_tab_shows_the_report(
    out: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SANDMLE_LEADERBOARD_CACHE", str(tmp_path / "cache.pkl"))
    app = open_app(monkeypatch, out / "eval", view="Reproduce")
    frames = [d.value for d in app.dataframe]
    cells = next(f for f in frames if "role" in f.columns and "solver" in f.columns)
    assert len(cells) == 8 and set(cells["role"]) == set(ROLES)
    pairs = next(f for f in frames if "verdict" in f.columns)
    assert set(pairs["verdict"]) == {too_few()}
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in app.get("plotly_chart")]
    assert "training curves" in titles and any("valid %" in t for t in titles)


def test_grpo_is_paired_with_the_best_fixed_option_of_each_cell() -> None:
    """The fixed toolkit options run once per task; the one above the median most often on a
    benchmark × scaffold is the command GRPO must beat there (here `text`: 6 of 12)."""
    rows = []
    for i in range(12):
        base = {"solver": "react", "bench": "held-out", "competition_id": f"t{i}",
                "valid_submission": 1.0, "any_medal": 0.0}  # fmt: skip
        for role, above in (("GRPO", i < 11), ("SFT", i < 6), ("fixed: table", i < 4),
                            ("fixed: text", 6 <= i), ("fixed: audio", False)):  # fmt: skip
            rows.append({**base, "role": role, "above_median": float(above)})
    samples = pd.DataFrame(rows)
    best = view.with_best_fixed(samples)
    chosen = best[best["role"] == view.BEST_FIXED]
    assert set(chosen["best_of"]) == {"fixed: text"} and len(chosen) == 12
    pairs = view.paired_table(samples, {"roles": {}})
    above = pairs[(pairs["metric"] == ">median") & (pairs["B"] == view.BEST_FIXED)]
    grpo = above[above["A"] == "GRPO"].iloc[0]
    # GRPO wins on t0-t5 and loses on t11: 7 discordant, 6 one way (McNemar's exact)
    assert grpo["A − B"] == "+42" and grpo["tasks"] == 12
    sft = above[above["A"] == "SFT"].iloc[0]
    assert sft["A − B"] == "+0" and sft["verdict"] == "≈ tie"
    # a cell without the fixed options (another scaffold) has no such row, not an empty one
    aide = samples[samples["role"].isin(["GRPO", "SFT"])].assign(solver="aide")
    both = view.paired_table(pd.concat([samples, aide]), {"roles": {}})
    assert set(both[both["B"] == view.BEST_FIXED]["solver"]) == {"react"}
    assert set(both[both["B"] == "SFT"]["solver"]) == {"react", "aide"}
    # no fixed options, no such row
    plain = view.paired_table(samples[~samples["role"].str.startswith("fixed")], {"roles": {}})
    assert view.BEST_FIXED not in set(plain["B"])
