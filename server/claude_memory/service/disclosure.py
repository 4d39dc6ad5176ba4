"""Progressive disclosure over the store: the three layers built from search hits and stored events, and a
cache of them that lives as long as the store does not change.

The shaping, token estimates and smart-search rules are pure and live in :mod:`claude_memory.core.disclosure`;
:class:`claude_memory.service.memory.Memory` exposes the layers (``index``, ``timeline``, ``details``,
``smart_search``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, TypeVar, cast

import duckdb

from claude_memory.core.citations import render
from claude_memory.core.disclosure import (
    Details,
    IndexEntry,
    SearchIndex,
    Timeline,
    TimelineItem,
    TimelineWindow,
    merge_timelines,
    preview,
    summary,
    tool_facts,
)
from claude_memory.service.search import SearchHit
from claude_memory.store import queries
from claude_memory.store.db import from_store_time
from claude_memory.store.queries import StoredEvent

T = TypeVar("T")

# Entries kept per layer (SEED_SPEC §6.6: 100 queries, 500 timelines, 200 details).
CACHE_LIMITS: Final[Mapping[str, int]] = MappingProxyType({"index": 100, "timeline": 500, "details": 200})


class LayerCache:
    """Layer results keyed by (layer, arguments). Everything is dropped as soon as the store's generation
    (see :func:`claude_memory.store.queries.generation`) differs from the one the results were computed
    at, so a cached answer is always the answer the store would give now. No time-to-live is needed:
    nothing but a store change can change an answer. Least recently used entries go first."""

    def __init__(self, limits: Mapping[str, int] = CACHE_LIMITS) -> None:
        self._limits = dict(limits)
        self._layers: dict[str, OrderedDict[Hashable, object]] = {}
        self._generation: Hashable = None
        self.hits = 0
        self.misses = 0

    def clear(self) -> None:
        self._layers.clear()
        self._generation = None

    def get(self, generation: Hashable, layer: str, key: Hashable, compute: Callable[[], T]) -> T:
        if generation != self._generation:
            self._layers.clear()
            self._generation = generation
        entries = self._layers.setdefault(layer, OrderedDict())
        if key in entries:
            self.hits += 1
            entries.move_to_end(key)
            return cast(T, entries[key])
        self.misses += 1
        value = compute()
        entries[key] = value
        while len(entries) > self._limits.get(layer, 100):
            entries.popitem(last=False)
        return value


def search_index(hits: Sequence[SearchHit], meta: Mapping[str, Any]) -> SearchIndex:
    """Layer 1 from ranked search hits. The summary comes from the event's full text, not the snippet."""
    entries = tuple(
        IndexEntry(
            rank=rank,
            id=hit.event.id,
            citation=render(hit.event.citation) if hit.event.citation else None,
            summary=summary(hit.event.text),
            score=hit.score,
            confidence=hit.confidence,
            type=hit.event.type,
            timestamp=from_store_time(hit.event.ts),
            session_id=hit.event.session_id,
            project=hit.event.project,
            duplicates=tuple(render(e.citation) for e in hit.duplicates if e.citation),
        )
        for rank, hit in enumerate(hits, start=1)
    )
    return SearchIndex(entries, dict(meta))


def _item(event: StoredEvent, position: int, is_target: bool) -> TimelineItem:
    return TimelineItem(
        id=event.id,
        citation=render(event.citation) if event.citation else None,
        type=event.type,
        timestamp=from_store_time(event.ts),
        session_id=event.session_id,
        position=position,
        preview=preview(event.text),
        is_target=is_target,
    )


def _window(con: duckdb.DuckDBPyConnection, event: StoredEvent, before: int, after: int) -> TimelineWindow:
    around = queries.session_window(con, event, before, after)
    return TimelineWindow(event.session_id, event.project, tuple(_item(e, pos, e.id == event.id) for pos, e in around))


def timeline(
    con: duckdb.DuckDBPyConnection, targets: Sequence[StoredEvent], missing: Sequence[str], before: int, after: int
) -> Timeline:
    """Layer 2: ``before`` and ``after`` events around each target in its session, windows merged."""
    parts = [Timeline((_window(con, event, before, after),)) for event in targets]
    return merge_timelines([*parts, Timeline((), tuple(missing))])


def details(con: duckdb.DuckDBPyConnection, event: StoredEvent, context: int) -> Details:
    """Layer 3: the event in full with ``context`` neighbours each side (its citation uses are not
    counted here: the caller decides whether showing it is a use)."""
    window = _window(con, event, context, context)
    return Details(
        id=event.id,
        citation=render(event.citation) if event.citation else None,
        type=event.type,
        timestamp=from_store_time(event.ts),
        session_id=event.session_id,
        project=event.project,
        agent_id=event.agent_id,
        tool_name=event.tool_name,
        content=event.text,
        files=tuple(event.files),
        tools=tool_facts(event.tool_name, event.type, event.metadata),
        source=event.source(),
        metadata=event.metadata,
        neighbours=window.items,
    )
