"""``sandmle synth replicas``: the command line of the micro-replica writer.

Kept apart from ``replicas.py`` so that ``sandmle synth --help`` does not import the replica
builders (numpy, scipy, Pillow); they are imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sandmle.errors import SandmleError


def replicas_command(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the replicas to.")],
    dojo: Annotated[
        bool, typer.Option("--dojo", help="Also write MLE-Dojo's layout under OUT/mle-dojo.")
    ] = False,
    competitions: Annotated[
        list[str] | None,
        typer.Option("--competition", "-c", help="Only these competition ids (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Data seed.")] = 0,
    split: Annotated[
        str | None, typer.Option("--split", help="All of a split: lite or dev (dev: 7 more).")
    ] = None,
) -> None:
    """Write micro replicas of the 22 MLE-bench-lite competitions (offline smoke tests)."""
    from sandmle.benchmarks.mle_bench.competitions import split_ids
    from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
    from sandmle.benchmarks.mle_dojo.replicas import DOJO_SUBDIR, build_replicas_with_dojo

    if split is not None:
        if split not in ("lite", "dev"):
            raise SandmleError(f"--split must be lite or dev, not {split!r}")
        competitions = [*(competitions or []), *split_ids(split)]
    build = build_replicas_with_dojo if dojo else build_replicas
    roots = build(out, competitions, seed=seed)
    typer.echo(f"wrote {len(roots)} micro replicas to {out}")
    typer.echo(f"run: inspect eval sandmle/mle_bench_lite -T data_dir={out}")
    if dojo:
        typer.echo(
            f"MLE-Dojo layout: inspect eval sandmle/mle_dojo -T data_dir={out / DOJO_SUBDIR}"
        )


replicas_app = typer.Typer(help="Micro replicas of MLE-bench-lite.", no_args_is_help=True)
replicas_app.command("replicas")(replicas_command)
