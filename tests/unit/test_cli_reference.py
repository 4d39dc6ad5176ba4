from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from claude_memory.cli.app import app
from claude_memory.cli.reference import COMMANDS, reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_cli_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is stale: run `.venv/bin/python -m claude_memory.cli.reference > docs/cli.md`"
    )


def test_reference_covers_every_command() -> None:
    group: Any = typer.main.get_command(app)
    assert set(group.list_commands(typer.Context(group))) == set(COMMANDS)
