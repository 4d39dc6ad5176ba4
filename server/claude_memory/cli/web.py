"""CLI command for the dashboard: ``claude-memory web`` serves the pages and the HTTP API on the loopback
address (docs/web.md)."""

from __future__ import annotations

import logging
import sys
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from claude_memory.cli.common import EXIT_FAILURE
from claude_memory.core.paths import private_umask


def web(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The loopback port (0: any free one).")] = 37777,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the dashboard in the default browser.")] = False,
    start: Annotated[bool, typer.Option("--start/--no-start", help="Start the memory service when none runs.")] = True,
    verbose: Annotated[bool, typer.Option("--verbose", help="Log every request to stderr.")] = False,
) -> None:
    """Serve the web dashboard and its HTTP API on 127.0.0.1 until Ctrl-C (docs/web.md).

    It prints an address that signs a browser in once; run it again with --open while it runs for a new one.
    Scripts send the token instead (Authorization: Bearer; the token is in <data dir>/web-token).
    """
    from claude_memory.web.auth import TokenFileError, load_token  # starlette, uvicorn
    from claude_memory.web.server import PortUnavailable, WebServer, WebSettings, ask_running

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    private_umask()
    data_dir: Path = ctx.obj.data_dir
    try:
        token = load_token(data_dir)
        server = WebServer(WebSettings(data_dir=data_dir, port=port, start_service=start, verbose=verbose), token)
    except TokenFileError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(EXIT_FAILURE) from None
    except PortUnavailable as exc:
        running = ask_running(port, token) if port else None
        if running is None:
            typer.echo(f"Error: {exc}", err=True)
            raise typer.Exit(EXIT_FAILURE) from None
        typer.echo(f"The dashboard for {data_dir} is already running; sign in at {running}")
        if open_browser:
            webbrowser.open(running)
        return
    server.warm()
    url = server.sign_in_url()
    typer.echo(f"Dashboard for {data_dir}: {url}")
    typer.echo("That address signs in once; Ctrl-C stops the dashboard.", err=True)
    sys.stdout.flush()
    if open_browser:
        webbrowser.open(url)
    server.serve()


def register(app: typer.Typer) -> None:
    app.command("web")(web)
