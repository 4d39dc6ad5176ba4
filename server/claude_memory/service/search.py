"""Keyword search as a service call: BM25 hits, hydrated events, snippets around the matched terms."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import duckdb

from claude_memory.core.tokens import QueryTokenizer
from claude_memory.service.semantic import semantic_candidates
from claude_memory.store import keyword
from claude_memory.store.embedder import Embedder
from claude_memory.store.keyword import KeywordFilters
from claude_memory.store.queries import StoredEvent, events_by_ids
from claude_memory.store.vector_index import VectorIndex

SNIPPET_CHARS = 240
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(slots=True)
class SearchHit:
    event: StoredEvent
    score: float
    snippet: str
    components: dict[str, float] | None = None  # the score breakdown (keyword BM25, semantic cosine)

    def to_json(self) -> dict[str, Any]:
        data = self.event.to_json(text=self.snippet)
        head = {"id": data.pop("id"), "score": round(self.score, 6)}
        if self.components is not None:
            head["score_breakdown"] = {k: round(v, 6) for k, v in self.components.items()}
        return {**head, **data}


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


MODES = ("keyword", "semantic", "hybrid")
DENSE_WEIGHT = 0.3  # LoCoMo dev: a min-max blend with a small dense weight beats rank fusion (bench/README.md)
CANDIDATES = 50


@dataclass(slots=True)
class Retrieval:
    """What search needs besides the connection: the query tokenizer and, when available, semantics."""

    tokenizer: QueryTokenizer
    embedder: Embedder | None = None
    index: VectorIndex | None = None
    unavailable: str | None = None  # why semantic search is off, in one sentence


def _minmax(scores: dict[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {k: (v - low) / span if span > 0 else 1.0 for k, v in scores.items()}


def search(
    con: duckdb.DuckDBPyConnection,
    retrieval: Retrieval,
    query: str,
    filters: KeywordFilters,
    limit: int,
    mode: str = "hybrid",
) -> tuple[list[SearchHit], dict[str, Any]]:
    """Keyword, semantic or hybrid search. If the semantic part cannot run, keyword results still come
    back and ``meta.degraded`` says why."""
    started = time.perf_counter()
    stems = retrieval.tokenizer.terms(query)
    degraded: str | None = None
    semantic_ok = retrieval.embedder is not None and retrieval.index is not None and retrieval.unavailable is None
    if mode != "keyword" and not semantic_ok:
        degraded = retrieval.unavailable or "Semantic search is not available."
    want = max(limit, CANDIDATES) if mode == "hybrid" else limit
    kw = dict(keyword.search(con, stems, filters, want)) if mode != "semantic" or not semantic_ok else {}
    sem: dict[int, float] = {}
    if mode != "keyword" and semantic_ok:
        assert retrieval.embedder is not None and retrieval.index is not None
        try:
            sem = dict(semantic_candidates(con, retrieval.embedder, retrieval.index, query, filters, want))
        except Exception as exc:  # the model or index failed now: keyword results still answer
            degraded = f"Semantic search failed ({type(exc).__name__}); keyword results only."
            if not kw:
                kw = dict(keyword.search(con, stems, filters, want))
    if sem and kw and mode == "hybrid":
        kw_n, sem_n = _minmax(kw), _minmax(sem)
        scores = {
            i: (1 - DENSE_WEIGHT) * kw_n.get(i, 0.0) + DENSE_WEIGHT * sem_n.get(i, 0.0) for i in set(kw) | set(sem)
        }
    else:
        scores = sem or kw
    ranked = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:limit]
    events = events_by_ids(con, [event_id for event_id, _ in ranked])
    hits = [
        SearchHit(
            events[i], score, snippet(events[i].text, stems), {"keyword": kw.get(i, 0.0), "semantic": sem.get(i, 0.0)}
        )
        for i, score in ranked
        if i in events
    ]
    meta = {
        "query": query,
        "mode": mode if not degraded else "keyword",
        "requested_mode": mode,
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
    if degraded:
        meta["degraded"] = degraded
    if not stems and not sem:
        meta["note"] = "The query has no searchable words."
    return hits, meta
