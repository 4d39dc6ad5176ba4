"""The engine's own state and long jobs: ``ping``, ``status``, ``import`` of Claude Code's history,
``embed_wait`` (until what is queued is embedded), ``reindex``, ``verify`` (is the store sound?), and the
service's ``shutdown``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory import __version__, wire
from claude_memory.service.contract import Engine, NoParams, Params, Priority, Result, operation
from claude_memory.service.operations.common import Json, project_arg

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class ImportParams(Params):
    project: str | None = Field(default=None, description="Only this project (a path).")
    claude_home: str | None = Field(
        default=None,
        description="Claude Code's directory to import from; the service imports from the one it watches and "
        "refuses another.",
    )
    settle_seconds: float | None = Field(
        default=None,
        ge=0,
        description="A transcript untouched this long is finished for now (in-process; the service uses its own).",
    )


class EmbedWaitParams(Params):
    wait: bool = Field(default=True, description="false: only say whether semantic search is on (notes).")


class Ping(Result):
    service: str
    version: str
    protocol: int
    pid: int
    data_dir: str
    started_at: str


class Status(Result):
    service: Json | None
    watcher: Json | None
    spool: dict[str, int]
    store: dict[str, int]
    embedding: Json
    endless: Json  # {mode, working_set, continuity, transition, consolidated, last_consolidation, transitions_24h}
    warnings: list[str]


class ImportReport(Result):
    files: Json
    lines_read: int
    events: Json
    skipped_lines: Json
    dropped_text: dict[str, int]
    unknown_line_types: dict[str, int]
    ignored_line_types: dict[str, int]
    privacy: Json
    notes: list[str]
    seconds: float


class Embedded(Result):
    embedded: int
    notes: list[str]


class Reindexed(Result):
    vectors: int


class Verified(Result):
    ok: bool
    schema_version: int | None
    schema_expected: int
    tables: int
    rows: int
    problem: str | None


class Stopping(Result):
    stopping: bool


def identity(engine: Engine) -> dict[str, Any]:
    return {
        "service": "claude-memory",
        "version": __version__,
        "protocol": wire.PROTOCOL_VERSION,
        "pid": os.getpid(),
        "data_dir": str(engine.paths.data_dir),
        "started_at": engine.started_at.isoformat(timespec="seconds"),
    }


@operation("ping", NoParams, Ping, Priority.CONNECTION)
def ping(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Who answers: service name, version, protocol, pid, data directory and start time; never touches the
    store."""
    return identity(engine)


@operation("status", NoParams, Status)
def status(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """The service (None in-process), the transcript watcher, the hook spool, the store and the embedding
    pipeline: ``{service, watcher, spool, store: {events}, embedding: {model, available, reason, source, path,
    pending, failed, embedded_events, vectors, index_live, download: {state, bytes, total, error, attempts,
    retry_in}}, endless: {mode, working_set, continuity, ...}, warnings}``."""
    host = engine.host_status()
    memory = engine.memory
    return {
        "service": host["service"],
        "watcher": host["watcher"],
        "spool": host["spool"],
        "store": {"events": memory.stats()["events"]},
        "embedding": {**memory.embedding_status(), "download": engine.model_download()},
        "endless": memory.endless.status(None),
        "warnings": host["warnings"],
    }


@operation("import", ImportParams, ImportReport, Priority.CONNECTION, writes=True, progress=True)
def import_history(engine: Engine, p: ImportParams, progress: Progress) -> dict[str, Any]:
    """Import Claude Code's history (or one project's): the import report (``import --json``). The service
    reads its own Claude home in parts of about 4 MB, so hooks and searches are answered in between;
    progress in transcript bytes."""
    return engine.import_history(p.claude_home, project_arg(p.project), p.settle_seconds, progress)


@operation("embed_wait", EmbedWaitParams, Embedded, Priority.CONNECTION, progress=True)
def embed_wait(engine: Engine, p: EmbedWaitParams, progress: Progress) -> dict[str, Any]:
    """Wait until the events queued for embedding are embedded (the service embeds in the background; it
    stops waiting when the queue has not moved for 2 minutes); progress in events. ``notes`` says why
    semantic search is off, when it is."""
    embedded = engine.wait_embedded(progress) if p.wait else 0
    return {"embedded": embedded, "notes": engine.semantics_notes()}


@operation("reindex", NoParams, Reindexed, Priority.LONG, writes=True)
def reindex(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Rebuild the vector index from the store: ``{vectors}``."""
    return {"vectors": engine.memory.reindex()}


@operation("verify", NoParams, Verified, Priority.LONG)
def verify(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Check the store: read every value of every table (DuckDB checks each block's checksum) and compare the
    schema version with this code's: ``{ok, schema_version, schema_expected, tables, rows, problem}``, where
    ``problem`` says in one sentence what is wrong and what to do."""
    return engine.memory.verify()


@operation("shutdown", NoParams, Stopping, Priority.CONNECTION, service_only=True)
def shutdown(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Stop the service: it finishes the task in hand, saves the index and exits."""
    engine.shutdown()
    return {"stopping": True}
