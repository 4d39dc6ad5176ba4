"""What every ``claude-memory`` command shares: exit codes, the one-sentence failure, and the options more than
one command takes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer

from claude_memory import wire
from claude_memory.config import claude_home as resolve_claude_home

EXIT_FAILURE = 1
EXIT_BUSY = 3
EXIT_NOTHING = 4
EXIT_DAMAGED = 5
EXIT_INTERRUPTED = 130
EXIT_CODES = {wire.BUSY: EXIT_BUSY, wire.NOT_FOUND: EXIT_NOTHING, wire.DAMAGED: EXIT_DAMAGED}  # else EXIT_FAILURE

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ClaudeHomeOpt = Annotated[
    Path | None,
    typer.Option("--claude-home", help="Claude Code's directory.", show_default="$CLAUDE_CONFIG_DIR or ~/.claude"),
]


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """End the command with ``Error: <message>`` on stderr and ``code``."""
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


def existing_claude_home(explicit: Path | None) -> Path:
    """Claude Code's directory (``--claude-home``, else ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``); the command
    fails when it does not exist."""
    home = resolve_claude_home(explicit)
    if not home.is_dir():
        fail(f"{home} does not exist; point --claude-home at Claude Code's directory.")
    return home
