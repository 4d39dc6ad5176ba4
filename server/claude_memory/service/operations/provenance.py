"""Which conversation wrote which line of a file: ``blame`` (the CLI's ``blame``, the MCP tool ``why``, the
language server's line hovers and lenses, the PreToolUse note)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from claude_memory.service.contract import Engine, Params, Result, operation
from claude_memory.service.operations.common import Source

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class BlameParams(Params):
    path: str = Field(min_length=1, max_length=4096, description="The file (absolute path).")
    text: str | None = Field(
        default=None, max_length=4_000_000, description="Its text as the editor holds it; default: the file on disk."
    )
    start: int | None = Field(default=None, ge=1, description="Only ranges that reach this line or later (1-based).")
    end: int | None = Field(default=None, ge=1, description="Only ranges that start at this line or earlier.")

    @model_validator(mode="after")
    def _ordered(self) -> BlameParams:
        if self.start is not None and self.end is not None and self.end < self.start:
            raise ValueError(f"The line range {self.start}-{self.end} ends before it starts.")
        return self


class Excerpt(Result):
    citation: str | None
    text: str
    timestamp: str | None


class EditInfo(Result):
    """One editing call that wrote lines of the file, with what led to it."""

    id: int
    citation: str | None
    tool: str
    tool_use_id: str | None
    file: str
    session_id: str
    agent_id: str | None
    timestamp: str | None
    model: str | None
    source: Source | None
    prompt: Excerpt | None = Field(description="The user's prompt that led to it (a subagent's: its parent's).")
    answer: Excerpt | None = Field(description="Claude's words before the call in its turn, else just after it.")


class BlameRange(Result):
    start: int
    end: int
    edit: int | None = Field(description="The id of the edit (in edits) that wrote these lines; null: no edit did.")
    confidence: float
    method: str | None = Field(description="exact, normalized (whitespace) or fuzzy: how the lines were matched.")


class Blame(Result):
    path: str
    lines: int
    claude_lines: int
    edit_records: int = Field(description="Editing calls the store holds for this file.")
    sessions: int
    ranges: list[BlameRange]
    edits: list[EditInfo]


@operation("blame", BlameParams, Blame)
def blame(engine: Engine, p: BlameParams, progress: Progress) -> dict[str, Any]:
    """Every line range of a file (as on disk, or the editor's text) with the editing call that wrote it, the
    prompt that asked for it and Claude's words around it; lines no call wrote have no edit."""
    found = engine.memory.provenance.blame(p.path, p.text)
    if p.start is None and p.end is None:
        return found
    low, high = p.start or 1, p.end or found["lines"]
    ranges = [r for r in found["ranges"] if r["end"] >= low and r["start"] <= high]
    kept = {r["edit"] for r in ranges}
    return {**found, "ranges": ranges, "edits": [e for e in found["edits"] if e["id"] in kept]}
