"""``claude-memory blame FILE [--lines A-B] [--json]``: which conversation wrote each line of a file
(:mod:`claude_memory.service.operations.provenance`)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, Any

import typer

from claude_memory.cli.common import EXIT_NOTHING, JsonOpt, fail
from claude_memory.client.transport import Transport
from claude_memory.core.blame import file_lines

TransportFactory = Callable[[typer.Context], AbstractContextManager[Transport]]
_RANGE = re.compile(r"^\s*(\d+)\s*(?:[-:,]\s*(\d+))?\s*$")


def parse_lines(value: str | None) -> tuple[int | None, int | None]:
    """``A-B`` (or one line ``A``) as 1-based bounds; a one-sentence error otherwise."""
    if value is None:
        return None, None
    found = _RANGE.match(value)
    if not found or int(found.group(1)) < 1:
        fail(f"--lines takes a line or a range of lines such as 12-40, not {value!r}.")
    start = int(found.group(1))
    end = int(found.group(2)) if found.group(2) else start
    if end < start:
        fail(f"The line range {start}-{end} ends before it starts.")
    return start, end


def _day(timestamp: str | None) -> str:
    return (timestamp or "?")[:10]


def blame_text(data: dict[str, Any], lines: list[str], start: int | None, end: int | None) -> list[str]:
    """The file's lines, each after the citation and day of the call that wrote it (blank: no call did), then the
    calls with the prompts that asked for them."""
    edits = {e["id"]: e for e in data["edits"]}
    width = len(str(len(lines)))
    out: list[str] = []
    low, high = start or 1, end or len(lines)
    for r in data["ranges"]:
        edit = edits.get(r["edit"]) if r["edit"] is not None else None
        label = f"{edit['citation'] or edit['id']} {_day(edit['timestamp'])}" if edit else ""
        mark = "~" if edit and r["method"] == "fuzzy" else " "
        for n in range(max(r["start"], low), min(r["end"], high) + 1):
            text = lines[n - 1] if n - 1 < len(lines) else ""
            out.append(f"{label:<22}{mark}{n:>{width}} │ {text}")
    if edits:
        out.append("")
        for e in data["edits"]:
            prompt = e["prompt"]["text"] if e["prompt"] else "(no prompt found)"
            out.append(
                f"{e['citation'] or e['id']}  {e['tool']} · {_day(e['timestamp'])} · session {e['session_id'][:8]}"
            )
            out.append(f"    asked: {prompt}")
    if any(r["method"] == "fuzzy" and r["edit"] is not None for r in data["ranges"]):
        out.append("~ lines changed since Claude wrote them (matched by similarity)")
    return out


def register(app: typer.Typer, transport: TransportFactory) -> None:
    """Add ``blame``; ``transport`` is the app's (the running service, else this process)."""

    @app.command()
    def blame(
        ctx: typer.Context,
        file: Annotated[Path, typer.Argument(help="The file.", show_default=False)],
        lines: Annotated[str | None, typer.Option("--lines", help="Only these lines: A-B, or A.")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Which conversation wrote each line of a file: the call, its day, and the prompt that asked for it.

        Lines are matched with what Claude's Edit, Write and NotebookEdit calls inserted, so they are still found
        after later edits, reformatting and moves; code written outside Claude Code is not attributed."""
        start, end = parse_lines(lines)
        path = os.path.abspath(os.path.expanduser(str(file)))
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            fail(f"{path} could not be read ({exc.strerror or type(exc).__name__}).")
        with transport(ctx) as t:  # the text read here, so that the lines shown are the lines blamed
            data = t.call("blame", {"path": path, "text": text, "start": start, "end": end})
        if as_json:
            typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        if not data["edit_records"]:
            fail(f"No Claude Code edit of {path} is remembered (code written outside Claude Code is not attributed).",
                 EXIT_NOTHING)  # fmt: skip
        for line in blame_text(data, file_lines(text), start, end):
            typer.echo(line)
