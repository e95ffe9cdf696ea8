"""``sandmle synth``: generate packs, re-run the sanity gate, import release tasks.

Mounted by ``sandmle/cli.py`` as ``app.add_typer(synth_app, name="synth")``.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from sandmle.errors import SandmleError

if TYPE_CHECKING:
    from sandmle.benchmarks.synthetic.sanity import Failure

# The generator (numpy, pandas, scikit-learn) is imported inside each command, so that
# `sandmle synth --help` starts at once.
DEFAULT_IMPORT_TIMEOUT_S = 120
"""Seconds one release evaluator may run (equals ``release_evaluator.DEFAULT_TIMEOUT_S``)."""


class ImportFormat(StrEnum):
    """Task layouts ``synth import`` reads."""

    sandmle_release = "sandmle-release"


synth_app = typer.Typer(
    help="Generate micro-scale synthetic MLE tasks (SandMLE).", no_args_is_help=True
)
console = Console()


def _split(values: list[str] | None) -> list[str] | None:
    """Accept both repeated options and comma-separated lists."""
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


@synth_app.command()
def generate(
    out: Annotated[Path, typer.Option("--out", help="Empty folder to write the pack to.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Number of tasks.")] = 12,
    seed: Annotated[int, typer.Option("--seed", help="Pack seed.")] = 0,
    modalities: Annotated[
        list[str] | None, typer.Option("--modalities", help="tabular, text, image, time-series.")
    ] = None,
    seeds: Annotated[
        list[str] | None, typer.Option("--seeds", help="Seed task ids to draw from.")
    ] = None,
    backend: Annotated[
        str, typer.Option("--backend", help="Generator backend: procedural or llm.")
    ] = "procedural",
    model: Annotated[
        str | None, typer.Option("--model", help="Inspect model for --backend llm.")
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, help="Cap on each model answer (--backend llm)."),
    ] = None,
    name: Annotated[str, typer.Option("--name", help="Pack name.")] = "synthetic",
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Processes.")] = None,
    secret_file: Annotated[
        Path | None,
        typer.Option(
            "--secret-file",
            help="File holding the pack secret (same secret + seed = same bytes). "
            "Default: a fresh random secret, saved to <out>/generation/secret.txt.",
        ),
    ] = None,
    seed_description: Annotated[
        Path | None,
        typer.Option(
            "--seed-description",
            help="A seed competition's own description.md, or a folder holding it with "
            "sample_submission.csv and the data CSVs: with --backend llm, the model reads the "
            "seed's structure from it (instead of the seed table).",
        ),
    ] = None,
) -> None:
    """Generate a pack of N tasks that all pass the sanity gate."""
    from sandmle.benchmarks.synthetic.backends import backend_names
    from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
    from sandmle.benchmarks.synthetic.secret import read_secret

    if backend not in backend_names():
        raise SandmleError(f"unknown backend {backend!r} (known: {', '.join(backend_names())})")
    if (backend == "llm") != (model is not None):
        raise SandmleError("--model goes with --backend llm, and --backend llm needs --model")
    if max_tokens is not None and backend != "llm":
        raise SandmleError("--max-tokens caps the llm backend's answers: use it with --backend llm")
    if backend == "llm" and workers is None:
        workers = 1  # one conversation at a time keeps provider rate limits simple
    spec = PackSpec(
        name=name,
        n=n,
        seed=seed,
        modalities=_split(modalities),
        seed_ids=_split(seeds),
        backend=backend,
        model=model,
        secret=read_secret(secret_file) if secret_file else None,
    )
    if seed_description is not None:
        from sandmle.benchmarks.synthetic.llm.from_seed import generate_from_seed

        dna, outcomes = generate_from_seed(spec, seed_description, out, max_tokens=max_tokens)
        console.print(f"seed structure: {dna.task_type} {dna.modality} task, metric {dna.metric}")
    else:
        outcomes = generate_pack(spec, out, workers=workers, max_tokens=max_tokens)
    accepted = [o for o in outcomes if o.task_id]
    rejected = sum(len(o.rejections) for o in outcomes)
    console.print(
        f"wrote {len(accepted)} task(s) to {out} ({rejected} attempt(s) rejected by the sanity gate)"
    )
    failed = [o for o in outcomes if not o.task_id]
    for outcome in failed:  # pack.yaml lists accepted tasks only: say here why slots failed
        last = outcome.rejections[-1].failures if outcome.rejections else []
        reasons = "; ".join(f"{f.rule}: {f.reason}" for f in last if f.severity == "error")
        console.print(
            f"slot {outcome.index} ({outcome.seed_task}), attempt {len(outcome.rejections)}: "
            f"{reasons or 'no attempt recorded'}"
        )
    if failed:
        raise SandmleError(
            f"{len(failed)} slot(s) were rejected on every attempt (last reasons above)"
        )
    from sandmle.benchmarks.synthetic.summary import summarize_pack, summary_lines

    for line in summary_lines(summarize_pack(out)):
        console.print(line, highlight=False)


@synth_app.command()
def check(
    directory: Annotated[Path, typer.Argument(help="A pack folder or one task folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Processes.")] = None,
    trust_pack_code: Annotated[
        bool,
        typer.Option(
            "--trust-pack-code",
            help="Let graders run code the pack brings (a release's evaluator.py) on this "
            "machine; only for packs you trust (sets SANDMLE_TRUST_PACK_CODE=1).",
        ),
    ] = False,
) -> None:
    """Re-run the sanity checks (the pack's confinement first); exit 1 when any task fails one."""
    if not directory.is_dir():
        raise SandmleError(f"{directory}: folder does not exist")
    from sandmle.benchmarks.synthetic.sanity import check_directory

    if trust_pack_code:
        from sandmle.harness.confinement import trust_pack_code as trust

        trust()
    results = check_directory(directory, workers=workers)
    errors = {t: [f for f in fs if f.severity == "error"] for t, fs in results.items()}
    if as_json:
        payload = {t: [f.model_dump() for f in fs] for t, fs in results.items()}
        typer.echo(
            json.dumps(
                {"passed": not any(errors.values()), "tasks": payload}, indent=2, sort_keys=True
            )
        )
    else:
        _print_table(results)
    if any(errors.values()):
        raise typer.Exit(1)


def _print_table(results: dict[str, list[Failure]]) -> None:
    failing = {t: fs for t, fs in results.items() if fs}
    if not failing:
        console.print(f"all {len(results)} task(s) pass the sanity checks")
        return
    table = Table("task", "rule", "severity", "reason", title="sanity check failures")
    for task, failures in failing.items():
        for failure in failures:
            table.add_row(task, failure.rule, failure.severity, failure.reason)
    console.print(table)
    n_bad = sum(any(f.severity == "error" for f in fs) for fs in results.values())
    console.print(f"{n_bad} of {len(results)} task(s) fail")


@synth_app.command("import")
def import_tasks(
    directory: Annotated[Path, typer.Argument(help="A release task folder, or a folder of them.")],
    out: Annotated[Path, typer.Option("--out", help="Empty folder to write the tasks to.")],
    fmt: Annotated[
        ImportFormat, typer.Option("--format", help="Layout of the tasks to import.")
    ] = ImportFormat.sandmle_release,
    timeout: Annotated[
        int, typer.Option("--timeout", min=1, help="Seconds per evaluator.py run.")
    ] = DEFAULT_IMPORT_TIMEOUT_S,
) -> None:
    """Convert published SandMLE release tasks into competition folders."""
    from sandmle.benchmarks.synthetic.release import import_release

    ids = import_release(directory, out, timeout_s=timeout)
    console.print(f"imported {len(ids)} task(s) into {out}")
    report = out / "import_report.json"
    if report.is_file():
        for entry in json.loads(report.read_text(encoding="utf-8")):
            if entry["status"] != "imported":
                console.print(f"{entry['status']}: {entry['reason']}", markup=False)


@synth_app.command("seeds")
def list_seeds() -> None:
    """List the seed tasks and their structure."""
    from sandmle.benchmarks.synthetic.seeds import SEEDS

    table = Table("seed task", "modality", "task type", "metric", "outputs")
    for dna in SEEDS.values():
        table.add_row(dna.seed_task, dna.modality, dna.task_type, dna.metric, str(dna.n_outputs))
    console.print(table)
