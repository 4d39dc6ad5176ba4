"""Insights (seed §4.4, done better): the user's stated preferences and rules, and the topics they keep asking about,
derived from their prompts (:mod:`claude_memory.core.insights`).

Each new user prompt is read once (the projection's offset moves past it): its canonical key and the rules it states
are stored with it, and deleted with it by a forget. Preferences are grouped from those rows when read (and kept until
a prompt stating rules comes or goes), so a forget or a person's mark (pin, forget) shows at once, and a rebuild gives
the same insights.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Final

from claude_memory.core.citations import render
from claude_memory.core.disclosure import clip
from claude_memory.core.injection import informative
from claude_memory.core.insights import Preference, Rule, Statement, canonical_key, preferences, rules, standing
from claude_memory.core.machine_text import is_synthetic
from claude_memory.store import insights as store
from claude_memory.store import queries
from claude_memory.store.arrow import rows_table
from claude_memory.store.db import from_store_time
from claude_memory.store.queries import StoredEvent

if TYPE_CHECKING:
    from claude_memory.service.memory import Memory

BATCH: Final = 2_000  # prompts read per transaction
TOPIC_MIN: Final = 2  # a topic asked this many times is a repeated topic (seed §4.4)


class Insights:
    """Use from the thread that owns the store."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._grouped: tuple[tuple[int, int, int], list[Preference]] | None = None  # cached on store.stated_state

    def refresh(self, most: int | None = None) -> int:
        """Read the prompts stored since the last refresh, or only the first ``most`` of them (the service's idle
        step reads a big backlog a little at a time, so that hooks never wait behind it); how many were read."""
        con = self._memory.con
        done = 0
        stated_any = False
        if store.outdated(con):  # read by an older extractor: everything is read again with this one
            self._memory.writer.reread_insights()
        while True:
            wanted = BATCH if most is None else min(BATCH, most - done)
            found = store.prompts_after(con, store.offset(con), wanted) if wanted > 0 else []
            if not found:
                if stated_any and (most is None or done < most):  # caught up: group now, in the service's idle
                    self.preferences()  # time, rather than in the next SessionStart
                return done
            rows = []
            for prompt in found:
                if prompt.metadata.get("command") or is_synthetic(prompt.text):
                    continue
                stated = rules(prompt.text)
                topical = len(informative(self._memory.tokenizer.words(prompt.text))) >= 2
                if not stated and not topical:
                    continue
                encoded = _json_rules(stated)
                rows.append((prompt.event_id, prompt.project, prompt.session_id, prompt.ts,
                             canonical_key(prompt.text), encoded))  # fmt: skip
            self._memory.writer.add_insights(rows_table(rows, store.ROW_SCHEMA), found[-1].seq)
            done += len(found)
            stated_any = stated_any or any(row[-1] for row in rows)

    def current(self) -> None:
        if not self._memory.read_only:
            self.refresh()

    def rebuild(self) -> int:
        """Read every prompt again (what a refresh gives too); how many were read."""
        self._memory.writer.reset_insights()
        return self.refresh()

    # ------------------------------------------------------------------ reads

    def preferences(self) -> list[Preference]:
        """Every preference, grouped again only when a prompt stating rules came or went (a store full of them takes
        seconds: bench/bench_learning.py)."""
        state = store.stated_state(self._memory.con)
        if self._grouped is not None and self._grouped[0] == state:
            return self._grouped[1]
        statements = [
            Statement(s.event_id, s.citation, s.project, s.session_id, from_store_time(s.ts), Rule.from_json(rule))
            for s in store.stated(self._memory.con)
            for rule in s.rules
        ]
        found = preferences(statements)
        self._grouped = (state, found)
        return found

    def listing(self, project: str | None, *, include_all: bool = False, limit: int = 100) -> dict[str, Any]:
        """``{preferences, topics}`` for ``project`` (None: every project). Without ``include_all``, only what holds
        now: superseded preferences and those marked forgotten are left out."""
        self.current()
        return {"preferences": self._listed(project, include_all, limit), "topics": self.topics(project, limit)}

    def _listed(self, project: str | None, include_all: bool, limit: int) -> list[dict[str, Any]]:
        """Pinned first, standing before superseded, the most often stated first, then the latest."""
        marks = store.marks(self._memory.con)
        every = self.preferences()
        held = every if include_all else [p for p in standing(every, project) if marks.get(p.id) != "forget"]
        found = [p for p in held if project is None or p.scope is None or p.scope == project]
        found.sort(key=lambda p: p.latest.ts or "", reverse=True)
        found.sort(key=lambda p: (marks.get(p.id) != "pin", p.superseded_by is not None, -len(p.statements)))
        return [_preference(p, marks.get(p.id)) for p in found[:limit]]

    def topics(self, project: str | None, limit: int) -> list[dict[str, Any]]:
        """Repeated topics, kept until the store changes (grouping the keys of 100k prompts takes 50 ms)."""
        return self._memory.cached("topics", (project, limit), lambda: self._topics(project, limit))

    def _topics(self, project: str | None, limit: int) -> list[dict[str, Any]]:
        con = self._memory.con
        groups = store.repeated(con, project, TOPIC_MIN, limit)
        events = queries.events_by_ids(con, [i for _, _, ids in groups for i in ids[-5:]])
        out = []
        for key, where, ids in groups:
            shown = [events[i] for i in ids[-5:] if i in events]
            out.append({
                "id": "topic:" + hashlib.sha1(f"{where}::{key}".encode()).hexdigest()[:12],
                "kind": "topic",
                "text": f"Repeated topic: {key[:50]}",
                "key": key,
                "project": where,
                "count": len(ids),
                "confidence": round(min(1.0, len(ids) / 5), 2),
                "evidence": [_evidence(e) for e in shown],
            })  # fmt: skip
        return out

    def show(self, insight_id: str) -> dict[str, Any] | None:
        """One insight, preference or topic, with all its evidence (superseded or forgotten ones too)."""
        self.current()
        marks = store.marks(self._memory.con)
        for p in self.preferences():
            if p.id == insight_id or any(render(s.citation or "") == insight_id for s in p.statements):
                return _preference(p, marks.get(p.id))
        return next((t for t in self.topics(None, 10_000) if t["id"] == insight_id), None)

    def mark(self, insight_id: str, mark: str | None) -> dict[str, Any] | None:
        """Pin an insight (listed first, always given at SessionStart), forget it (never listed nor given; its
        evidence stays in memory) or clear the mark. None when no such preference."""
        found = self.show(insight_id)
        if found is None or found["kind"] != "preference":
            return None
        self._memory.writer.mark_insight(found["id"], mark)
        return {**found, "mark": mark}

    def for_session(self, project: str) -> list[dict[str, Any]]:
        """The preferences SessionStart gives for ``project``: standing ones stated at least twice, or with always /
        never, or pinned."""
        listed = self._listed(project, False, 20)  # (new prompts are read when the service is idle)
        return [p for p in listed if p["mark"] == "pin" or p["count"] >= 2 or p["explicit"]]


def _json_rules(stated: list[Rule]) -> str | None:
    return json.dumps([r.to_json() for r in stated], ensure_ascii=False) if stated else None


def _preference(p: Preference, mark: str | None) -> dict[str, Any]:
    latest, best = p.latest, p.wording
    return {
        "id": p.id,
        "kind": "preference",
        "text": best.rule.text,
        "polarity": best.rule.polarity,
        "explicit": p.explicit,
        "scope": p.scope,
        "projects": p.projects,
        "count": len(p.statements),
        "status": "superseded" if p.superseded_by else "standing",
        "superseded_by": p.superseded_by,
        "supersedes": p.supersedes,
        "mark": mark,
        "first_seen": p.statements[0].ts,
        "last_seen": latest.ts,
        "citation": render(best.citation) if best.citation else None,
        "evidence": [
            {
                "citation": render(s.citation) if s.citation else None,
                "timestamp": s.ts,
                "session_id": s.session_id,
                "project": s.project,
                "text": s.rule.text,
            }
            for s in p.statements
        ],
    }


def _evidence(event: StoredEvent) -> dict[str, Any]:
    return {
        "citation": render(event.citation) if event.citation else None,
        "timestamp": from_store_time(event.ts),
        "session_id": event.session_id,
        "project": event.project,
        "text": clip(event.text, 200),
    }
