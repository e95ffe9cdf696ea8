"""The ``sandmle`` command.

A ``SandmleError`` prints as one line and exits 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from typer import _click  # typer's own click: what TyperGroup is declared with
from typer.core import TyperCommand, TyperGroup

from sandmle import __version__
from sandmle.errors import SandmleError, SandmleWarning

LAZY_GROUPS = {
    "synth": ("sandmle.cli:synth_group", "Generate and check synthetic sandbox packs."),
    "leaderboard": (
        "sandmle.leaderboard.cli:leaderboard_app",
        "Browse Inspect logs as a leaderboard (Streamlit), or export it as one HTML file.",
    ),
    "train": (
        "sandmle.training.cli:train_app",
        "GRPO on synthetic sandboxes, and the SFT baseline.",
    ),
    "env": (
        "sandmle.env.cli:env_app",
        "Serve sandmle's tasks as step-wise RL environments (OpenEnv).",
    ),
}
"""Sub-apps imported only when their command runs: ``sandmle --help`` costs what typer costs."""


class LazyPlaceholder(TyperCommand):
    """Stands in a help listing for a sub-app that is not imported yet."""


class LazyGroup(TyperGroup):
    """The root group: lists ``LAZY_GROUPS`` from their one-line help, imports one when run."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, (_, short) in LAZY_GROUPS.items():
            self.commands.setdefault(name, LazyPlaceholder(name, help=short))

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if isinstance(command, LazyPlaceholder) and name is not None:
            command = self._load(name)
        return name, command, rest

    def _load(self, name: str) -> _click.Command:
        module, _, attr = LAZY_GROUPS[name][0].partition(":")
        loaded = getattr(importlib.import_module(module), attr)
        sub_app = loaded() if callable(loaded) and not isinstance(loaded, typer.Typer) else loaded
        command = typer.main.get_command(sub_app)
        command.name = name
        command.help = command.help or LAZY_GROUPS[name][1]
        self.commands[name] = command
        return command


app = typer.Typer(
    cls=LazyGroup,
    name="sandmle",
    help="Train and judge MLE agents on micro-scale synthetic sandboxes, graded as MLE-bench grades.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sandmle {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """sandmle: micro-scale sandboxes to train and judge machine-learning-engineering agents."""


INSPECT_INPUT_ERRORS = ("Unknown solver", "Model API ")
"""Starts of Inspect's ``ValueError`` messages that mean a mistyped name, not a bug."""
DIRTY_LOG_DIR = "not associated with a task"
TRUST_HELP = (
    "Let graders run code a pack brings (e.g. a release's evaluator.py) on this machine; "
    "only for packs you trust (sets SANDMLE_TRUST_PACK_CODE=1)."
)
TrustPackCode = Annotated[bool, typer.Option("--trust-pack-code", help=TRUST_HELP)]


def trust_pack_code_if(trusted: bool) -> None:
    """Apply a ``--trust-pack-code`` flag: to this process and those it starts."""
    if trusted:
        from sandmle.harness.confinement import trust_pack_code

        trust_pack_code()


@contextmanager
def inspect_input_errors(log_dir: Path | None = None) -> Iterator[None]:
    """Inspect's errors about bad input (unknown solver or model, a used log dir) as one line.

    Inspect raises these before any sample runs, so nothing is lost by stopping.
    """
    try:
        yield
    except ValueError as exc:
        first = next(iter(str(exc).splitlines()), "")
        if first.startswith(INSPECT_INPUT_ERRORS):
            raise SandmleError(first.rstrip(".")) from None
        raise
    except Exception as exc:
        # Inspect's PrerequisiteError (a user-facing error) lives in a private module: by name
        if type(exc).__name__ != "PrerequisiteError":
            raise
        message = " ".join(str(getattr(exc, "message", exc)).split())
        if DIRTY_LOG_DIR in message:
            message = (
                f"log dir {log_dir} holds logs of other evals; choose a new --log-dir "
                "(the same command with the same arguments resumes)"
            )
        raise SandmleError(message) from None


def _print_json(data: dict) -> None:
    typer.echo(json.dumps(data, indent=2))


@app.command()
def grade(
    submission: Annotated[Path, typer.Argument(help="Path to submission.csv.")],
    competition: Annotated[
        Path,
        typer.Option("--competition", "-c", help="Competition folder (holds competition.yaml)."),
    ],
    trust_pack_code: TrustPackCode = False,
) -> None:
    """Grade a submission and print MLE-bench's report as JSON (exit 0, valid or not)."""
    trust_pack_code_if(trust_pack_code)
    from sandmle.harness.competition import load_competition
    from sandmle.harness.grading.bounded import grade_csv_bounded
    from sandmle.harness.grading.report import report_human_rank

    comp = load_competition(competition)
    # as the scorer grades: in a bounded child that knows its competition (a release's
    # evaluator reads the public folder), so a hostile file cannot hang or exhaust the shell
    report = grade_csv_bounded(submission, comp)
    data = report.to_dict()
    if math.isnan(report.gold_threshold):  # no leaderboard: say so instead of printing NaN
        for key in ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold"):
            data[key] = None
        source = comp.config.tags.get("thresholds_source") or "no leaderboard"
        data["thresholds"] = f"unknown ({source}): no medal or median can be awarded"
    rank = report_human_rank(report, comp)
    if rank is not None:
        data["human_rank"] = rank
    _print_json(data)


@app.command()
def thresholds(
    leaderboard: Annotated[Path, typer.Argument(help="Leaderboard CSV with a 'score' column.")],
) -> None:
    """Medal and median thresholds of a leaderboard by MLE-bench's rule, as JSON."""
    from sandmle.harness.grading.medals import read_leaderboard, thresholds_from_leaderboard

    _print_json(thresholds_from_leaderboard(read_leaderboard(leaderboard)).to_dict())


@app.command("eval")
def eval_command(
    benchmark: Annotated[str, typer.Argument(help="synthetic, mle_bench_lite, mle_dojo, ...")],
    model: Annotated[str, typer.Option("--model", "-m", help="Any Inspect model.")],
    solver: Annotated[
        str | None, typer.Option("--solver", help="A scaffold, e.g. react, aide, aira_mcts.")
    ] = None,
    task_arg: Annotated[list[str], typer.Option("-T", help="Task argument key=value.")] = [],  # noqa: B006
    solver_arg: Annotated[list[str], typer.Option("-S", help="Solver argument key=value.")] = [],  # noqa: B006
    model_arg: Annotated[list[str], typer.Option("-M", help="Model argument key=value.")] = [],  # noqa: B006
    log_dir: Annotated[Path, typer.Option(help="Log dir; run again to resume.")] = Path("logs"),
    limit: Annotated[int | None, typer.Option(help="Evaluate only the first N samples.")] = None,
    epochs: Annotated[int | None, typer.Option(help="Runs per sample.")] = None,
    max_samples: Annotated[int | None, typer.Option(help="Samples run at once.")] = None,
    trust_pack_code: TrustPackCode = False,
) -> None:
    """Evaluate a model under a scaffold on a benchmark (Inspect's eval_set: resumable)."""
    trust_pack_code_if(trust_pack_code)
    from sandmle.study.evaluate import parse_kv, run_eval

    if not any(arg.startswith("sandbox=") and arg != "sandbox=bwrap" for arg in task_arg):
        _agent_runtime_ready()
    with inspect_input_errors(log_dir):
        ok = run_eval(
            benchmark,
            model=model,
            solver=solver,
            task_args=parse_kv(task_arg, "-T"),
            solver_args=parse_kv(solver_arg, "-S"),
            model_args=parse_kv(model_arg, "-M"),
            log_dir=log_dir,
            limit=limit,
            epochs=epochs,
            max_samples=max_samples,
        )
    typer.echo(f"logs: {log_dir}")
    raise typer.Exit(0 if ok else 1)


def _agent_runtime_ready() -> None:
    """Build the agent runtime on first use, so bwrap samples never run on sandmle's Python."""
    from sandmle.harness.sandbox.runtime import prepare_agent_python

    prepare_agent_python()


def synth_group() -> typer.Typer:
    """``sandmle synth``, with the MLE-bench-lite replica writer mounted as ``replicas``."""
    from sandmle.benchmarks.mle_bench.replicas.cli import replicas_command
    from sandmle.benchmarks.synthetic.cli import synth_app

    if not any(c.name == "replicas" for c in synth_app.registered_commands):
        synth_app.command("replicas")(replicas_command)
    return synth_app


@app.command()
def demo(
    log_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where the demo's logs go (default: logs/demo-<generator version>; a rerun "
            "resumes there)."
        ),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(help="The tree scaffolds' default search budgets (the demo: 2 steps)."),
    ] = False,
    task: Annotated[
        list[str],
        typer.Option("--task", help="Built-in pack task ids to run (repeatable; default: all 12)."),
    ] = [],  # noqa: B006
    warm_python: Annotated[
        bool, typer.Option(help="Warm Python in each sample's sandbox (-T warm_python).")
    ] = True,
    tasks: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=12,
            help="Only the first N built-in tasks (default: all 12; under 6, no two "
            "policies can be ranked apart).",
        ),
    ] = None,
    scaffolds: Annotated[
        str,
        typer.Option(help="Comma-separated scaffolds to run, in this order."),
    ] = "aide,react,aira_greedy,aira_mcts,aira_evo",
    time_limit: Annotated[
        int,
        typer.Option(
            min=0,
            help="Seconds: a scaffold starts only if expected to end in time; the rest are "
            "named as missing and a rerun adds them (0: no limit).",
        ),
    ] = 420,
) -> None:
    """Evaluate the reference policies under every scaffold on the built-in pack, offline."""
    from sandmle.study.demo import run_demo

    if task and tasks:
        raise typer.BadParameter("give --task IDs or --tasks N, not both", param_hint="--tasks")
    chosen = demo_scaffolds(scaffolds)
    _agent_runtime_ready()
    log_dir = log_dir or default_demo_log_dir(full)
    with inspect_input_errors(log_dir):
        ok = run_demo(
            log_dir,
            full,
            task or None,
            warm_python=warm_python,
            scaffolds=chosen,
            task_count=tasks,
            time_limit_s=time_limit or None,
        )
    raise typer.Exit(0 if ok else 1)


def demo_scaffolds(names: str) -> list[str]:
    """``--scaffolds``: known names, each once, in the order given."""
    from sandmle.study.demo import SCAFFOLDS

    chosen = [name.strip() for name in names.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SCAFFOLDS))
    if unknown or not chosen or len(set(chosen)) != len(chosen):
        raise typer.BadParameter(
            f"want distinct names among {', '.join(SCAFFOLDS)}; got {names!r}",
            param_hint="--scaffolds",
        )
    return chosen


def default_demo_log_dir(full: bool) -> Path:
    """One log dir per pack version and size: a rerun resumes, an upgraded pack starts afresh."""
    from sandmle.benchmarks.synthetic.blueprint import GENERATOR_VERSION

    return Path("logs") / f"demo-{GENERATOR_VERSION}{'-full' if full else ''}"


@app.command()
def study(
    config: Annotated[
        Path, typer.Argument(help="Study file, e.g. sandmle/configs/study/cpu.yaml.")
    ],
) -> None:
    """Run a models × scaffolds × benchmarks study (resumable), then write its report."""
    from sandmle.specs.study import load_study
    from sandmle.study.report import write_report
    from sandmle.study.runner import run_study

    spec = load_study(config)
    if spec.sandbox == "bwrap":
        _agent_runtime_ready()
    with inspect_input_errors(spec.resolved_log_dir()):
        ok = run_study(spec)
    html = write_report(spec.resolved_log_dir())
    typer.echo(f"logs: {spec.resolved_log_dir()}\nreport: {html}")
    raise typer.Exit(0 if ok else 1)


@app.command()
def reproduce(
    profile: Annotated[
        str,
        typer.Option(help="Profile: toy, cpu-micro, cpu-smollm2, gpu-1, paper, or a YAML file."),
    ],
    out: Annotated[Path, typer.Option(help="Output folder; rerunning skips finished stages.")],
) -> None:
    """The paper's protocol end to end: packs, Seed-SFT, GRPO dense/sparse, evals, report."""
    from sandmle.study.reproduce import run_reproduce

    _agent_runtime_ready()
    with inspect_input_errors(out / "eval"):
        ok = run_reproduce(profile, out)
    raise typer.Exit(0 if ok else 1)


sandbox_app = typer.Typer(help="Agent sandboxes.", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("build-image")
def build_image(
    tag: Annotated[str, typer.Option(help="Image tag.")] = "sandmle-agent:latest",
    extra_package: Annotated[
        list[str], typer.Option("--extra-package", help="Extra pip package for the image.")
    ] = [],  # noqa: B006
    base_image: Annotated[
        str | None, typer.Option(help="Local base image with python3 and pip (no pull).")
    ] = None,
    wheels: Annotated[
        Path | None, typer.Option(help="Install from these wheels only, no network in the build.")
    ] = None,
) -> None:
    """Build the Docker agent image (needs a Docker engine and `pip install 'sandmle[docker]'`)."""
    from sandmle.harness.sandbox import build_image as build

    typer.echo(build(tag, extra_package, base_image=base_image, wheels=wheels))


@sandbox_app.command("runtime")
def sandbox_runtime(
    extras: Annotated[
        list[str], typer.Option("--extras", help="Extra distribution (lightgbm, xgboost, torch).")
    ] = [],  # noqa: B006
    rebuild: Annotated[bool, typer.Option(help="Build again even if cached.")] = False,
) -> None:
    """Build (once, cached) or show the agent runtime: a Python with the ML stack, no sandmle."""
    from sandmle.harness.sandbox.runtime import ensure_runtime

    runtime = ensure_runtime(extras, rebuild=rebuild)
    typer.echo(runtime.python)


EXTRAS = dict.fromkeys(
    ("torch", "trl", "transformers", "accelerate", "datasets", "peft", "gguf"), "train"
) | {"docker": "docker", "openai": "openai"}
"""Modules that only an extra installs, and the extra."""


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The one-line error for a module an extra would have installed (None: not an extra's)."""
    module = (exc.name or "").partition(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    return f"{module} is not installed: this command needs pip install 'sandmle[{extra}]'"


def _note(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
    *,
    default: Callable[..., None] = warnings.showwarning,
) -> None:
    """A ``SandmleWarning`` as one ``note:`` line; any other warning as Python shows it."""
    if issubclass(category, SandmleWarning):
        print(f"note: {message}", file=file or sys.stderr)
    else:
        default(message, category, filename, lineno, file, line)


def main() -> None:
    warnings.showwarning = _note
    try:
        app()
    except SandmleError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except ModuleNotFoundError as exc:
        message = missing_extra(exc)
        if message is None:
            raise
        typer.echo(f"error: {message}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
