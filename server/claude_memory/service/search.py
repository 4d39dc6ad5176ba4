"""Keyword search as a service call: BM25 hits, hydrated events, snippets around the matched terms."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import duckdb

from claude_memory.core.tokens import QueryTokenizer
from claude_memory.store import keyword
from claude_memory.store.keyword import KeywordFilters
from claude_memory.store.queries import StoredEvent, events_by_ids

SNIPPET_CHARS = 240
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(slots=True)
class SearchHit:
    event: StoredEvent
    score: float
    snippet: str

    def to_json(self) -> dict[str, Any]:
        data = self.event.to_json(text=self.snippet)
        data["score"] = round(self.score, 6)
        return {"id": data.pop("id"), "score": data.pop("score"), **data}


def snippet(text: str, stems: list[str], width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first word whose lower-cased form starts with a query stem."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    first = len(flat)
    for match in _WORD.finditer(flat.lower()):
        if any(match.group().startswith(stem) for stem in stems):
            first = match.start()
            break
    if first == len(flat):
        first = 0
    start = max(0, first - width // 4)
    end = min(len(flat), start + width)
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    return f"{prefix}{flat[start:end].strip()}{suffix}"


def keyword_search(
    con: duckdb.DuckDBPyConnection, tokenizer: QueryTokenizer, query: str, filters: KeywordFilters, limit: int
) -> tuple[list[SearchHit], dict[str, Any]]:
    started = time.perf_counter()
    stems = tokenizer.terms(query)
    ranked = keyword.search(con, stems, filters, limit)
    events = events_by_ids(con, [event_id for event_id, _ in ranked])
    hits = [
        SearchHit(events[event_id], score, snippet(events[event_id].text, stems))
        for event_id, score in ranked
        if event_id in events
    ]
    meta = {
        "query": query,
        "mode": "keyword",
        "terms": stems,
        "count": len(hits),
        "limit": limit,
        "filters": {
            "project": filters.project,
            "session": filters.session_id,
            "types": list(filters.types),
            "since": filters.since.isoformat() if filters.since else None,
            "until": filters.until.isoformat() if filters.until else None,
        },
        "took_ms": round((time.perf_counter() - started) * 1000, 2),
    }
    if not stems:
        meta["note"] = "The query has no searchable words."
    return hits, meta
