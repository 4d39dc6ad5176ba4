"""Hybrid ranking: keyword (BM25) and semantic (cosine) candidates fused into one score, with the
conversation around each event, the time the query names, recency and scope as signals.

The weights were first chosen on the LoCoMo dev split, then measured and refitted on LoCoMo dev and LongMemEval
dev together (bench/dev_eval.py, bench/fit_weights.py; docs/architecture.md has the tables): :data:`HYBRID` ranks
when semantic candidates are in, :data:`KEYWORD` ranks keyword search alone. Every signal is kept only where it
does not lose on either set and makes sense for a coding session:

1. ``keyword`` is the event's BM25 times its query coverage (the share of the query's idf mass it
   matches) to the power :attr:`Weights.coordination`, plus :attr:`Weights.next_keyword` times the same
   for the event right after it: a question is relevant when its answer matches. Normalised by the best
   candidate's. The coverage factor (Lucene's old "coord") prefers an event that matches most of the
   question over one that repeats a single rare word: LoCoMo dev hybrid r@5/@10 66.3/76.7 -> 67.9/77.1
   (exponents 0.45-1.0 all gave 67.8-68.1 / 77.0-77.2).
2. ``semantic`` is the best chunk's contextual cosine (its vector mixed with the neighbouring events',
   :attr:`Weights.context`), min-max normalised over the candidates that have one, less
   :attr:`Weights.chunk_penalty` per doubling of the chunks that best was taken from: the best of a long
   answer's eight chunks is close to the query by chance more often than a short turn's one chunk, so without it
   long turns crowd out the short ones that state facts (LongMemEval dev hybrid 65.3 / 75.9 -> 70.0 / 81.8 with
   the penalty alone; LoCoMo's turns are one chunk each).
3. ``base = (1 - dense) * keyword + dense * semantic``, plus :attr:`Weights.date` when the event falls in
   a day or month the query names, plus a recency bonus that halves every ``recency_half_life_days`` of
   age (counted back from the newest candidate, so that the same store always gives the same ranking),
   plus a bonus for the preferred session or project (scope as a signal rather than a filter), plus two
   priors on the event's text: up to :attr:`Weights.substance` for its length (nothing for a few words
   such as "thanks, sounds great", the whole from ``SUBSTANCE_TERMS[1]`` indexed terms on: a short
   reply rarely holds what is asked for), and :attr:`Weights.names_time` when the query asks "when" or
   "how long" and the event names a time ("last Friday", "three years ago"); and :attr:`Weights.own_words` for
   the user's own prompts when the query is a question about the user (:func:`asks_about_user`: "how many
   engineers do I lead?", not the first-person statement most prompts to Claude are): what the user did or has
   is in what the user wrote (172 of LongMemEval dev's 182 evidence turns; LoCoMo asks about third persons).
4. Session prior: every candidate gains :attr:`Weights.session` times the best ``base`` in its session,
   since what one session discussed tends to be asked about together.
5. A short question (it ends with "?" and has at most :data:`SHORT_QUESTION_TERMS` indexed terms) loses
   :attr:`Weights.question` from its own score: what was asked is rarely the memory wanted, its answer is.
6. Follow-ups: the event right after a hit (usually its answer or result) scores at least
   :attr:`Weights.follow` times the hit's score (:attr:`Weights.follow_question` after a short question,
   without its penalty; :attr:`Weights.follow_user` for a question about the user), and joins the candidates if
   it was not among them; the event after that follow-up scores at least as much as the follow-up was promoted to.

Confidence classes cannot come from the fused score: it is relative to the other candidates (the top
hit of every query scores about the same), which is why the seed's absolute thresholds never fired. They
come from the absolute evidence behind a hit, calibrated on how often hits at each level were real
evidence on LoCoMo dev (:func:`confidence`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from claude_memory.core.timeexpr import TimeWindow

Int64s = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
NO_TIME = int(np.iinfo(np.int64).min)  # a row without a timestamp
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Facts:
    """What ranking knows of its candidates, one row each (columns of equal length): every keyword or
    semantic hit the filters admit, and the nearest admitted event on each side of those in their session.
    Columns rather than objects: a hybrid query has about a thousand candidates, and ranking them in numpy
    takes a fraction of the time a Python loop did."""

    ids: Int64s
    session: Int64s  # session codes: rows with equal codes are of one session
    ts: Int64s  # microseconds since the epoch (UTC), NO_TIME when unknown
    length: Int64s  # indexed terms of the event's text (its BM25 length)
    question: Bools  # the text ends with a question mark
    names_time: Bools  # the text names a time: a relative day, weekday, month or year
    user: Bools  # the user's own words (a prompt), not Claude's answer or a tool's output
    prev: Int64s  # row of the previous admitted event of the session; -1 when there is none among the rows
    next: Int64s  # likewise, the next one
    same_session: Bools  # in the asker's session (see Scope)
    same_project: Bools  # in the asker's project

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, values: dict[int, float], default: float = np.nan) -> Floats:
        """``values`` (by event id) as a column aligned with the rows; ``default`` for rows without one
        (ids that are not rows are left out)."""
        out = np.full(len(self), default)
        if not values or not len(self):
            return out
        ids = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
        scores = np.fromiter(values.values(), dtype=np.float64, count=len(values))
        by_id = np.argsort(self.ids)
        found = np.searchsorted(self.ids, ids, sorter=by_id).clip(0, len(self) - 1)
        rows = by_id[found]
        hit = self.ids[rows] == ids
        out[rows[hit]] = scores[hit]
        return out


@dataclass(frozen=True, slots=True)
class Weights:
    k1: float = 0.9  # BM25 of the keyword candidates (store.keyword's defaults: Anserini's)
    b: float = 0.4
    dense: float = 0.5
    context: float = 0.35  # the neighbours' share in a chunk's contextual vector (service.semantic.similarities)
    coordination: float = 0.5
    next_keyword: float = 0.4
    date: float = 0.3
    session: float = 0.5
    follow: float = 0.8
    follow_question: float = 0.9
    substance: float = 0.1
    question: float = 0.1
    names_time: float = 0.2
    recency: float = 0.02
    recency_half_life_days: float = 30.0
    same_session: float = 0.1
    same_project: float = 0.05
    chunk_penalty: float = 0.0  # off the normalised semantic score per doubling of the chunks its best is taken from
    own_words: float = 0.0  # for the user's own prompts when the query is a question about the user
    follow_user: float = 0.5  # follow and follow_question when the query is a question about the user
    spread: float = 0.0  # a question that counts or orders (asks_to_aggregate): off a hit per better one of its session


# The two rankings search uses, fitted on LoCoMo dev and LongMemEval dev together (bench/fit_weights.py; the
# figures are in docs/architecture.md). Keyword search alone, without cosines to tell a long answer that mentions
# every query word from the short turn that holds the fact, needs BM25's usual length normalisation and leans less
# on query coverage; hybrid ranking keeps the flatter BM25 that LoCoMo's short turns prefer.
HYBRID = Weights(
    dense=0.625,
    coordination=0.25,
    next_keyword=0.0,  # fitted to 0 once semantics and the chunk penalty were in: 0.0 / 0.0 on both sets
    date=0.45,  # fitted at 0.375; 0.45 keeps LoCoMo's recall@10 at 80.0 (79.9), LongMemEval unchanged
    session=0.25,
    substance=0.15,
    question=0.05,
    recency=0.0,  # fitted to 0: 0.0 / 0.0 on both sets (0.02: -0.1 / -0.1 and 0.0 / -0.5)
    chunk_penalty=0.3,  # LongMemEval dev 65.3 / 75.9 -> 70.0 / 81.8 on its own, LoCoMo unchanged (one chunk a turn)
    own_words=0.2,  # LongMemEval dev 74.8 / 84.9 -> 79.3 / 87.7 (0.3: 79.8 / 89.9, 0.5: 80.3 / 90.4); LoCoMo unchanged
    spread=0.1,  # LongMemEval dev 80.8 / 89.1 -> 80.4 / 90.1, LoCoMo 80.0 -> 80.2 (top-40 re-rank: 0.05 90.5, 0.2 87.5)
)
KEYWORD = Weights(
    k1=1.2,
    b=0.75,
    coordination=0.0,  # fitted at 0.19, it cost LongMemEval 0.6 / 0.9 (LoCoMo gained 0.3 / 0.9): dropped
    next_keyword=0.3,
    date=0.45,
    follow=0.6,
    substance=0.2,
    question=0.05,
    names_time=0.25,
    own_words=0.3,  # LongMemEval dev 71.8 / 80.9 -> 76.8 / 85.4 (0.2: 74.5 / 84.2, 0.4: 78.7 / 86.9); LoCoMo unchanged
)


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
    followed: Ranked | None = None  # the hit this event was promoted after, as its follow-up

    @property
    def follows(self) -> int | None:
        return self.followed.event_id if self.followed is not None else None


# The length prior grows with the log of an event's indexed terms from nothing at the first to all of
# Weights.substance at the second (LoCoMo dev: a tenth of the events have 7 terms or fewer, the median 14).
SUBSTANCE_TERMS = (4, 25)
SHORT_QUESTION_TERMS = 20


# A question about the user: in the first person ("my", "did I", "I've") and asked as a question (it ends with "?"
# or starts with a question word). What the user said or did is in the user's own prompts. Neither a statement in the
# first person ("I keep getting this error": most prompts to Claude read so) nor a how-to ("how do I exit vim", "should
# I squash?", whose "I" is anyone) is one, nor a question about what Claude said ("which dish did you recommend?",
# "remind me what you changed"): that is in Claude's answers.
# (not the "i" of "I/O" or "i.e.")
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b(?![/.-]\w)|\bi'(?:m|ve|d|ll)\b", re.IGNORECASE)
_HOW_TO = re.compile(
    r"\b(?:how|what|where|which|when|can|could|should|would|shall|may|might)\s+(?:(?:do|does|can|could|should|would|"
    r"shall|may)\s+)?i\b",
    re.IGNORECASE,
)
_CLAUDE_SAID = re.compile(
    r"\byou\s+(?:\w+\s+)?(?:said|told|mentioned|recommended|suggested|wrote|gave|listed|explained|proposed|shared|"
    r"provided|changed)\b|\bdid you\s+(?:say|tell|mention|recommend|suggest|write|give|list|explain|propose|change)\b|"
    r"\bremind me\b",
    re.IGNORECASE,
)
_ASKS = re.compile(
    r"\s*(?:what|which|where|when|who|whom|whose|how|why|did|do|does|have|has|had|was|were|is|are|am|can|could|"
    r"should|would|will)\b",
    re.IGNORECASE,
)


_AGGREGATES = re.compile(
    r"\b(how many|how much|total|altogether|combined|in all|the order|order of|list all|all the)\b", re.I
)


def asks_to_aggregate(query: str) -> bool:
    """Whether ``query`` counts, sums or orders several facts ("how many instruments do I own?", "the order of the
    museums I visited"), whose answer is spread over several conversations (:attr:`Weights.spread`)."""
    return _AGGREGATES.search(query) is not None


def asks_about_user(query: str) -> bool:
    """Whether ``query`` is a question about the user (:attr:`Weights.own_words`)."""
    text = query.replace("\u2019", "'")
    asked = text.rstrip().endswith("?") or _ASKS.match(text) is not None
    if not asked or _CLAUDE_SAID.search(text):
        return False
    return _FIRST_PERSON.search(_HOW_TO.sub(" ", text)) is not None


def _earlier_of_group(codes: Int64s) -> Int64s:
    """For each position, how many earlier positions hold the same code."""
    by = np.argsort(codes, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(codes[by])) + 1]
    within = np.arange(len(codes)) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))
    earlier = np.empty(len(codes), dtype=np.int64)
    earlier[by] = within
    return earlier


def micros(when: datetime) -> int:
    """An aware datetime (naive means UTC) as microseconds since the epoch, like :attr:`Facts.ts`."""
    aware = when if when.tzinfo else when.replace(tzinfo=UTC)
    return (aware - _EPOCH) // _MICROSECOND


def _normalised(scores: Floats, present: Bools, *, floor: bool) -> Floats:
    """Scores divided by the best present one (``floor=False``: BM25 has a natural zero) or min-max
    scaled; 0 where not present."""
    out = np.zeros(len(scores))
    if not present.any():
        return out
    high = scores[present].max()
    low = scores[present].min() if floor else 0.0
    span = high - low
    out[present] = (scores[present] - low) / span if span > 0 else 1.0
    return out


@dataclass(frozen=True, slots=True)
class Fused:
    """The ranking of :func:`fuse`: ``order`` holds the ranked rows of ``facts``, best first (ties by id)."""

    facts: Facts
    order: Int64s
    score: Floats  # final score per row (meaningful for ranked rows)
    parts: dict[str, Floats]  # the score breakdown, per row
    scored: Bools  # rows scored on their own evidence (the others are only follow-ups)
    followed: Int64s  # row each row was promoted after, -1 if none

    def __len__(self) -> int:
        return len(self.order)

    def top(self, limit: int) -> list[Ranked]:
        return [self._ranked(int(row)) for row in self.order[:limit]]

    def _ranked(self, row: int, *, follow: bool = True) -> Ranked:
        names = _SCORED_PARTS if self.scored[row] else _FOLLOW_UP_PARTS
        breakdown = {name: float(self.parts[name][row]) for name in names}
        after = int(self.followed[row])
        if after >= 0:
            breakdown["follow"] = float(self.parts["follow"][row])
        followed = self._ranked(after, follow=False) if follow and after >= 0 else None
        return Ranked(int(self.facts.ids[row]), float(self.score[row]), breakdown, followed)


_SCORED_PARTS = (
    "keyword",
    "coverage",
    "keyword_next",
    "semantic",
    "cosine",
    "chunks",
    "date",
    "time",
    "substance",
    "question",
    "recency",
    "scope",
    "session",
    "own",
)
_FOLLOW_UP_PARTS = ("keyword", "coverage", "semantic", "cosine")


def fuse(
    facts: Facts,
    keyword: Floats,
    semantic: Floats,
    coverage: Floats,
    *,
    cosine: Floats | None = None,
    chunks: Floats | None = None,
    window: TimeWindow | None = None,
    asks_when: bool = False,
    about_user: bool = False,
    aggregates: bool = False,
    now: datetime | None = None,
    weights: Weights | None = None,
) -> Fused:
    """Rank the candidate rows of ``facts``. ``keyword`` is each row's BM25 and ``semantic`` its similarity
    to the query (the contextual cosine of its best chunk), NaN where the row has no value of that component
    (a row with either is ranked on its own, neighbours too); ``coverage`` is the share of the query's idf
    mass a keyword hit matches (0 elsewhere). ``cosine``, the plain cosine (default: ``semantic``), is not
    fused: it is reported, and decides confidence. ``chunks``, per row, is how many chunks ``semantic`` is the best
    of (:attr:`Weights.chunk_penalty`). ``window`` is the day or month the query names, and ``asks_when`` whether it
    asks when something happened or how long it took."""
    w = weights or Weights()
    n = len(facts)
    known = facts.ts != NO_TIME
    if now is not None:
        now_us = micros(now)
    else:  # recency relative to the newest candidate: the same store gives the same ranking
        now_us = int(facts.ts[known].max()) if known.any() else micros(datetime.now(UTC))
    is_kw = ~np.isnan(keyword)
    has_sem = ~np.isnan(semantic)
    kw = np.where(is_kw, keyword, 0.0)
    sem = np.where(has_sem, semantic, 0.0)
    scored = is_kw | has_sem
    questions = facts.prev[is_kw]
    scored[questions[questions >= 0]] = True  # a question whose answer matched

    nxt = facts.next
    kw_covered = kw * np.power(np.clip(coverage, 0.0, 1.0), w.coordination)
    keyword_next = np.where(nxt >= 0, kw_covered[nxt.clip(0)], 0.0)
    kw_context = kw_covered + w.next_keyword * keyword_next
    kw_norm = _normalised(kw_context, scored & (kw_context > 0), floor=False)
    sem_present = scored & has_sem
    sem_norm = _normalised(sem, sem_present, floor=True)
    if chunks is not None and w.chunk_penalty:  # the best of many chunks is high by chance: a long turn's bias
        sem_norm = np.where(sem_present, sem_norm - w.chunk_penalty * np.log2(np.maximum(chunks, 1.0)), sem_norm)
    use_sem, use_kw = sem_present.any(), (scored & (kw_context > 0)).any()
    dense = w.dense if use_sem and use_kw else (1.0 if use_sem else 0.0)

    in_window = np.zeros(n, dtype=bool)
    if window is not None:
        in_window = known & (facts.ts >= micros(window.start)) & (facts.ts < micros(window.end))
    age_days = np.maximum(0.0, (now_us - np.where(known, facts.ts, now_us)) / 1e6 / 86400)
    recency = np.where(known, w.recency * np.power(0.5, age_days / w.recency_half_life_days), 0.0)
    scoped = np.where(facts.same_session, w.same_session, np.where(facts.same_project, w.same_project, 0.0))
    low, high = np.log1p(SUBSTANCE_TERMS)
    substance = w.substance * np.clip((np.log1p(facts.length) - low) / (high - low), 0.0, 1.0)
    timed = np.where(facts.names_time, w.names_time, 0.0) if asks_when else np.zeros(n)
    own = np.where(facts.user, w.own_words, 0.0) if about_user else np.zeros(n)
    base = (1 - dense) * kw_norm + dense * sem_norm + np.where(in_window, w.date, 0.0) + timed + own
    base = np.where(scored, base + substance + recency + scoped, 0.0)

    best_in_session = np.zeros(int(facts.session.max()) + 1 if n else 0)
    np.maximum.at(best_in_session, facts.session[scored], base[scored])
    session = w.session * best_in_session[facts.session]
    score = np.where(scored, base + session, 0.0)
    short_question = facts.question & (facts.length <= SHORT_QUESTION_TERMS)
    question = np.where(short_question, -w.question, 0.0)  # on its own score, not on what it passes on

    # Follow-ups: the event after a scored one scores at least w.follow times it (not counting the user's own-words
    # bonus: the answer after the user's words is not the user's words; LongMemEval dev 78.2 / 87.0 -> 79.3 / 87.7).
    # For a question about the user, only w.follow_user times it: what Claude answered to the user's words is less
    # often what is asked than the user's other words (LongMemEval dev hybrid 79.3 / 87.7 -> 79.8 / 89.6).
    # An event follows one row at most (its nearest admitted predecessor), so no two promotions compete for it...
    final = np.where(scored, score + question, 0.0)
    followed = np.full(n, -1, dtype=np.int64)
    leaders = np.flatnonzero(scored & (nxt >= 0))
    follow_share, after_question = (w.follow_user, w.follow_user) if about_user else (w.follow, w.follow_question)
    promoted = np.where(short_question[leaders], after_question, follow_share) * (score - own)[leaders]
    wins = promoted > final[nxt[leaders]]
    targets = nxt[leaders][wins]
    final[targets] = promoted[wins]
    followed[targets] = leaders[wins]
    follow = np.zeros(n)
    follow[targets] = promoted[wins]
    # ... and so does the event after a promoted follow-up (the answer after a clarifying question, the
    # result after the call): LoCoMo dev r@5/@10 65.6/75.9 -> 66.3/76.7.
    seconds = targets[nxt[targets] >= 0]
    promoted = final[seconds]
    wins = promoted > final[nxt[seconds]]
    targets = nxt[seconds][wins]
    final[targets] = promoted[wins]
    followed[targets] = seconds[wins]
    follow[targets] = promoted[wins]

    ranked = np.flatnonzero(scored | (followed >= 0))
    order = ranked[np.lexsort((facts.ids[ranked], -final[ranked]))]
    if aggregates and w.spread:
        # A question that counts or orders is answered by several conversations: each hit loses w.spread per
        # better-ranked hit of its session, so that the top 10 reaches more of them (LongMemEval dev's "how many"
        # and "in what order" questions keep evidence at ranks 11-15 behind a session's fourth and fifth turns).
        final[order] -= w.spread * _earlier_of_group(facts.session[order])
        order = ranked[np.lexsort((facts.ids[ranked], -final[ranked]))]
    parts = {
        "keyword": kw,
        "coverage": coverage,
        "keyword_next": keyword_next,
        "semantic": sem,
        "cosine": sem if cosine is None else np.where(np.isnan(cosine), 0.0, cosine),
        "chunks": np.zeros(n) if chunks is None else np.where(has_sem, chunks, 0.0),  # the chunk penalty's count
        "date": in_window.astype(np.float64),
        "time": timed,
        "substance": substance,
        "question": question,
        "recency": recency,
        "scope": scoped,
        "session": session,
        "own": own,
        "follow": follow,
    }
    return Fused(facts, order, final, parts, scored, followed)


# Whether a prompt is worth answering from memory at all (core.injection.relevant): the best plain cosine among its
# top hits (all-MiniLM-L6-v2). LoCoMo dev's questions: 95% have a top-8 hit at >= 0.45 (median 0.60); the 205
# prompts of bench/data/irrelevant_prompts.jsonl (acknowledgements, commands, off-topic questions): 1% on a LoCoMo
# store, 4% on ../shared's coding fixtures (0.40: 4% and 6%, 0.50: 1% and 2% but only 87% of the questions).
RELEVANT_COSINE = 0.45
# Without a model: two topic words, a top-8 hit covering 30 % of the query's idf mass and one whose BM25 (KEYWORD's
# k1 and b) is at least 1.3 times the idf of a word found in one event only (a store's scale: ~1.5 at 5 events, 7.9
# at LoCoMo dev's 2,760, 10.8 at LongMemEval dev's 48,881). Passes 75 % of LoCoMo dev's questions and 87 % of
# LongMemEval dev's, and 0.5-2 % of the irrelevant prompts on those stores and the fixtures (1.2: 80 % and 90 %, but
# 4 % on the fixtures; a coverage of 0.8 alone passed 34 % and 21 % of the questions, and 3-9 % of the prompts).
RELEVANT_COVERAGE = 0.3
RELEVANT_KEYWORD = 1.3
# With a model, words pass a prompt at a lower keyword match (1.0) but only with a hit not far off in meaning (plain
# cosine >= 0.3): on a small store a few generic words match by chance ("do u have internet access if i ask u to look
# something up" on ../shared's fixtures: coverage 0.62, keyword 2.2, best cosine 0.16). With bench/data's 265
# irrelevant prompts, LongMemEval dev's questions pass 88.7 % -> 92.8 % and the prompts stay silent 97.0 -> 96.2 %
# (LongMemEval), 98.5 -> 98.9 % (LoCoMo), 94.3 -> 96.6 % (fixtures); LoCoMo's questions 97.8 -> 98.4 %.
RELEVANT_WORDS_COSINE = 0.3
RELEVANT_KEYWORD_WITH_MEANING = 1.0

# Calibrated on LoCoMo dev (997 questions, top 10 hybrid results each; base rate: 10% of results are an
# evidence turn, 24% an evidence turn or its neighbour). Query coverage >= 0.8 (the top ~5% of results):
# 39% evidence, 51% with neighbours. Coverage >= 0.45 (top ~30%): 21% / 32%. The plain cosine (not the
# contextual one that is fused) predicts little there (>= 0.62, the top ~7%: 22% / 39%), so it can make a hit
# "suggested", never "high". Measured again with the text priors (substance, question, time); before them,
# the same thresholds gave 39/50, 21/32 and 20/35, before contextual cosines 40/51, 22/33 and 17/30, and
# before the coverage factor 41/53, 20/31 and 17/33.
HIGH_COVERAGE = 0.8
SUGGESTED_COVERAGE = 0.45
SUGGESTED_COSINE = 0.62
CLASSES = ("none", "suggested", "high")


def confidence(ranked: Ranked) -> str:
    """high | suggested | none for one result, from its absolute evidence (not its relative score). A
    follow-up is one class below the hit it follows, unless its own evidence says more."""
    parts = ranked.breakdown
    cover, cosine = parts.get("coverage", 0.0), parts.get("cosine", 0.0)
    own = 2 if cover >= HIGH_COVERAGE else 1 if cover >= SUGGESTED_COVERAGE or cosine >= SUGGESTED_COSINE else 0
    if ranked.followed is not None:
        own = max(own, CLASSES.index(confidence(ranked.followed)) - 1)
    return CLASSES[own]
