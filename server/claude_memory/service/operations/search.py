"""Search: ranked hits (``search``), the one-line index of layer 1 (``index``), and the hits expanded within a
token budget (``smart_search``)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory.core.disclosure import DEFAULT_BUDGET
from claude_memory.service.contract import Engine, Result, operation
from claude_memory.service.operations.common import Event, Filters, Json, Mode

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class SearchParams(Filters):
    query: str = Field(min_length=1, max_length=100_000, description="Words to look for.")
    limit: int = Field(default=10, ge=1, le=1000, description="How many results.")
    mode: Mode = Field(default="hybrid", description="keyword (BM25), semantic (embeddings) or hybrid (both).")
    as_of: datetime | None = Field(
        default=None,
        description="When the question is asked (ISO): relative dates in it ('yesterday', '3 days ago', 'last "
        "Tuesday') count from this time instead of now.",
    )


class SmartSearchParams(SearchParams):
    budget: int = Field(default=DEFAULT_BUDGET, ge=0, le=10_000_000, description="Tokens the expansion may use.")
    via: str = Field(default="service", max_length=40, description="Which face asked (recorded with citation uses).")


class Hit(Event):
    score: float
    confidence: str
    score_breakdown: dict[str, float] | None = None
    duplicates: list[Json] = Field(default_factory=list)  # events of (nearly) the same text, folded into it


class SearchResult(Result):
    results: list[Hit]
    meta: Json


class IndexEntry(Result):
    rank: int
    id: int
    citation: str | None
    summary: str
    score: float
    confidence: str
    type: str
    timestamp: str | None
    session_id: str
    project: str | None
    tokens: int
    duplicates: list[str] = Field(default_factory=list)  # citations of near-duplicates folded into it


class IndexResult(Result):
    results: list[IndexEntry]
    meta: Json


class SmartEntry(IndexEntry):
    layer: str
    details: Json | None = None


class SmartResult(Result):
    results: list[SmartEntry]
    timeline: Json | None
    meta: Json
    text: str


@operation("search", SearchParams, SearchResult)
def search(engine: Engine, p: SearchParams, progress: Progress) -> dict[str, Any]:
    """Ranked hits with their snippet, source and score breakdown (the shape of ``search --json``)."""
    hits, meta = engine.memory.search(p.query, p.filters(), p.limit, p.mode, p.as_of)
    return {"results": [h.to_json() for h in hits], "meta": meta}


@operation("index", SearchParams, IndexResult)
def index(engine: Engine, p: SearchParams, progress: Progress) -> dict[str, Any]:
    """Layer 1: one line per hit (rank, citation, summary, score, confidence, tokens)."""
    return engine.memory.index(p.query, p.filters(), p.limit, p.mode, p.as_of).to_json()


@operation("smart_search", SmartSearchParams, SmartResult)
def smart_search(engine: Engine, p: SmartSearchParams, progress: Progress) -> dict[str, Any]:
    """Layer 1 expanded within the budget (``search --smart --json``), plus the prompt-ready ``text``."""
    found = engine.memory.smart_search(p.query, p.filters(), p.limit, p.mode, budget=p.budget, via=p.via, as_of=p.as_of)
    return {**found.to_json(), "text": found.text()}
