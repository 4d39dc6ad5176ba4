"""Search as a service call: BM25 (in memory, :mod:`claude_memory.store.postings`) and semantic candidates
gathered (the query is embedded on a second thread meanwhile), every candidate and its neighbours scored by
their exact and contextual cosines (:func:`claude_memory.service.semantic.similarities`), ranked by
:mod:`claude_memory.core.ranking`, hydrated, with snippets around the matched terms."""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt

from claude_memory.core.disclosure import excerpt
from claude_memory.core.duplicates import fold
from claude_memory.core.filters import EventFilters
from claude_memory.core.ranking import (
    HYBRID,
    KEYWORD,
    Facts,
    Floats,
    Fused,
    Scope,
    Weights,
    asks_about_user,
    asks_to_aggregate,
    confidence,
    fuse,
)
from claude_memory.core.timeexpr import TimeWindow, asks_when, find_window
from claude_memory.core.tokens import QueryTokenizer
from claude_memory.service.semantic import embed_query, semantic_candidates, similarities
from claude_memory.store.embedder import Embedder
from claude_memory.store.eventmap import EventMap
from claude_memory.store.postings import PostingsIndex
from claude_memory.store.queries import StoredEvent, events_by_ids
from claude_memory.store.vector_index import VectorIndex

SNIPPET_CHARS = 240  # of the text around what matched (core.disclosure.excerpt)
FOLD_SLACK = 5  # hits ranked past the limit, to fill the places of near-duplicates folded into better ones


@dataclass(slots=True)
class SearchHit:
    event: StoredEvent
    score: float
    snippet: str
    components: dict[str, float] | None = None  # the score breakdown (see core.ranking.fuse)
    confidence: str = "none"  # high | suggested | none (claude_memory.core.ranking.confidence)
    duplicates: tuple[StoredEvent, ...] = ()  # lower-ranked events with the same (or nearly the same) text

    def to_json(self) -> dict[str, Any]:
        data = self.event.to_json(text=self.snippet)
        head: dict[str, Any] = {"id": data.pop("id"), "score": round(self.score, 6), "confidence": self.confidence}
        if self.components is not None:
            head["score_breakdown"] = {k: round(v, 6) for k, v in self.components.items()}
        return {**head, **data, "duplicates": [_duplicate(e) for e in self.duplicates]}


def _duplicate(event: StoredEvent) -> dict[str, Any]:
    data = event.to_json()
    return {key: data[key] for key in ("id", "citation", "timestamp", "session_id", "project")}


def collapse(hits: list[SearchHit]) -> list[SearchHit]:
    """The hits, near-duplicates folded into the best ranked of each group (:mod:`claude_memory.core.duplicates`)."""
    groups = fold([h.event.text for h in hits])
    return [replace(hits[g[0]], duplicates=tuple(hits[n].event for n in g[1:])) for g in groups]


MODES = ("keyword", "semantic", "hybrid")
CANDIDATES = 200  # per component; fusion, session prior and follow-ups need more than the page shown


@dataclass(slots=True)
class Retrieval:
    """What search needs besides the connection: the query tokenizer and, when available, semantics."""

    tokenizer: QueryTokenizer
    embedder: Embedder | None = None
    index: VectorIndex | None = None
    unavailable: str | None = None  # why semantic search is off, in one sentence
    events: EventMap = field(default_factory=EventMap)  # refreshed by search
    postings: PostingsIndex = field(default_factory=PostingsIndex)  # BM25 in memory, refreshed by search
    pool: ThreadPoolExecutor | None = None  # one thread for the query embedding (else one per search: ~1 ms)
    changes: int | None = None  # the store's write count in this process (store.writer.Changes), if it is the writer
    weights: Weights = HYBRID  # the ranking when semantic candidates are in
    keyword_weights: Weights = KEYWORD  # the ranking of keyword search alone (keyword mode, or no model)


@dataclass(frozen=True, slots=True)
class Candidates:
    """What :func:`gather` found for a query, as :func:`claude_memory.core.ranking.fuse` takes it: the rows (every
    keyword or semantic hit the filters admit and their neighbours) and their components, NaN where absent."""

    stems: list[str]
    facts: Facts
    keyword: Floats  # BM25
    semantic: Floats  # contextual cosine (fused)
    coverage: Floats  # share of the query's idf mass matched (0 where not a keyword hit)
    cosine: Floats  # plain cosine (reported, and decides confidence)
    chunks: Floats  # how many chunks the semantic score is the best of (0 where none)
    window: TimeWindow | None
    asks_when: bool
    about_user: bool  # the query is a question about the user (core.ranking.asks_about_user)
    aggregates: bool  # the query counts or orders several facts (core.ranking.asks_to_aggregate)
    semantic_hits: int  # rows found by the k-NN search
    weights: Weights  # the ranking's: the hybrid one, or the keyword one when no semantic part runs
    degraded: str | None = None  # why the semantic part did not run, in one sentence
    partial: str | None = None  # why stored vectors could not score every row

    def fuse(self, weights: Weights | None = None) -> Fused:
        """Rank the candidates (with other ``weights`` than the ones they were gathered for, to fit them)."""
        return fuse(
            self.facts,
            self.keyword,
            self.semantic,
            self.coverage,
            cosine=self.cosine,
            chunks=self.chunks,
            window=self.window,
            asks_when=self.asks_when,
            about_user=self.about_user,
            aggregates=self.aggregates,
            weights=weights or self.weights,
        )


def level(con: duckdb.DuckDBPyConnection, retrieval: Retrieval) -> bool:
    """Bring the in-memory views (event map, BM25 postings) level with the store, as every search does first; True
    if they were behind. New events cost ~0.06 s at a million events (merged into the map, their postings appended,
    the postings placed again), a forget ~1 s more (the map read whole): the service does it in its quiet moments
    (:meth:`Memory.level_search`) rather than in the next prompt's search."""
    before = retrieval.events.generation
    retrieval.postings.refresh(con, retrieval.events.refresh(con, retrieval.changes))
    retrieval.postings.place(retrieval.events)
    return retrieval.events.generation != before


def gather(
    con: duckdb.DuckDBPyConnection,
    retrieval: Retrieval,
    query: str,
    filters: EventFilters,
    limit: int,
    mode: str = "hybrid",
    scope: Scope | None = None,
    as_of: datetime | None = None,
) -> Candidates:
    """Keyword and semantic candidates of ``query`` (per ``mode``) and every component ranking uses. If the
    semantic part cannot run, keyword candidates still come back and ``degraded`` says why. Relative dates in the
    query ("yesterday", "a week ago") count from ``as_of`` (a naive time is local, as on the command line), else
    from now."""
    stems = retrieval.tokenizer.terms(query)
    degraded: str | None = None
    semantic_ok = retrieval.embedder is not None and retrieval.index is not None and retrieval.unavailable is None
    if mode != "keyword" and not semantic_ok:
        degraded = retrieval.unavailable or "Semantic search is not available."
    weights = retrieval.keyword_weights if mode == "keyword" or not semantic_ok else retrieval.weights
    want = max(limit, CANDIDATES)
    sem: dict[int, float] = {}
    vector: npt.NDArray[np.float32] | None = None

    def keyword_part() -> list[tuple[int, float, float]]:
        """BM25 hits the filters admit: (event id, score, query coverage)."""
        return retrieval.postings.search(stems, filters, want, retrieval.events, weights.k1, weights.b)

    # The in-memory views are brought level with the store first: that asks DuckDB, which is 3x slower while the
    # model runs beside it on a 2-core machine. Then the worker thread embeds the query (the model releases the
    # GIL) while this thread runs BM25 and reads the keyword hits' vectors.
    level(con, retrieval)
    with contextlib.ExitStack() as stack:
        pool = retrieval.pool or stack.enter_context(ThreadPoolExecutor(max_workers=1))
        embedding: Future[npt.NDArray[np.float32]] | None = None
        if mode != "keyword" and semantic_ok:
            assert retrieval.embedder is not None
            embedding = pool.submit(embed_query, retrieval.embedder, query)
        kw_hits = keyword_part() if mode != "semantic" or not semantic_ok else []
        if embedding is not None:
            assert retrieval.index is not None
            try:
                vector = embedding.result()
                sem = dict(semantic_candidates(retrieval.index, retrieval.events, vector, filters, want))
            except Exception as exc:  # the model or index failed now: keyword results still answer
                degraded = f"Semantic search failed ({type(exc).__name__}); keyword results only."
                vector = None
                if not kw_hits:
                    kw_hits = keyword_part()
    kw = {i: score for i, score, _ in kw_hits}
    facts = retrieval.events.facts(list({**kw, **sem}), filters, scope)
    cosine = context = facts.column(sem)  # the k-NN search's cosines, for rows the copy cannot score
    chunks = np.where(np.isnan(cosine), 0.0, 1.0)
    partial: str | None = None
    if vector is not None and retrieval.index is not None:
        # every row, keyword hits and neighbours too, by its exact and its contextual cosine
        try:
            found = similarities(retrieval.index, retrieval.events, facts, vector, weights.context)
        except Exception as exc:  # the vector copy failed now: the k-NN cosines still rank (mode unchanged)
            partial = f"Scoring by stored vectors failed ({type(exc).__name__}); the index's cosines were used."
        else:
            cosine = np.where(np.isnan(found.cosine), cosine, found.cosine)
            context = np.where(np.isnan(found.context), context, found.context)
            chunks = np.where(found.chunks > 0, found.chunks, chunks)
    return Candidates(
        stems,
        facts,
        facts.column(kw),
        context,
        facts.column({i: c for i, _, c in kw_hits}, 0.0),
        cosine,
        chunks,
        find_window(query, as_of.astimezone(UTC) if as_of else datetime.now(UTC)),
        asks_when(query),
        asks_about_user(query),
        asks_to_aggregate(query),
        len(sem),
        weights,
        degraded,
        partial,
    )


def search(
    con: duckdb.DuckDBPyConnection,
    retrieval: Retrieval,
    query: str,
    filters: EventFilters,
    limit: int,
    mode: str = "hybrid",
    scope: Scope | None = None,
    as_of: datetime | None = None,
) -> tuple[list[SearchHit], dict[str, Any]]:
    """Keyword, semantic or hybrid search (:func:`gather`), ranked by :func:`claude_memory.core.ranking.fuse`.
    If the semantic part cannot run, keyword results still come back and ``meta.degraded`` says why."""
    started = time.perf_counter()
    found = gather(con, retrieval, query, filters, limit, mode, scope, as_of)
    stems, window, degraded, partial = found.stems, found.window, found.degraded, found.partial
    fused = found.fuse()
    ranked = fused.top(limit + FOLD_SLACK)  # a few more, for the near-duplicates folded away
    events = events_by_ids(con, [r.event_id for r in ranked])
    hits = collapse(
        [SearchHit(events[r.event_id], r.score, "", r.breakdown, confidence(r)) for r in ranked if r.event_id in events]
    )[:limit]
    for hit in hits:  # the snippets of the hits shown only
        hit.snippet = excerpt(hit.event.text, stems, SNIPPET_CHARS)
    meta = {
        "query": query,
        "mode": mode if not degraded else "keyword",
        "requested_mode": mode,
        "terms": stems,
        "count": len(hits),
        "confidence": hits[0].confidence if hits else "none",
        "gap": round(hits[0].score - hits[1].score, 6) if len(hits) > 1 else None,
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
    if window is not None:
        meta["time_window"] = {"text": window.text, "start": window.start.isoformat(), "end": window.end.isoformat()}
    if degraded or partial:
        meta["degraded"] = degraded or partial
    if not stems and not found.semantic_hits:
        meta["note"] = "The query has no searchable words."
    return hits, meta
