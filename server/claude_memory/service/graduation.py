"""The graduation worker (seed §4.3): every :data:`~claude_memory.core.graduation.INTERVAL_SECONDS` the service's idle
step evaluates up to :data:`~claude_memory.core.graduation.BATCH` used memories per level L0..L3 that were not
evaluated within the cooldown, and stores each one's level (promoted one level, or kept with its evaluation time).
``claude-memory graduate`` runs it now."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any

from claude_memory.core import graduation as rules
from claude_memory.store import learning
from claude_memory.store.db import from_store_time, utc_now

if TYPE_CHECKING:
    from claude_memory.service.memory import Memory


class Graduation:
    """Use from the thread that owns the store."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def run(self, *, now: datetime | None = None, cooldown: bool = True) -> dict[str, Any]:
        """One pass: ``{evaluated, graduated, by_level}`` (``by_level``: promotions out of each level)."""
        now = now or utc_now()
        con = self._memory.con
        since = now - rules.COOLDOWN if cooldown else now
        verdicts: list[tuple[int, int, bool]] = []
        for level in range(rules.MAX_LEVEL):
            for event_id, access in learning.candidates(con, level, since, rules.BATCH):
                verdict = rules.evaluate(level, access, now)
                verdicts.append((event_id, verdict.level, verdict.promoted))
        self._memory.writer.save_levels(verdicts)
        promoted = Counter(f"L{level - 1}" for _, level, up in verdicts if up)
        return {"evaluated": len(verdicts), "graduated": sum(promoted.values()), "by_level": dict(promoted)}

    def stats(self) -> dict[str, Any]:
        """``{levels: {L0: n, ...}, last_run}``."""
        con = self._memory.con
        last = learning.last_run(con)
        return {
            "levels": {f"L{lv}": n for lv, n in learning.histogram(con).items()},
            "last_run": from_store_time(last),
        }
