"""Hybrid ranking: keyword (BM25) and semantic (cosine) candidates fused into one score, with the
conversation around each event, the time the query names, recency and scope as signals.

Every weight below was chosen on the LoCoMo dev split (bench/locomo_eval.py, docs/architecture.md has
the table) and kept only when it also makes sense for a coding session:

1. ``keyword`` is the event's BM25 plus :attr:`Weights.next_keyword` times the BM25 of the event right
   after it: a question is relevant when its answer matches. Normalised by the best candidate's.
2. ``semantic`` is the best chunk's cosine, min-max normalised over the semantic candidates.
3. ``base = (1 - dense) * keyword + dense * semantic``, plus :attr:`Weights.date` when the event falls in
   a day or month the query names, plus a recency bonus that halves every ``recency_half_life_days`` of
   age (counted back from the newest candidate, so that the same store always gives the same ranking),
   plus a bonus for the preferred session or project (scope as a signal rather than a filter).
4. Session prior: every candidate gains :attr:`Weights.session` times the best ``base`` in its session,
   since what one session discussed tends to be asked about together.
5. Follow-up: the event right after a hit (usually its answer or result) scores at least
   :attr:`Weights.follow` times the hit's score, and joins the candidates if it was not among them.

Confidence classes cannot come from the fused score: it is relative to the other candidates (the top
hit of every query scores about the same), which is why the seed's absolute thresholds never fired. They
come from the absolute evidence behind a hit, calibrated on how often hits at each level were real
evidence on LoCoMo dev (:func:`confidence`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from claude_memory.core.timeexpr import TimeWindow


@dataclass(frozen=True, slots=True)
class Candidate:
    session_id: str
    project: str | None
    ts: datetime | None
    prev_id: int | None
    next_id: int | None


@dataclass(frozen=True, slots=True)
class Weights:
    dense: float = 0.5
    next_keyword: float = 0.4
    date: float = 0.3
    session: float = 0.5
    follow: float = 0.8
    recency: float = 0.02
    recency_half_life_days: float = 30.0
    same_session: float = 0.1
    same_project: float = 0.05


@dataclass(frozen=True, slots=True)
class Scope:
    """Where the asker is: events here rank a little higher (filters, not this, exclude the rest)."""

    project: str | None = None
    session_id: str | None = None


@dataclass(slots=True)
class Ranked:
    event_id: int
    score: float
    breakdown: dict[str, float] = field(default_factory=dict)
    follows: int | None = None  # the hit this event was promoted after, as its follow-up


def _normalised(scores: dict[int, float], *, floor: bool) -> dict[int, float]:
    """Scores divided by the best (``floor=False``: BM25 has a natural zero) or min-max scaled."""
    if not scores:
        return {}
    high = max(scores.values())
    low = min(scores.values()) if floor else 0.0
    span = high - low
    return {k: (v - low) / span if span > 0 else 1.0 for k, v in scores.items()}


def _recency(ts: datetime | None, now: datetime, half_life_days: float) -> float:
    if ts is None:
        return 0.0
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    age_days = max(0.0, (now - ts).total_seconds() / 86400)
    return math.pow(0.5, age_days / half_life_days)


def fuse(
    keyword: dict[int, float],
    semantic: dict[int, float],
    candidates: dict[int, Candidate],
    *,
    coverage: dict[int, float] | None = None,
    window: TimeWindow | None = None,
    scope: Scope | None = None,
    now: datetime | None = None,
    weights: Weights | None = None,
) -> list[Ranked]:
    """All candidates, best first (ties by id). ``candidates`` holds the session facts of every event
    in ``keyword`` or ``semantic`` that the filters admit, and of their neighbours; other ids drop out."""
    w = weights or Weights()
    if now is None:  # recency relative to the newest candidate: the same store gives the same ranking
        times = [c.ts if c.ts.tzinfo else c.ts.replace(tzinfo=UTC) for c in candidates.values() if c.ts is not None]
        now = max(times, default=datetime.now(UTC))
    ids = {i for i in (*keyword, *semantic) if i in candidates}
    for i in [i for i in keyword if i in candidates]:  # a question whose answer matched
        prev_id = candidates[i].prev_id
        if prev_id is not None and prev_id in candidates:
            ids.add(prev_id)

    def coverage_of(i: int) -> float:
        return coverage.get(i, 0.0) if coverage else 0.0

    def next_keyword(i: int) -> float:
        nxt = candidates[i].next_id
        return keyword.get(nxt, 0.0) if nxt is not None else 0.0

    kw_context = {i: keyword.get(i, 0.0) + w.next_keyword * next_keyword(i) for i in ids}
    kw_norm = _normalised({i: s for i, s in kw_context.items() if s > 0}, floor=False)
    sem_norm = _normalised({i: s for i, s in semantic.items() if i in ids}, floor=True)
    use_dense = w.dense if sem_norm and kw_norm else (1.0 if sem_norm else 0.0)

    base: dict[int, float] = {}
    parts: dict[int, dict[str, float]] = {}
    for i in ids:
        c = candidates[i]
        in_window = window is not None and window.contains(c.ts)
        recency = w.recency * _recency(c.ts, now, w.recency_half_life_days)
        scoped = 0.0
        if scope is not None:
            if scope.session_id is not None and c.session_id == scope.session_id:
                scoped = w.same_session
            elif scope.project is not None and c.project == scope.project:
                scoped = w.same_project
        base[i] = (
            (1 - use_dense) * kw_norm.get(i, 0.0)
            + use_dense * sem_norm.get(i, 0.0)
            + (w.date if in_window else 0.0)
            + recency
            + scoped
        )
        parts[i] = {
            "keyword": keyword.get(i, 0.0),
            "coverage": coverage_of(i),
            "keyword_next": next_keyword(i),
            "semantic": semantic.get(i, 0.0),
            "date": 1.0 if in_window else 0.0,
            "recency": recency,
            "scope": scoped,
        }

    best_in_session: dict[str, float] = {}
    for i, score in base.items():
        session = candidates[i].session_id
        best_in_session[session] = max(best_in_session.get(session, 0.0), score)
    scores = {i: s + w.session * best_in_session[candidates[i].session_id] for i, s in base.items()}
    for i in ids:
        parts[i]["session"] = w.session * best_in_session[candidates[i].session_id]

    final = dict(scores)
    follows: dict[int, int] = {}
    for i, score in sorted(scores.items(), key=lambda x: (-x[1], x[0])):
        nxt = candidates[i].next_id
        if nxt is None or nxt not in candidates:
            continue
        promoted = w.follow * score
        if promoted > final.get(nxt, 0.0):
            final[nxt] = promoted
            parts.setdefault(
                nxt,
                {"keyword": keyword.get(nxt, 0.0), "coverage": coverage_of(nxt), "semantic": semantic.get(nxt, 0.0)},
            )
            parts[nxt]["follow"] = promoted
            follows[nxt] = i
    ranked = sorted(final.items(), key=lambda x: (-x[1], x[0]))
    return [Ranked(i, s, parts[i], follows.get(i)) for i, s in ranked]


# Calibrated on LoCoMo dev (997 questions, top 10 hybrid results each; base rate: 9% of results are an
# evidence turn, 22% an evidence turn or its neighbour). Query coverage >= 0.8 (the top ~5% of results):
# 41% evidence, 53% with neighbours. Coverage >= 0.45 (top ~30%): 20% / 31%. Cosine alone predicts little
# there (its top 5%: 17% / 33%), so it can make a hit "suggested", never "high".
HIGH_COVERAGE = 0.8
SUGGESTED_COVERAGE = 0.45
SUGGESTED_COSINE = 0.62
CLASSES = ("none", "suggested", "high")


def confidence(ranked: Ranked, by_id: dict[int, Ranked] | None = None) -> str:
    """high | suggested | none for one result, from its absolute evidence (not its relative score). A
    follow-up is one class below the hit it follows, unless its own evidence says more."""
    parts = ranked.breakdown
    cover, cosine = parts.get("coverage", 0.0), parts.get("semantic", 0.0)
    own = 2 if cover >= HIGH_COVERAGE else 1 if cover >= SUGGESTED_COVERAGE or cosine >= SUGGESTED_COSINE else 0
    if ranked.follows is not None and by_id and ranked.follows in by_id:
        own = max(own, CLASSES.index(confidence(by_id[ranked.follows])) - 1)
    return CLASSES[own]
