"""Generate docs/cli.md from the CLI's own help, so the reference cannot drift (a test compares them).

python -m claude_memory.cli.reference > docs/cli.md
"""

from __future__ import annotations

import sys

from typer.testing import CliRunner

from claude_memory.cli.app import app

COMMANDS = (
    "import",
    "search",
    "show",
    "timeline",
    "history",
    "sessions",
    "projects",
    "stats",
    "blame",
    "tasks",
    "task",
    "blocked",
    "conditions",
    "insights",
    "prefs",
    "graduate",
    "mode",
    "consolidate",
    "status",
    "reindex",
    "forget",
    "repair",
    "serve",
    "stop",
    "mcp",
    "lsp",
    "web",
    "install",
    "uninstall",
    "doctor",
    "model",
)
GROUPS = {
    "model": ("status", "fetch", "use", "remove"),
    "task": ("show", "close", "merge", "rebuild"),
    "prefs": ("show", "pin", "forget", "unmark", "rebuild"),
}  # command groups: their commands are documented too
_ENV = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb", "CLAUDE_MEMORY_HOME": "~/.local/share/claude-memory"}


def _help(args: list[str]) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env=_ENV, prog_name="claude-memory")
    return "\n".join(line.rstrip() for line in result.output.strip().splitlines())


def reference() -> str:
    parts = [
        "# `claude-memory` command reference",
        "",
        "Generated from the CLI's own help by `python -m claude_memory.cli.reference > docs/cli.md`;",
        "`tests/unit/test_cli_reference.py` fails when it is out of date.",
        "",
        "```text",
        _help([]),
        "```",
    ]
    for command in COMMANDS:
        parts += ["", f"## `claude-memory {command}`", "", "```text", _help([command]), "```"]
        for sub in GROUPS.get(command, ()):
            parts += ["", f"### `claude-memory {command} {sub}`", "", "```text", _help([command, sub]), "```"]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    sys.stdout.write(reference())
