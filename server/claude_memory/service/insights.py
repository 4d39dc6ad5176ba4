"""Insights (seed §4.4, done better): the user's stated preferences and rules, and the topics they keep asking about,
derived from their prompts (:mod:`claude_memory.core.insights`).

Each new user prompt is read once (the projection's offset moves past it): its canonical key and the rules it states
are stored with it, and deleted with it by a forget. Preferences are grouped from those rows and the grouping is kept:
later statements join it; anything else groups again from the start, in steps in the service's idle time with the last
grouping serving hooks meanwhile (after a forget, without the forgotten statements). A person's mark (pin, forget)
shows at once, and a rebuild gives the same insights.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from claude_memory.core.citations import render
from claude_memory.core.disclosure import clip
from claude_memory.core.injection import informative
from claude_memory.core.insights import Grouping, Preference, Rule, Statement, canonical_key, rules, standing
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


Order = tuple[bool, datetime, int]  # a statement's place: by time (none first), then storage


@dataclass(slots=True)
class _Grouped:
    """A grouping of the stored statements, complete or under way."""

    state: tuple[int, int, int]  # the store.stated_state it is (or will be) level with
    grouping: Grouping
    statements: list[tuple[Order, Statement]]  # grouped so far
    pending: list[store.Stated]  # a grouping from the start: the prompts stating rules, in order (none once complete)
    done: int  # of them grouped so far
    last_seq: int  # the highest event seq among them: later ones may join


class Insights:
    """Use from the thread that owns the store."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._served: tuple[tuple[int, int, int], list[Preference]] | None = None  # the last complete grouping
        self._grouping: _Grouped | None = None
        self.behind = False  # after a regroup: grouping from the start is under way, or waits (``most=0``)
        self._dirty = True  # prompts stating rules were read since the grouping was last level with the store
        self.unread = False  # the last refresh stopped at its ``most`` or its ``until``: prompts may be left to read

    def refresh(self, most: int | None = None, until: float | None = None) -> int:
        """Read the prompts stored since the last refresh, or only the first ``most`` of them, and none once the
        monotonic clock passed ``until`` (the service's idle step reads a big backlog a little at a time, so that a
        hook arriving meanwhile waits for little); how many were read. :attr:`unread`: some may be left."""
        con = self._memory.con
        done = 0
        if store.outdated(con):  # read by an older extractor: everything is read again with this one
            self._memory.writer.reread_insights()
        while True:
            wanted = BATCH if most is None else min(BATCH, most - done)
            after = store.offset(con)
            found = store.prompts_after(con, after, wanted) if wanted > 0 else []
            self.unread = wanted == 0
            if not found:
                return done
            rows = []
            for n, prompt in enumerate(found):
                if until is not None and n and time.monotonic() > until:
                    found, self.unread = found[:n], True
                    break
                if prompt.metadata.get("command") or is_synthetic(prompt.text):
                    continue
                stated = rules(prompt.text)
                topical = len(informative(self._memory.tokenizer.words(prompt.text))) >= 2
                if not stated and not topical:
                    continue
                encoded = _json_rules(stated)
                rows.append((prompt.event_id, prompt.project, prompt.session_id, prompt.ts,
                             canonical_key(prompt.text), encoded))  # fmt: skip
            self._memory.writer.add_insights(rows_table(rows, store.ROW_SCHEMA), after, found[-1].seq)
            done += len(found)
            self._dirty = self._dirty or any(row[-1] for row in rows)
            if self.unread:
                return done

    def current(self) -> None:
        if not self._memory.read_only:
            self.refresh()

    def rebuild(self) -> int:
        """Read every prompt again (what a refresh gives too); how many were read."""
        self._memory.writer.reset_insights()
        return self.refresh()

    # ------------------------------------------------------------------ reads

    def preferences(self) -> list[Preference]:
        """Every preference, level with the stored statements (a face's read: grouped now when it is not)."""
        self.regroup()
        return self._last()

    def _last(self) -> list[Preference]:
        """The last complete grouping, as it is (what a hook reads: hooks never group)."""
        return self._served[1] if self._served else []

    def forgotten(self) -> None:
        """After a forget: the grouping served to hooks loses the statements of forgotten prompts at once (a preference
        left with none goes), so nothing forgotten is given again, and is grouped again from the start in the service's
        quiet idle steps (:attr:`behind`), or at a face's read; until then a preference superseded by one that went
        stays superseded. A grouping that holds a forgotten statement is dropped. (Grouped again at once, 54,869
        statements of a million events held the service's worker 74 s.)"""
        if self._served is None and self._grouping is None:
            return
        alive = store.stating(self._memory.con)
        if self._grouping is not None and any(i not in alive for i in _event_ids(self._grouping)):
            self._grouping = None
        if self._served is not None:
            state, served = self._served
            kept = [replace(p, statements=[s for s in p.statements if s.event_id in alive]) for p in served]
            if any(len(k.statements) < len(p.statements) for k, p in zip(kept, served, strict=True)):
                self._served = (state, [p for p in kept if p.statements])
                self._dirty = self.behind = True

    def regroup(self, most: int | None = None) -> bool:
        """Bring the grouping level with the stored statements; True if it grouped any. Statements stored after the
        grouped ones that also come after them in time join the grouping kept; otherwise (a forget, an import of
        older prompts) it groups from the start, at most ``most`` statements per call, the last complete grouping
        serving meanwhile (the service's idle step: at a million events grouping 36,000 statements takes 43 s).
        ``most=0``: later statements only, a grouping from the start waits (:attr:`behind`)."""
        con = self._memory.con
        if most is not None and not self._dirty and not self.behind:
            return False  # (the idle step, after new events: no prompt stating rules came since)
        state = store.stated_state(con)
        self.behind = False
        if self._served is not None and self._served[0] == state:
            self._dirty = False
            return False
        kept = self._grouping
        if kept is not None and not kept.pending:
            rows = store.stated(con, after_seq=kept.last_seq)
            later = _statements(rows)
            if (
                later
                and store.state_after(kept.state, rows) == state
                and (not kept.statements or later[0][0] >= kept.statements[-1][0])
            ):  # only later prompts came: they join it
                for _order, statement in later:
                    kept.grouping.add(statement)
                kept.statements += later
                kept.state, kept.last_seq = state, max(r.event_seq for r in rows)
                self._served, self._dirty = (state, kept.grouping.found), False
                return True
        if most == 0:
            self.behind = True
            return False
        if kept is None or kept.state != state or not kept.pending:
            rows = store.stated(con)
            last = max((r.event_seq for r in rows), default=0)
            kept = self._grouping = _Grouped(state, Grouping(), [], rows, 0, last)
            if most is not None and rows:  # the read is this step's work (at a million events, 45,000 rows: 0.3 s)
                self.behind = True
                return True
        end = len(kept.pending) if most is None else min(len(kept.pending), kept.done + most)
        grouped = _statements(kept.pending[kept.done : end])  # (decoded here: 55,000 statements at once took 0.8 s)
        for _order, statement in grouped:
            kept.grouping.add(statement)
        kept.statements += grouped
        kept.done = end
        if end == len(kept.pending):
            kept.pending, kept.done = [], 0
            self._served, self._dirty = (state, kept.grouping.found), False
        else:
            self.behind = True
        return True

    def listing(self, project: str | None, *, include_all: bool = False, limit: int = 100) -> dict[str, Any]:
        """``{preferences, topics}`` for ``project`` (None: every project). Without ``include_all``, only what holds
        now: superseded preferences and those marked forgotten are left out."""
        self.current()
        return {"preferences": self._listed(project, include_all, limit), "topics": self.topics(project, limit)}

    def _listed(
        self, project: str | None, include_all: bool, limit: int, *, grouped: bool = True
    ) -> list[dict[str, Any]]:
        """Pinned first, standing before superseded, the most often stated first, then the latest. Without
        ``grouped`` (a hook), the last complete grouping as it is."""
        marks = store.marks(self._memory.con)
        every = self.preferences() if grouped else self._last()
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
        listed = self._listed(project, False, 20, grouped=False)  # (the idle step reads prompts and groups them)
        return [p for p in listed if p["mark"] == "pin" or p["count"] >= 2 or p["explicit"]]


def _statements(rows: list[store.Stated]) -> list[tuple[Order, Statement]]:
    """The statements of stored prompts, each with its place in time."""
    return [
        ((r.ts is not None, r.ts or datetime.min, r.event_seq),
         Statement(r.event_id, r.citation, r.project, r.session_id, from_store_time(r.ts), Rule.from_json(rule)))
        for r in rows
        for rule in json.loads(r.rules)
    ]  # fmt: skip


def _event_ids(grouped: _Grouped) -> list[int]:
    """The prompts a grouping holds or will hold."""
    return [s.event_id for _, s in grouped.statements] + [r.event_id for r in grouped.pending[grouped.done :]]


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
