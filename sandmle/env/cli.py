"""``sandmle env serve``: serve a pack's tasks as step-wise environments (OpenEnv protocol)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sandmle.errors import SandmleError
from sandmle.harness import exposure

env_app = typer.Typer(
    help="Serve sandmle's tasks as step-wise RL environments (OpenEnv).",
    no_args_is_help=True,
    add_completion=False,
)
DEFAULT_PORT = 8100
TOKEN_ENV = "SANDMLE_ENV_TOKEN"


@env_app.callback()
def _group() -> None:
    """Serve sandmle's tasks as step-wise RL environments (OpenEnv)."""


@env_app.command()
def serve(
    pack: Annotated[
        str | None, typer.Option(help="Pack folder (default: the built-in pack).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="YAML EnvSettings (docs/environments.md).")
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on; any but loopback requires a token.")
    ] = exposure.DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to serve on.")] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option(
            envvar=TOKEN_ENV,
            help="Token clients send as 'Authorization: Bearer' off loopback (default: a "
            "random one, printed).",
            show_default=False,
        ),
    ] = None,
    max_episodes: Annotated[
        int | None, typer.Option(help="Episodes that run at once (default: the config's, 4).")
    ] = None,
    log_dir: Annotated[
        str | None, typer.Option(help="Where episodes' Inspect logs go (default: logs/env).")
    ] = None,
) -> None:
    """Serve the pack's tasks: one episode per OpenEnv WebSocket session at ws://HOST:PORT/ws."""
    import uvicorn

    from sandmle.env.server import build_app

    settings = _settings(config, pack=pack, max_episodes=max_episodes, log_dir=log_dir)
    if not exposure.is_loopback(host):
        token = token or exposure.new_token()
        typer.echo(
            f"warning: serving on {host}, reachable by other machines; clients must send "
            f"'Authorization: Bearer {token}' (SandmleEnvClient(url, token=...))",
            err=True,
        )
    elif token:
        typer.echo("note: a token is set: clients must send it, also on loopback", err=True)
    app = build_app(settings, token=token)
    typer.echo(f"sandmle env: ws://{host}:{port}/ws (logs in {settings.log_dir})", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=64 * 1024 * 1024)


def _settings(config: Path | None, **overrides: Any) -> Any:
    from sandmle.specs.environment import EnvSettings
    from sandmle.specs.files import load_file

    settings = load_file(EnvSettings, config) if config is not None else EnvSettings()
    given = {k: v for k, v in overrides.items() if v is not None}
    if not given:
        return settings
    try:
        return EnvSettings.model_validate({**settings.model_dump(), **given})
    except ValueError as exc:
        raise SandmleError(str(exc).splitlines()[0]) from None
