"""The memory service's request API: typed parameters (pydantic, parsed at the socket) and one handler per
method, each a thin call into :class:`~claude_memory.service.memory.Memory` that returns plain JSON.
``docs/service-api.md`` documents every method; a test checks that it lists all of them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from claude_memory.core.disclosure import DEFAULT_BUDGET, DEFAULT_CONTEXT, DEFAULT_WINDOW
from claude_memory.core.events import EVENT_TYPES
from claude_memory.service.memory import ForgetSelector, Memory
from claude_memory.service.projects import normalise_project_arg
from claude_memory.store import files, queries
from claude_memory.store.db import from_store_time
from claude_memory.store.keyword import KeywordFilters

Mode = Literal["keyword", "semantic", "hybrid"]


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Filters(Params):
    project: str | None = None
    session: str | None = None
    types: list[str] = Field(default_factory=list)
    since: datetime | None = None
    until: datetime | None = None

    def filters(self) -> KeywordFilters:
        unknown = [t for t in self.types if t not in EVENT_TYPES]
        if unknown:
            raise ValueError(f"Unknown event type {unknown[0]!r}; known: {', '.join(EVENT_TYPES)}.")
        return KeywordFilters(
            project=normalise_project_arg(self.project) if self.project else None,
            session_id=self.session,
            types=tuple(self.types),
            since=self.since,
            until=self.until,
        )


class SearchParams(Filters):
    query: str = Field(min_length=1, max_length=100_000)
    limit: int = Field(default=10, ge=1, le=1000)
    mode: Mode = "hybrid"


class SmartSearchParams(SearchParams):
    budget: int = Field(default=DEFAULT_BUDGET, ge=0, le=10_000_000)
    via: str = Field(default="service", max_length=40)


class TimelineParams(Params):
    refs: list[str] = Field(min_length=1, max_length=10_000)
    before: int = Field(default=DEFAULT_WINDOW, ge=0, le=50)
    after: int = Field(default=DEFAULT_WINDOW, ge=0, le=50)


class DetailsParams(Params):
    refs: list[str] = Field(min_length=1, max_length=10_000)
    context: int = Field(default=DEFAULT_CONTEXT, ge=0, le=50)
    via: str = Field(default="service", max_length=40)


class HistoryParams(Filters):
    limit: int = Field(default=20, ge=1, le=10_000)


class SessionsParams(Params):
    project: str | None = None
    limit: int = Field(default=20, ge=1, le=10_000)


class ForgetParams(Params):
    refs: list[str] = Field(default_factory=list, max_length=10_000)
    session: str | None = None
    project: str | None = None
    before: datetime | None = None
    dry_run: bool = False


class NoParams(Params):
    pass


class FileHistoryParams(Params):
    path: str = Field(min_length=1, max_length=4096)
    symbol: str | None = Field(default=None, max_length=200)
    project: str | None = None  # where symbol mentions count; default: the projects that touched the file
    limit: int = Field(default=20, ge=1, le=1000)
    known_generation: str | None = Field(default=None, max_length=100)  # answer "unchanged" if still current


class FileSummaryParams(Params):
    paths: list[str] = Field(min_length=1, max_length=1000)


class NotFound(Exception):
    """The request names something the store does not have (the message says what)."""


@dataclass
class Handler:
    params: type[Params]
    run: Callable[[Memory, Any], Any]
    writes: bool = False  # changes the store (forget, import...): never answered from a cache


def _search(memory: Memory, p: SearchParams) -> dict[str, Any]:
    hits, meta = memory.search(p.query, p.filters(), p.limit, p.mode)
    return {"results": [h.to_json() for h in hits], "meta": meta}


def _index(memory: Memory, p: SearchParams) -> dict[str, Any]:
    return memory.index(p.query, p.filters(), p.limit, p.mode).to_json()


def _smart(memory: Memory, p: SmartSearchParams) -> dict[str, Any]:
    found = memory.smart_search(p.query, p.filters(), p.limit, p.mode, budget=p.budget, via=p.via)
    return {**found.to_json(), "text": found.text()}


def _timeline(memory: Memory, p: TimelineParams) -> dict[str, Any]:
    return memory.timeline(p.refs, before=p.before, after=p.after).to_json()


def _details(memory: Memory, p: DetailsParams) -> dict[str, Any]:
    found: list[dict[str, Any]] = []
    missing: list[str] = []
    for ref in p.refs:
        item = memory.details(ref, context=p.context, via=p.via)
        if item is None:
            missing.append(ref)
        else:
            found.append(item.to_json())
    return {"details": found, "missing": missing}


def _history(memory: Memory, p: HistoryParams) -> list[dict[str, Any]]:
    return [e.to_json() for e in memory.history(p.filters(), p.limit)]


def _sessions(memory: Memory, p: SessionsParams) -> list[dict[str, Any]]:
    project = normalise_project_arg(p.project) if p.project else None
    return memory.sessions(project, p.limit)


def _forget(memory: Memory, p: ForgetParams) -> dict[str, Any]:
    ids: list[int] = []
    for ref in p.refs:
        event = memory.resolve(ref)
        if event is None:
            raise NotFound(f"No memory {ref} (it may have been forgotten already).")
        ids.append(event.id)
    selector = ForgetSelector(
        event_ids=tuple(ids),
        session_id=p.session,
        project=normalise_project_arg(p.project) if p.project else None,
        before=p.before,
    )
    if selector.is_empty():
        raise ValueError("Say what to forget: refs, session, project or before.")
    if p.dry_run:
        return {"matching": memory.count_matching(selector), "forgotten": 0}
    count = memory.forget(selector)
    return {"matching": count, "forgotten": count}


def _stats(memory: Memory, p: NoParams) -> dict[str, Any]:
    return memory.stats()


def _reindex(memory: Memory, p: NoParams) -> dict[str, Any]:
    return {"vectors": memory.reindex()}


def _generation(memory: Memory) -> tuple[tuple[int, int, int], str]:
    current = queries.generation(memory.con)
    return current, "-".join(str(part) for part in current)


def _file_history(memory: Memory, p: FileHistoryParams) -> dict[str, Any]:
    """Events that touched a file or mention a symbol, newest first; cached for the store generation, and
    answered with ``unchanged`` (no events) when the caller already holds this generation's answer."""
    current, generation = _generation(memory)
    path = os.path.normpath(p.path)
    symbol = (p.symbol or "").strip() or None
    project = normalise_project_arg(p.project) if p.project else None
    head = {"path": path, "symbol": symbol, "project": project, "generation": generation}
    if p.known_generation == generation:
        return {**head, "unchanged": True}

    def compute() -> dict[str, Any]:
        terms = memory.tokenizer.terms(symbol) if symbol else []
        found = files.file_history(memory.con, path, symbol=symbol, terms=terms, project=project, limit=p.limit)
        return {
            "file_events": found.file_events,
            "symbol_projects": list(found.projects) if symbol else [],
            "events": [e.to_json() for e in found.events],
        }

    body = memory.layer_cache.get(current, "file_history", (path, symbol, project, p.limit), compute)
    return {**head, "unchanged": False, **body}


def _file_summary(memory: Memory, p: FileSummaryParams) -> dict[str, Any]:
    by_path = files.file_summary(memory.con, [os.path.normpath(path) for path in p.paths])
    out: dict[str, Any] = {}
    for path in p.paths:
        count, last = by_path.get(os.path.normpath(path), (0, None))
        out[path] = {"count": count, "last_ts": from_store_time(last)}
    return out


HANDLERS: dict[str, Handler] = {
    "search": Handler(SearchParams, _search),
    "index": Handler(SearchParams, _index),
    "smart_search": Handler(SmartSearchParams, _smart),
    "timeline": Handler(TimelineParams, _timeline),
    "details": Handler(DetailsParams, _details),
    "history": Handler(HistoryParams, _history),
    "sessions": Handler(SessionsParams, _sessions),
    "stats": Handler(NoParams, _stats),
    "forget": Handler(ForgetParams, _forget, writes=True),
    "reindex": Handler(NoParams, _reindex, writes=True),
    "file_history": Handler(FileHistoryParams, _file_history),
    "file_summary": Handler(FileSummaryParams, _file_summary),
}
