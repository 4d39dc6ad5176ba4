"""Endless mode (seed §9): memory without session boundaries. Recent events form a working set (a 24 h sliding
window, bounded, relevance first); a rule-based consolidation turns a topic that recurs in it into a consolidated
memory; each prompt gets a continuity score against the one before (seamless, topic shift or break). Pure: the
service keeps the tables (:mod:`claude_memory.service.endless`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

MODES: Final = ("session", "endless")


class WorkingSetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_events: int = Field(default=100, ge=1, le=10_000)
    time_window_hours: float = Field(default=24.0, gt=0, le=24 * 30)
    min_relevance_score: float = Field(default=0.5, ge=0, le=1)


class ConsolidationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trigger_interval_seconds: float = Field(default=3_600.0, gt=0)
    trigger_event_count: int = Field(default=100, ge=1)
    trigger_idle_seconds: float = Field(default=1_800.0, gt=0)
    min_events: int = Field(default=3, ge=2)  # in a topic group
    max_summary_chars: int = Field(default=1_000, ge=100)


class ContinuityConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    min_score_for_seamless: float = Field(default=0.7, ge=0, le=1)
    topic_decay_hours: float = Field(default=48.0, gt=0)


class EndlessConfig(BaseModel):
    """Seed §9.1's defaults."""

    model_config = ConfigDict(extra="forbid")
    working_set: WorkingSetConfig = Field(default_factory=WorkingSetConfig)
    consolidation: ConsolidationConfig = Field(default_factory=ConsolidationConfig)
    continuity: ContinuityConfig = Field(default_factory=ContinuityConfig)


# ---------------------------------------------------------------------- topics (consolidation)

# a declared name: after the keyword, a name that is code (CamelCase, snake_case) or is followed by ( : { < =
_DECLARED = re.compile(
    r"\b(?:function|class|interface|type|const|let|var|def|struct|enum|trait|fn)\s+"
    r"([A-Za-z_]\w*[A-Z_]\w*|[A-Za-z_]\w{2,}(?=\s*[(:{<=]))"
)
_IMPORTED = re.compile(
    r"\b(?:import|export)\b[^\n]*?\bfrom\s+['\"]([^'\"]{2,80})['\"]|^\s*(?:from|import)\s+([\w.]{3,80})", re.M
)
_FILE_TOKEN = re.compile(r"\bfile:\s*(\S{3,99})")
GENERIC: Final = (
    "bug", "fix", "error", "issue", "feature", "test", "refactor", "implement", "add", "remove", "update", "change",
    "modify", "create", "delete",
)  # fmt: skip
_WORDS = re.compile(r"[a-z]+")
MAX_TOPICS: Final = 5


def topics(text: str) -> list[str]:
    """At most five topics of an event (seed §9.3): declared identifiers, imported modules, ``file:`` tokens and (not
    in the seed) the files it names, then the generic terms of work it mentions."""
    found: list[str] = []
    found += [m.group(1).lower() for m in _DECLARED.finditer(text)]
    found += [(m.group(1) or m.group(2)).lower() for m in _IMPORTED.finditer(text)]
    found += [m.group(1).lower() for m in _FILE_TOKEN.finditer(text)]
    found += [m.group(1).rsplit("/", 1)[-1].lower() for m in _PATHISH.finditer(text) if _is_file(m.group(1))]
    words = set(_WORDS.findall(text.lower()))
    found += [g for g in GENERIC if words & _forms(g)]
    return list(dict.fromkeys(found))[:MAX_TOPICS]


def _forms(word: str) -> set[str]:
    """A generic term and its inflections ("fix", "fixes", "fixed", "fixing")."""
    stem = word[:-1] if word.endswith("e") else word
    return {word, word + "s", word + "es", word + "d", word + "ed", stem + "ing", stem + "ed"}


@dataclass(frozen=True, slots=True)
class Item:
    """A working-set event, as consolidation reads it."""

    event_id: int
    ts: datetime
    text: str
    topics: tuple[str, ...]


@dataclass(slots=True)
class Consolidated:
    id: str
    topics: list[str]
    summary: str
    source_events: list[int]
    confidence: float


def _is_file(token: str) -> bool:
    return (
        4 <= len(token) <= 99 and "://" not in token and not token[0].isdigit() and token.rsplit(".", 1)[-1].isalpha()
    )


def _first_sentence(text: str) -> str | None:
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if len(sentence) > 10:
            return sentence[:100] + ("..." if len(sentence) > 100 else "")
    return None


def confidence(n_events: int, avg_gap: timedelta, n_topics: int) -> float:
    """Seed §9.3: 0.4·min(n/10, 1) + 0.4·timeProximity + 0.2·min(3/#topics, 1), timeProximity = max(0, 1 − gap/24 h)."""
    proximity = max(0.0, 1.0 - avg_gap.total_seconds() / 86_400)
    return round(0.4 * min(n_events / 10, 1.0) + 0.4 * proximity + 0.2 * min(3 / max(n_topics, 1), 1.0), 4)


def consolidate(
    items: Sequence[Item], already: set[int], min_events: int = 3, max_chars: int = 1_000
) -> list[Consolidated]:
    """Group the items by topic, merge groups sharing more than half their events, and make a consolidated memory of
    each group of at least ``min_events`` none of whose events is consolidated already (``already``)."""
    if len(items) < min_events:
        return []
    by_topic: dict[str, set[int]] = {}
    for item in items:
        for topic in item.topics:
            by_topic.setdefault(topic, set()).add(item.event_id)
    groups: list[tuple[list[str], set[int]]] = []
    for topic, ids in sorted(by_topic.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        for names, members in groups:
            if len(ids & members) > 0.5 * min(len(ids), len(members)):
                names.append(topic)
                members |= ids
                break
        else:
            groups.append(([topic], set(ids)))
    index = {item.event_id: item for item in items}
    out: list[Consolidated] = []
    for names, members in groups:
        if len(members) < min_events or members & already:
            continue
        chosen = sorted((index[i] for i in members), key=lambda it: (it.ts, it.event_id))
        points = [p for it in chosen[:10] if (p := _first_sentence(it.text))]
        summary = (f"Topics: {', '.join(names[:3])}\n\nKey points:\n" + "".join(f"- {p}\n" for p in points))[:max_chars]
        gaps = [b.ts - a.ts for a, b in pairwise(chosen)]
        avg_gap = sum(gaps, timedelta()) / len(gaps) if gaps else timedelta()
        source = sorted(members)
        key = hashlib.sha1(",".join(map(str, source)).encode()).hexdigest()[:12]
        out.append(Consolidated(f"con:{key}", names, summary, source, confidence(len(source), avg_gap, len(names))))
        already |= members
    return out


# ---------------------------------------------------------------------- continuity (seed §9.5)

_LANGUAGES: Final = {
    "typescript": (".ts", "typescript"), "javascript": (".js", "javascript"), "python": (".py", "python"),
    "rust": (".rs", "rust"), "go": (".go", "golang"),
}  # fmt: skip
DEV_TERMS: Final = (
    "api", "database", "test", "bug", "feature", "refactor", "component", "function", "class", "module", "hook",
    "deploy", "build", "config", "docker", "git",
)  # fmt: skip
_PATHISH = re.compile(r"(?<![\w/])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,6})\b")
_PASCAL = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Component|Service|Store|Manager|Handler|Factory|Provider)\b")
_HOOK_NAME = re.compile(r"\buse[A-Z]\w+\b")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a prompt is about (seed §9.5): topics, files, entities."""

    topics: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        return {"topics": list(self.topics), "files": list(self.files), "entities": list(self.entities)}


def snapshot(text: str) -> Snapshot:
    low = text.lower()
    words = set(_WORDS.findall(low))
    found = [lang for lang, (ext, name) in _LANGUAGES.items() if ext in low or name in words]
    found += [t for t in DEV_TERMS if t in words]
    files = [f for f in dict.fromkeys(m.group(1) for m in _PATHISH.finditer(text)) if _is_file(f)]
    files += [m.group(1) for m in _FILE_TOKEN.finditer(text)]
    entities = [m.group(1) for m in _DECLARED.finditer(text)]
    entities += _PASCAL.findall(text) + _HOOK_NAME.findall(text)
    return Snapshot(
        tuple(dict.fromkeys(found))[:10], tuple(dict.fromkeys(files))[:10], tuple(dict.fromkeys(entities))[:20]
    )


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    x, y = {s.lower() for s in a}, {s.lower() for s in b}
    return len(x & y) / len(x | y) if x | y else 0.0


@dataclass(frozen=True, slots=True)
class Continuity:
    score: float
    transition: str  # seamless | topic_shift | break


def continuity(
    previous: Snapshot | None, current: Snapshot, elapsed: timedelta, config: ContinuityConfig | None = None
) -> Continuity:
    """Seed §9.5: 0.3·topics + 0.2·files + 0.3·time + 0.2·entities (Jaccard overlaps; time = exp(−Δt / decay)),
    capped at 1; ≥ 0.7 seamless, ≥ 0.4 topic shift, else a break. No previous snapshot: 0.5, a break."""
    config = config or ContinuityConfig()
    if previous is None:
        return Continuity(0.5, "break")
    hours = max(elapsed.total_seconds(), 0.0) / 3_600
    proximity = math.exp(-hours / config.topic_decay_hours)
    score = (
        0.3 * _jaccard(previous.topics, current.topics)
        + 0.2 * _jaccard(previous.files, current.files)
        + 0.3 * proximity
        + 0.2 * _jaccard(previous.entities, current.entities)
    )
    score = round(min(score, 1.0), 4)
    if score >= config.min_score_for_seamless:
        return Continuity(score, "seamless")
    return Continuity(score, "topic_shift" if score >= 0.4 else "break")
