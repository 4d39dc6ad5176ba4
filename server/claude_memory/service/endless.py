"""Endless mode (seed §9; rules in :mod:`claude_memory.core.endless`): ``claude-memory mode endless`` keeps a working
set of each project's recent events (24 h sliding, at most 100, relevance first), logs each prompt's continuity with
the one before, and consolidates recurring topics into consolidated memories; SessionStart then opens with the
continuity line, the working set and the best consolidated memories instead of a session boundary. Session mode (the
default) keeps nothing new and loses nothing: switching back keeps what endless mode made.

The service's idle step reads new events after the projection's offset (``endless`` in ``projection_offsets``), and
every minute checks the consolidation triggers (working-set size, an idle stretch, an hour since the last one).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from claude_memory.core import endless as rules
from claude_memory.core.citations import render
from claude_memory.store import endless as store
from claude_memory.store.arrow import rows_table
from claude_memory.store.db import from_store_time, utc_now

if TYPE_CHECKING:
    from claude_memory.service.memory import Memory

BATCH: Final = 5_000  # events read per transaction
BACKFILL: Final = timedelta(days=7)  # switching to endless takes the last week into the working set (seed §9.4)
RELEVANCE: Final = {"user_prompt": 1.0, "compact_summary": 0.9, "agent_response": 0.8, "tool_use": 0.6}
CONTEXT_ITEMS: Final = 5  # working-set items SessionStart gives (relevance ≥ CONTEXT_RELEVANCE)
CONTEXT_RELEVANCE: Final = 0.7
CONTEXT_CONSOLIDATED: Final = 3


class Endless:
    """Use from the thread that owns the store."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    # ------------------------------------------------------------------ settings

    def mode(self) -> str:
        found = store.config(self._memory.con).get("mode")
        return found if found in rules.MODES else "session"

    def config(self) -> rules.EndlessConfig:
        return rules.EndlessConfig.model_validate(store.config(self._memory.con).get("config") or {})

    def configure(self, changes: dict[str, Any]) -> rules.EndlessConfig:
        """Change some settings (the others keep theirs); ValueError (one sentence) on a setting it does not have."""
        merged = self.config().model_dump()
        for section, values in changes.items():
            if section not in merged or not isinstance(values, dict):
                raise ValueError(f"Endless mode has no settings called {section!r}.")
            merged[section].update(values)
        try:
            config = rules.EndlessConfig.model_validate(merged)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"The setting {'.'.join(map(str, first['loc']))} is not valid: {first['msg']}.") from None
        self._memory.writer.set_endless("config", config.model_dump())
        return config

    def set_mode(self, mode: str) -> dict[str, Any]:
        """Switch; to endless, the last week's events fill the working set and a consolidation runs."""
        if mode not in rules.MODES:
            raise ValueError(f"The mode is 'endless' or 'session', not {mode!r}.")
        writer = self._memory.writer
        if mode == "endless" and self.mode() != "endless":
            writer.set_endless("mode", mode)
            newest = store.newest_seq(self._memory.con)
            self._read(since=utc_now() - BACKFILL, start=0)  # the last week
            writer.add_endless(rows_table([], store.WORKING_SCHEMA), rows_table([], store.CONTINUITY_SCHEMA), newest,
                               self.config().working_set.max_events)  # fmt: skip
            self.consolidate(force=True)
        else:
            writer.set_endless("mode", mode)
        return self.status(None)

    # ------------------------------------------------------------------ the projection

    def refresh(self) -> int:
        """In endless mode, take the events stored since the last refresh into the working set (and their prompts'
        continuity); in session mode, nothing. How many events were read."""
        if self.mode() != "endless":
            return 0  # (switching on reads the last week whatever the offset says)
        return self._read(since=None, start=None)

    def _read(self, *, since: datetime | None, start: int | None) -> int:
        con = self._memory.con
        config = self.config()
        window = timedelta(hours=config.working_set.time_window_hours)
        seq = store.offset(con) if start is None else start
        done = 0
        last: dict[str | None, tuple[datetime | None, rules.Snapshot] | None] = {}
        while found := store.events_after(con, seq, since, BATCH):
            working: list[tuple[Any, ...]] = []
            continuity: list[tuple[Any, ...]] = []
            for event in found:
                ts = event.ts or utc_now()
                working.append((event.id, event.project, ts, ts + window, RELEVANCE.get(event.type, 0.5),
                                json.dumps(rules.topics(event.text))))  # fmt: skip
                if event.type != "user_prompt":
                    continue
                if event.project not in last:
                    stored = store.last_snapshot(con, event.project)
                    last[event.project] = (stored[0], _snapshot(stored[1])) if stored else None
                previous = last[event.project]
                current = rules.snapshot(event.text)
                elapsed = ts - previous[0] if previous and previous[0] else timedelta()
                step = rules.continuity(previous[1] if previous else None, current, elapsed, config.continuity)
                continuity.append(
                    (event.id, event.project, ts, step.score, step.transition, json.dumps(current.to_json()))
                )
                last[event.project] = (ts, current)
            seq = found[-1].seq
            self._memory.writer.add_endless(
                rows_table(working, store.WORKING_SCHEMA),
                rows_table(continuity, store.CONTINUITY_SCHEMA),
                seq,
                config.working_set.max_events,
            )
            done += len(found)
        return done

    def consolidate(self, *, force: bool = False) -> dict[str, Any]:
        """Consolidate each project's working set when a trigger holds (or ``force``): ``{ran, created}``."""
        if not force and self.mode() != "endless":
            return {"ran": False, "created": 0}
        con = self._memory.con
        config = self.config()
        now = utc_now()
        self._memory.writer.expire_working_set()
        if not force and not self._due(config, now):
            return {"ran": False, "created": 0}
        already = store.consolidated_sources(con)
        created: list[tuple[Any, ...]] = []
        pruned: list[int] = []
        items = store.working(con, None, now, 100_000)
        for project in dict.fromkeys(i.project for i in items):
            mine = [rules.Item(i.event_id, i.ts, i.text, tuple(i.topics)) for i in items if i.project == project]
            for c in rules.consolidate(
                mine, already, config.consolidation.min_events, config.consolidation.max_summary_chars
            ):
                created.append((c.id, project, c.summary, json.dumps(c.topics), c.source_events, c.confidence, now))
                pruned += c.source_events
        half = timedelta(hours=config.working_set.time_window_hours / 2)  # recent context stays in the working set
        self._memory.writer.add_consolidated(created, pruned, now - half)
        self._memory.writer.set_endless("last_consolidation", from_store_time(now))  # (a run that made nothing too)
        return {"ran": True, "created": len(created)}

    def _due(self, config: rules.EndlessConfig, now: datetime) -> bool:
        con = self._memory.con
        triggers = config.consolidation
        size = store.working_count(con, None, now)
        if size < triggers.min_events:
            return False
        last = self._last_consolidation()
        activity = store.last_activity(con)
        idle = activity is not None and (now - activity).total_seconds() >= triggers.trigger_idle_seconds
        stale = last is None or (now - last).total_seconds() >= triggers.trigger_interval_seconds
        return size >= triggers.trigger_event_count or idle or stale

    def _last_consolidation(self) -> datetime | None:
        found = store.config(self._memory.con).get("last_consolidation")
        return (
            datetime.fromisoformat(found.replace("Z", "+00:00")).replace(tzinfo=None)
            if isinstance(found, str)
            else None
        )

    # ------------------------------------------------------------------ reads

    def status(self, project: str | None) -> dict[str, Any]:
        """``{mode, working_set, continuity, transition, consolidated, last_consolidation, transitions_24h}``."""
        con = self._memory.con
        now = utc_now()
        score, transition = store.continuity_since(con, project, now - timedelta(hours=1))
        last = self._last_consolidation()
        return {
            "mode": self.mode(),
            "working_set": store.working_count(con, project, now),
            "continuity": round(score, 4) if score is not None else 0.5,
            "transition": transition,
            "consolidated": store.consolidated_count(con, project),
            "last_consolidation": from_store_time(last),
            "transitions_24h": store.transitions(con, now - timedelta(hours=24)),
        }

    def working_set(self, project: str | None, limit: int = 100) -> list[dict[str, Any]]:
        minimum = self.config().working_set.min_relevance_score
        found = store.working(self._memory.con, project, utc_now(), limit, minimum)
        return [
            {"citation": render(i.citation) if i.citation else None, "type": i.type, "project": i.project,
             "timestamp": from_store_time(i.ts), "relevance": i.relevance, "topics": i.topics, "text": i.text}
            for i in found
        ]  # fmt: skip

    def consolidated(self, project: str | None, limit: int = 20) -> list[dict[str, Any]]:
        out = store.consolidated(self._memory.con, project, limit)
        return [{**c, "created_at": from_store_time(c["created_at"])} for c in out]

    def session_context(self, project: str | None) -> dict[str, Any] | None:
        """What SessionStart gives in endless mode (None in session mode): the continuity line, the working set
        (relevance ≥ 0.7, at most 5) and the best consolidated memories (at most 3)."""
        if self.mode() != "endless":
            return None
        status = self.status(project)
        items = [i for i in self.working_set(project, CONTEXT_ITEMS * 3) if i["relevance"] >= CONTEXT_RELEVANCE]
        return {
            "transition": status["transition"] or "break",
            "score": status["continuity"],
            "working_set": items[:CONTEXT_ITEMS],
            "consolidated": self.consolidated(project, CONTEXT_CONSOLIDATED),
        }


def _snapshot(data: dict[str, Any]) -> rules.Snapshot:
    return rules.Snapshot(*(tuple(data.get(k) or ()) for k in ("topics", "files", "entities")))
