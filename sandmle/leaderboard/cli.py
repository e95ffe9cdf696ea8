"""``sandmle leaderboard``: serve the Streamlit app, or export a static HTML report.

``sandmle leaderboard [LOG_DIR ...] [--host H] [--port P]`` serves (127.0.0.1 unless told
otherwise, and then with a token: ``serving``); ``sandmle leaderboard export LOG_DIR
--out report.html`` exports. A click group cannot take a variadic positional next to its
subcommands, so the group sends any first argument that is not a subcommand to ``serve``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from typer import _click  # typer's own click: what TyperGroup is declared with
from typer.core import TyperGroup

from sandmle.errors import SandmleError
from sandmle.harness import exposure
from sandmle.leaderboard import serving

APP_FILE = Path(__file__).with_name("app.py")
DEFAULT_PORT = 8501


class DefaultToServe(TyperGroup):
    """A group whose default subcommand is ``serve``: ``leaderboard DIR`` = ``leaderboard serve DIR``."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        first = next(iter(args), None)
        if first not in self.commands and first not in ("--help", "-h"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


leaderboard_app = typer.Typer(
    name="leaderboard",
    cls=DefaultToServe,
    help="Browse Inspect logs as a leaderboard (Streamlit), or export it as one HTML file.",
    no_args_is_help=False,
    add_completion=False,
)


def streamlit_command(
    log_dirs: list[Path], port: int, headless: bool = False, host: str = exposure.DEFAULT_HOST
) -> list[str]:
    """The ``streamlit run`` command line serving the packaged app on ``log_dirs``.

    Usage statistics are always off: the app runs on logs that may be private. The address is
    always given: without one Streamlit listens on every interface.
    """
    command = [sys.executable, "-m", "streamlit", "run", str(APP_FILE)]
    command += ["--server.address", host, "--server.port", str(port)]
    command += ["--server.headless", str(headless).lower()]
    command += ["--browser.gatherUsageStats", "false"]
    return [*command, "--", *(str(d) for d in log_dirs)]


def has_terminal() -> bool:
    """Whether a person can answer prompts (Streamlit's first-run e-mail prompt needs one)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def existing_dirs(log_dirs: list[Path]) -> list[Path]:
    """``log_dirs`` unchanged; a one-line error naming the first that does not exist."""
    for log_dir in log_dirs:
        if "://" not in str(log_dir) and not log_dir.is_dir():
            raise SandmleError(
                f"log dir {log_dir} does not exist (make logs with `sandmle demo --log-dir "
                f"{log_dir}` or `sandmle eval ... --log-dir {log_dir}`)"
            )
    return log_dirs


@leaderboard_app.command()
def serve(
    log_dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Dirs searched (recursively) for Inspect logs (default: $INSPECT_LOG_DIR, "
            "else ./logs)."
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on; any but loopback prints a warning and asks visitors "
            "for a token.",
            show_default=True,
        ),
    ] = exposure.DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to serve on.", show_default=True)] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option(
            envvar=serving.TOKEN_ENV,
            help="Token visitors give as ?token= off loopback (default: a random one, printed).",
            show_default=False,
        ),
    ] = None,
    headless: Annotated[
        bool | None,
        typer.Option(
            "--headless/--browser", help="Do not open a browser (default: when not on a terminal)."
        ),
    ] = None,
) -> None:
    """Serve the leaderboard app (the default: 'sandmle leaderboard DIR' serves DIR)."""
    dirs = existing_dirs(log_dirs or [Path(os.environ.get("INSPECT_LOG_DIR", "logs"))])
    quiet = not has_terminal() if headless is None else headless
    env = {**os.environ, serving.ROOTS_ENV: serving.roots_value(dirs)}
    env.pop(serving.TOKEN_ENV, None)
    if not exposure.is_loopback(host):
        env[serving.TOKEN_ENV] = token = token or exposure.new_token()
        typer.echo(serving.exposure_warning(host, port, token), err=True)
    code = serving.run_server(streamlit_command(dirs, port, quiet, host), env)
    raise typer.Exit(code)


@leaderboard_app.command()
def export(
    log_dirs: Annotated[list[Path], typer.Argument(help="Dirs searched for Inspect logs.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write.")] = Path(
        "leaderboard.html"
    ),
) -> None:
    """Write the leaderboard, with every sample's drill-down, to one HTML file that opens offline."""
    from sandmle.leaderboard.export import export_html
    from sandmle.leaderboard.logs import LogCache

    dirs = existing_dirs(log_dirs)
    typer.echo(f"reading logs under {', '.join(map(str, dirs))} ...")  # a line, also off a tty
    path = export_html(dirs, out, LogCache.persistent())  # the app's cache: read logs once
    typer.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
