"""CLI command for the MCP face: ``claude-memory mcp`` serves the memory tools over stdio (docs/mcp.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from claude_memory.cli.common import EXIT_FAILURE
from claude_memory.service.projects import normalise_project_arg


def mcp(
    ctx: typer.Context,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            help="The project searched by default (a path).",
            show_default="the git root of $CLAUDE_PROJECT_DIR, else of the current directory",
        ),
    ] = None,
) -> None:
    """Run the MCP server on stdin/stdout (Claude Code starts it from the plugin's .mcp.json): tools search,
    timeline, get_observations, forget and stats over the memory service, which it starts on demand."""
    try:
        from claude_memory.mcp import server as mcp_server  # heavy (the mcp SDK): only for this command
    except ImportError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        typer.echo("Error: the MCP server needs the 'mcp' package (pip install 'mcp>=2.3,<3').", err=True)
        raise typer.Exit(EXIT_FAILURE) from None
    data_dir: Path = ctx.obj.data_dir
    scope = normalise_project_arg(project) if project else mcp_server.default_project()
    mcp_server.run(mcp_server.McpSettings(data_dir=data_dir, project=scope))


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
