"""The ``claude-memory`` command (typer): :mod:`claude_memory.cli.app` and the command groups beside it."""

from claude_memory.cli.app import main

__all__ = ["main"]
