"""CLI command for the editor face: ``claude-memory lsp`` serves the language server (docs/lsp.md)."""

from __future__ import annotations

import ipaddress
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from claude_memory.cli.common import EXIT_FAILURE


def parse_tcp(value: str) -> tuple[str, int]:
    """``HOST:PORT`` on a loopback address (the server has no authentication: never listen elsewhere)."""
    host, sep, port_text = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise typer.BadParameter("expected HOST:PORT, e.g. 127.0.0.1:2087")
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise typer.BadParameter(f"{host} is not a loopback address; use 127.0.0.1, ::1 or localhost")
    return host, int(port_text)


def lsp(
    ctx: typer.Context,
    tcp: Annotated[
        str | None,
        typer.Option(
            "--tcp",
            metavar="HOST:PORT",
            help="Listen on a loopback TCP port instead of stdin/stdout (for debugging).",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Log requests and service calls to stderr.")] = False,
) -> None:
    """Run the language server for editors on stdin/stdout (docs/lsp.md).

    Memory commands, hovers on mem: citations and on code, and code lenses over the memory service.

    It starts the service on demand. Settings: section claudeMemory (initializationOptions, configuration).
    """
    address = parse_tcp(tcp) if tcp else None
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        from claude_memory.lsp import server, setup  # heavy (pygls, lsprotocol): only for this command
    except ImportError as exc:
        if not (exc.name or "").startswith(("pygls", "lsprotocol", "cattrs")):
            raise
        typer.echo("Error: the language server needs pygls (pip install 'pygls>=2.1,<3').", err=True)
        raise typer.Exit(EXIT_FAILURE) from None
    data_dir: Path = ctx.obj.data_dir
    setup.run(server.ServerOptions(data_dir=data_dir), tcp=address)


def register(app: typer.Typer) -> None:
    app.command("lsp")(lsp)
