"""What the memory knows about a file: the events that touched it or mention a symbol in it
(``file_history``, the language server's hover) and per-file counts (``file_summary``, its code lenses)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory.service.contract import Engine, Params, Result, operation
from claude_memory.service.operations.common import Event, project_arg

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class FileHistoryParams(Params):
    path: str = Field(min_length=1, max_length=4096, description="The file (absolute path).")
    symbol: str | None = Field(default=None, max_length=200, description="A word in it to look for too.")
    project: str | None = Field(
        default=None, description="Where symbol mentions count; default: the projects that touched the file."
    )
    limit: int = Field(default=20, ge=1, le=1000, description="How many events.")
    known_generation: str | None = Field(
        default=None, max_length=100, description='Answer only "unchanged" while this store generation is current.'
    )


class FileSummaryParams(Params):
    paths: list[str] = Field(min_length=1, max_length=1000, description="Files (absolute paths).")


class FileHistory(Result):
    path: str
    symbol: str | None
    project: str | None
    generation: str
    unchanged: bool
    file_events: int | None = None
    symbol_projects: list[str] | None = None
    events: list[Event] | None = None


class FileCount(Result):
    count: int
    last_ts: str | None


@operation("file_history", FileHistoryParams, FileHistory)
def file_history(engine: Engine, p: FileHistoryParams, progress: Progress) -> dict[str, Any]:
    """The events whose tool call touched ``path`` or, with ``symbol``, whose text mentions it as a whole
    word, newest first; cached per store generation."""
    return engine.memory.file_history(
        p.path, symbol=p.symbol, project=project_arg(p.project), limit=p.limit, known_generation=p.known_generation
    )


@operation("file_summary", FileSummaryParams, dict[str, FileCount])
def file_summary(engine: Engine, p: FileSummaryParams, progress: Progress) -> dict[str, Any]:
    """How many events touched each file, and when last: ``{path: {count, last_ts}}``."""
    return engine.memory.file_summary(p.paths)
