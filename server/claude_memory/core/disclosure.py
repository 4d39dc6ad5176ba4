"""Progressive disclosure, the pure part: what each layer shows, what it costs, and how smart search packs
results into a token budget.

Three layers, each cheaper than the next (SEED_SPEC §6.6):

1. **index**: one line per hit (citation, one-line summary, score, confidence, type, time, session);
2. **timeline**: the events around some targets in session order, with short previews;
3. **details**: one event in full, with its files, tool facts, source pointer and neighbours.

Every layer has a text form (what a face would put into a prompt or print) and a JSON form (for programs).
Token estimates are ``ceil(chars / 4)`` of the text form, and every text form ends with a newline, so
the text of several blocks put together never costs more than the sum of their estimates.

Smart search (:func:`pack`) expands an index by fixed, greedy rules within a budget; see its docstring.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import Any, Final

SUMMARY_CHARS: Final = 100
PREVIEW_CHARS: Final = 200
DEFAULT_BUDGET: Final = 2_000  # tokens
DEFAULT_WINDOW: Final = 3  # timeline events each side of a target
DEFAULT_CONTEXT: Final = 2  # neighbours each side in details

HIGH: Final = "high"
SUGGESTED: Final = "suggested"
NONE: Final = "none"

INDEX: Final = "index"
TIMELINE: Final = "timeline"
DETAILS: Final = "details"

_FENCE: Final = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n.*?(?:```|\Z)", re.DOTALL)
_LEADING_CODE: Final = re.compile(r"^(?:\[code\]\s*)+")
# A sentence ends at . ! or ? followed by white space, or at a line break.
_SENTENCE_END: Final = re.compile(r"[.!?](?=\s)|\n")


def estimate_tokens(text: str) -> int:
    """The token estimate used for every layer (SEED_SPEC §6.6; no tokenizer): ceil(chars / 4)."""
    return -(-len(text) // 4)


def clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters, at a word boundary when one is near, with "…"."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ")
    if space > width // 2:
        head = head[:space]
    return head.rstrip() + "…"


def _flat(text: str) -> str:
    return " ".join(text.split())


EXCERPT_MATCHES: Final = 1_000  # of a long text that repeats a query word, the first thousand matches are weighed


class Excerpts:
    """One text's excerpts around the query's ``stems``, at any width: the text is flattened and the stems found in it
    once (the prompt hook shortens its excerpts a step at a time until its lines fit)."""

    __slots__ = ("_found", "_stems", "flat")

    def __init__(self, text: str, stems: Sequence[str]) -> None:
        self.flat = _flat(text)
        self._stems = stems
        self._found: list[tuple[int, str]] | None = None  # (where, which) of each match, found at the first cut

    def cut(self, width: int) -> str:
        """At most ``width`` characters (see :func:`excerpt`)."""
        flat = self.flat
        if len(flat) <= width:
            return flat
        if self._found is None:
            self._found = _stem_matches(flat, self._stems)
        return _window(flat, self._found, width)


def excerpt(text: str, stems: Sequence[str], width: int) -> str:
    """At most ``width`` characters of ``text`` (white space flattened): the window holding the most of the query's
    ``stems`` (words starting with one; the earliest such window), opening a little before its first match, cut at
    word boundaries, with "…" where text was left out; the head when no stem matches."""
    return Excerpts(text, stems).cut(width)


def _stem_matches(flat: str, stems: Sequence[str]) -> list[tuple[int, str]]:
    """Where a word of ``flat`` starts with one of ``stems``, and with which (the first :data:`EXCERPT_MATCHES`)."""
    # a stem's "i" was the word's "y" ("retri", "polici"): the word starts with what comes before it
    prefixes = {stem[:-1] if len(stem) > 3 and stem.endswith("i") else stem for stem in stems if stem}
    if not prefixes:
        return []
    words = sorted(map(re.escape, prefixes), key=len, reverse=True)
    starts = re.compile(rf"(?<![^\W_])(?:{'|'.join(words)})")  # a word starting with a stem
    return [(m.start(), m.group()) for m in islice(starts.finditer(flat.lower()), EXCERPT_MATCHES)]


def _window(flat: str, found: list[tuple[int, str]], width: int) -> str:
    """The ``width`` characters of ``flat`` (longer than that) holding the most distinct matches of ``found``."""
    start, best, held, last = 0, 0, dict[str, int](), 0
    span = max(0, width - width // 6 - 16)  # from a window's first match to its last, leaving room for that word
    for at, stem in found:  # a window opening at each match in turn, matches joining on the right, leaving on the left
        held[stem] = held.get(stem, 0) + 1
        while found[last][0] < at - span:  # not in one window with this match
            gone = found[last][1]
            held[gone] -= 1
            if not held[gone]:
                del held[gone]
            last += 1
        if len(held) > best:
            start, best = max(0, found[last][0] - width // 6), len(held)
    start = min(start, max(0, len(flat) - width + 1))
    if start > 0:
        space = flat.find(" ", start, start + width // 6)
        start = space + 1 if space >= 0 else start
    prefix = "…" if start > 0 else ""
    if start + width - len(prefix) >= len(flat):  # the window reaches the end
        return prefix + flat[start:]
    room = width - len(prefix) - 1
    body = flat[start : start + room]
    space = body.rfind(" ")
    return prefix + (body[:space] if space > room // 2 else body).rstrip() + "…"


def summary(text: str) -> str:
    """One line of at most 100 characters: fenced code becomes ``[code]`` (dropped when it opens the
    text), then the first sentence (up to . ! ? or a line break), cut on a word boundary if it is longer.
    Text without a sentence end is cut the same way (never an empty summary for non-empty text)."""
    plain = _FENCE.sub("[code]\n", text).strip()
    plain = _LEADING_CODE.sub("", plain) or plain  # a block that opens the text says nothing
    match = _SENTENCE_END.search(plain)
    first = plain[: match.end()] if match else plain
    return clip(_flat(first) or _flat(plain), SUMMARY_CHARS)


def preview(text: str) -> str:
    """At most 200 characters on one line: fenced code becomes ``[<lang> code]``, white space collapses,
    then a cut on a word boundary."""
    plain = _FENCE.sub(lambda m: f" [{m.group(1) + ' ' if m.group(1) else ''}code] ", text)
    return clip(_flat(plain), PREVIEW_CHARS)


def _when(timestamp: str | None) -> str:
    """``2026-01-31T14:02:03Z`` -> ``2026-01-31 14:02``."""
    return timestamp[:16].replace("T", " ") if timestamp else "?"


def _ref(citation: str | None, event_id: int) -> str:
    return citation or str(event_id)


# ---------------------------------------------------------------------- layer 1


@dataclass(frozen=True, slots=True)
class IndexEntry:
    rank: int
    id: int
    citation: str | None  # rendered: mem:AbC123
    summary: str
    score: float
    confidence: str  # high | suggested | none, as search computed it
    type: str
    timestamp: str | None  # ISO-8601 UTC
    session_id: str
    project: str | None
    duplicates: tuple[str, ...] = ()  # citations of near-duplicates folded into it (core/duplicates.py)

    def text(self) -> str:
        return (
            f"#{self.rank} [{_ref(self.citation, self.id)}] {self.type} · {_when(self.timestamp)} · "
            f"session {self.session_id[:8]} · score {self.score:.3f} ({self.confidence}) · {self.summary}"
            f"{_also(self.duplicates)}\n"
        )

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text())

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "id": self.id,
            "citation": self.citation,
            "summary": self.summary,
            "score": round(self.score, 6),
            "confidence": self.confidence,
            "type": self.type,
            "timestamp": self.timestamp,
            "session_id": self.session_id,
            "project": self.project,
            "tokens": self.tokens,
            "duplicates": list(self.duplicates),
        }


def _also(duplicates: Sequence[str]) -> str:
    """`` (×3, also [mem:b] [mem:c])`` for an entry that stands for near-duplicates too."""
    if not duplicates:
        return ""
    return f" (×{len(duplicates) + 1}, also {' '.join(f'[{c}]' for c in duplicates)})"


@dataclass(frozen=True, slots=True)
class SearchIndex:
    entries: tuple[IndexEntry, ...]
    meta: dict[str, Any] = field(default_factory=dict)  # what search reported (mode, terms, filters, ...)

    def text(self) -> str:
        return "".join(e.text() for e in self.entries)

    @property
    def tokens(self) -> int:
        return sum(e.tokens for e in self.entries)

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [e.to_json() for e in self.entries],
            "meta": {**copy.deepcopy(self.meta), "tokens": self.tokens},
        }


# ---------------------------------------------------------------------- layer 2


@dataclass(frozen=True, slots=True)
class TimelineItem:
    id: int
    citation: str | None
    type: str
    timestamp: str | None
    session_id: str
    position: int  # 1-based place in its session (by time, then insertion order)
    preview: str
    is_target: bool

    def text(self) -> str:
        mark = "▶" if self.is_target else " "
        return f"{mark} [{_ref(self.citation, self.id)}] {_when(self.timestamp)} {self.type} · {self.preview}\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "citation": self.citation,
            "type": self.type,
            "timestamp": self.timestamp,
            "session_id": self.session_id,
            "position": self.position,
            "preview": self.preview,
            "is_target": self.is_target,
        }


@dataclass(frozen=True, slots=True)
class TimelineWindow:
    """A contiguous run of one session's events."""

    session_id: str
    project: str | None
    items: tuple[TimelineItem, ...]

    def text(self) -> str:
        head = f"Session {self.session_id} · {self.project or '?'}\n"
        return head + "".join(item.text() for item in self.items)

    def to_json(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "project": self.project, "events": [i.to_json() for i in self.items]}


@dataclass(frozen=True, slots=True)
class Timeline:
    windows: tuple[TimelineWindow, ...]
    missing: tuple[str, ...] = ()  # references that resolved to no event

    @property
    def targets(self) -> tuple[TimelineItem, ...]:
        return tuple(item for w in self.windows for item in w.items if item.is_target)

    def text(self) -> str:
        return "".join(w.text() for w in self.windows)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text())

    def to_json(self) -> dict[str, Any]:
        return {
            "windows": [w.to_json() for w in self.windows],
            "targets": [t.citation or t.id for t in self.targets],
            "missing": list(self.missing),
            "tokens": self.tokens,
        }


def _sort_time(timestamp: str | None) -> tuple[bool, datetime]:
    if timestamp is None:
        return (True, datetime.min)
    return (False, datetime.fromisoformat(timestamp).replace(tzinfo=None))


def merge_timelines(parts: Iterable[Timeline]) -> Timeline:
    """One timeline from several: an event shown twice appears once (a target if it was a target in any
    part), runs of a session that overlap or touch become one window, and windows are ordered by the time
    of their first event. ``missing`` references are kept, each once."""
    items: dict[int, TimelineItem] = {}
    projects: dict[str, str | None] = {}
    missing: dict[str, None] = {}
    for part in parts:
        missing.update(dict.fromkeys(part.missing))
        for window in part.windows:
            projects.setdefault(window.session_id, window.project)
            for item in window.items:
                seen = items.get(item.id)
                if seen is None or (item.is_target and not seen.is_target):
                    items[item.id] = item
    by_session: dict[str, list[TimelineItem]] = {}
    for item in items.values():
        by_session.setdefault(item.session_id, []).append(item)
    windows: list[TimelineWindow] = []
    for session_id, session_items in by_session.items():
        session_items.sort(key=lambda i: i.position)
        run: list[TimelineItem] = []
        for item in session_items:
            if run and item.position > run[-1].position + 1:
                windows.append(TimelineWindow(session_id, projects[session_id], tuple(run)))
                run = []
            run.append(item)
        windows.append(TimelineWindow(session_id, projects[session_id], tuple(run)))
    windows.sort(key=lambda w: (*_sort_time(w.items[0].timestamp), w.session_id, w.items[0].position))
    return Timeline(tuple(windows), tuple(missing))


# ---------------------------------------------------------------------- layer 3


@dataclass(frozen=True, slots=True)
class ToolFact:
    name: str
    input: dict[str, Any]  # the input fields the event text does not show (see core.transcript)
    status: str  # ok | error | no result

    def text(self) -> str:
        facts = f" · input {json.dumps(self.input, ensure_ascii=False, sort_keys=True)}" if self.input else ""
        return f"Tool: {self.name}{facts} · {self.status}\n"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "input": copy.deepcopy(self.input), "status": self.status}


def tool_facts(tool_name: str | None, type_: str, metadata: dict[str, Any]) -> tuple[ToolFact, ...]:
    """The tool call a ``tool_use`` event records, from its stored metadata; nothing for other events."""
    if type_ != "tool_use":
        return ()
    status = "no result" if metadata.get("result") == "missing" else "error" if metadata.get("is_error") else "ok"
    facts = metadata.get("input")
    return (ToolFact(tool_name or "tool", dict(facts) if isinstance(facts, dict) else {}, status),)


@dataclass(frozen=True, slots=True)
class Details:
    id: int
    citation: str | None
    type: str
    timestamp: str | None
    session_id: str
    project: str | None
    agent_id: str | None
    tool_name: str | None
    content: str  # the event's full text
    files: tuple[str, ...]
    tools: tuple[ToolFact, ...]
    source: dict[str, Any]  # path, line_start, line_end, byte_start, byte_end, uuid
    metadata: dict[str, Any]
    neighbours: tuple[TimelineItem, ...]
    citation_uses: int = 0  # filled in when the details are shown (never cached), as are the three below
    sessions_used: int = 0  # distinct sessions its uses reached
    last_used: str | None = None  # ISO-8601
    level: int = 0  # graduation level (core/graduation.py)

    def text(self) -> str:
        src = self.source
        lines = [
            f"Details [{_ref(self.citation, self.id)}] {self.type} · {_when(self.timestamp)} · "
            f"session {self.session_id} · project {self.project or '?'}\n",
            f"Source {src.get('path')}:{src.get('line_start')}-{src.get('line_end')} "
            f"(bytes {src.get('byte_start')}-{src.get('byte_end')})\n",
        ]
        if self.files:
            lines.append(f"Files: {', '.join(self.files)}\n")
        lines += [t.text() for t in self.tools]
        lines.append(self.content.rstrip("\n") + "\n")
        if self.neighbours:
            lines.append("Around it:\n")
            lines += [n.text() for n in self.neighbours]
        return "".join(lines)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text())

    def to_json(self) -> dict[str, Any]:
        """The event as ``show`` has always printed it, plus tools, tokens and neighbour previews."""
        return {
            "id": self.id,
            "citation": self.citation,
            "type": self.type,
            "timestamp": self.timestamp,
            "session_id": self.session_id,
            "project": self.project,
            "agent_id": self.agent_id,
            "tool_name": self.tool_name,
            "files": list(self.files),
            "text": self.content,
            "source": dict(self.source),
            "metadata": copy.deepcopy(self.metadata),
            "tools": [t.to_json() for t in self.tools],
            "tokens": self.tokens,
            "citation_uses": self.citation_uses,
            "sessions_used": self.sessions_used,
            "last_used": self.last_used,
            "level": self.level,
            "neighbours": [n.to_json() for n in self.neighbours],
        }


# ---------------------------------------------------------------------- smart search


@dataclass(frozen=True, slots=True)
class Packing:
    """What :func:`pack` chose: a layer per included index entry (in rank order), the details and the
    merged timeline it expanded to, and the tokens all of it costs."""

    layers: tuple[tuple[IndexEntry, str], ...]
    details: tuple[Details, ...]  # rank order
    timeline: Timeline | None
    omitted: int  # index entries that did not fit at all
    budget: int
    tokens: int

    def text(self) -> str:
        """The packed result as text: the index lines, then each details block, then the timeline. Its
        ``estimate_tokens`` is at most ``tokens``."""
        parts = [entry.text() for entry, _ in self.layers]
        parts += [d.text() for d in self.details]
        if self.timeline is not None:
            parts.append(self.timeline.text())
        return "".join(parts)


def pack(
    entries: Sequence[IndexEntry],
    budget: int,
    details_of: Callable[[IndexEntry], Details | None],
    timeline_of: Callable[[IndexEntry], Timeline | None],
) -> Packing:
    """Expand a ranked index within ``budget`` tokens. The rules, applied greedily in this order:

    1. **Index lines** in rank order, while they fit; the first that does not fit ends the list (it and
       every later hit are omitted), so what is shown is always a top-k prefix.
    2. **Details** (added below the index) for each included ``high``-confidence hit, in rank order, if
       its details block fits in what is left; a block that does not fit is skipped, not cut.
    3. **Timeline**: each included ``suggested`` hit, and each ``high`` hit whose details did not fit,
       in rank order, adds its window to one merged timeline if the growth of that timeline fits
       (overlapping windows cost nothing twice).
    4. Everything else (``none`` confidence, or no room) stays an index line.

    The result's ``tokens`` is the sum of the index lines, details blocks and the merged timeline, and
    is never above ``budget``. ``details_of`` and ``timeline_of`` are only called for hits the rules
    consider, so an omitted hit costs no lookups.
    """
    if budget < 0:
        raise ValueError("A token budget cannot be negative.")
    used = 0
    included: list[IndexEntry] = []
    for entry in entries:
        if used + entry.tokens > budget:
            break
        included.append(entry)
        used += entry.tokens
    layer = {entry.rank: INDEX for entry in included}

    details: list[Details] = []
    for entry in included:
        if entry.confidence != HIGH:
            continue
        found = details_of(entry)
        if found is not None and used + found.tokens <= budget:
            details.append(found)
            layer[entry.rank] = DETAILS
            used += found.tokens

    merged: Timeline | None = None
    for entry in included:
        if layer[entry.rank] != INDEX or entry.confidence not in (HIGH, SUGGESTED):
            continue
        window = timeline_of(entry)
        if window is None:
            continue
        grown = window if merged is None else merge_timelines([merged, window])
        extra = grown.tokens - (merged.tokens if merged is not None else 0)
        if used + extra <= budget:
            merged, used = grown, used + extra
            layer[entry.rank] = TIMELINE

    return Packing(
        layers=tuple((entry, layer[entry.rank]) for entry in included),
        details=tuple(details),
        timeline=merged,
        omitted=len(entries) - len(included),
        budget=budget,
        tokens=used,
    )


@dataclass(frozen=True, slots=True)
class SmartSearch:
    """A smart search answer: the packing and what search reported about the query."""

    packing: Packing
    meta: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        return self.packing.text()

    @property
    def tokens(self) -> int:
        return self.packing.tokens

    def to_json(self) -> dict[str, Any]:
        packing = self.packing
        details = {d.id: d for d in packing.details}
        results = []
        for entry, layer in packing.layers:
            item = {**entry.to_json(), "layer": layer}
            if layer == DETAILS:
                item["details"] = details[entry.id].to_json()
            results.append(item)
        layers = [layer for _, layer in packing.layers]
        return {
            "results": results,
            "timeline": packing.timeline.to_json() if packing.timeline is not None else None,
            "meta": {
                **copy.deepcopy(self.meta),
                "budget": packing.budget,
                "tokens": packing.tokens,
                "expanded": {name: layers.count(name) for name in (DETAILS, TIMELINE, INDEX)},
                "omitted": packing.omitted,
            },
        }
