"""Graduation L0 -> L4 (seed §4.2, §4.3): a memory that keeps being useful climbs a level at a time.

A memory's accesses are its citation's uses (every retrieval that reached a person or Claude: prompt injection,
SessionStart, MCP details, CLI ``show``, LSP hover), kept in the store, so that the hook processes count too (the
seed's defect was an in-process map). It moves to the next level when all of that level's conditions hold; L4 is
terminal. Pure: the store gives the metrics, the service's worker writes the levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

MAX_LEVEL: Final = 4
NAMES: Final = ("L0 raw", "L1 used", "L2 recurring", "L3 trusted", "L4 core")

INTERVAL_SECONDS: Final = 300.0  # the worker's period (seed: 5 min)
BATCH: Final = 50  # memories evaluated per level and run
COOLDOWN: Final = timedelta(hours=1)  # a memory evaluated within the hour waits


@dataclass(frozen=True, slots=True)
class Criteria:
    """What moving up from a level needs (seed §4.2's table)."""

    min_accesses: int
    min_confidence: float
    min_cross_session: int  # distinct sessions that retrieved it, minus one
    max_days_idle: int  # since its last access: a stale memory does not climb


PROMOTION: Final[dict[int, Criteria]] = {
    0: Criteria(1, 0.5, 0, 30),
    1: Criteria(3, 0.7, 1, 60),
    2: Criteria(5, 0.85, 2, 90),
    3: Criteria(10, 0.92, 3, 180),
}


@dataclass(frozen=True, slots=True)
class Access:
    """A memory's access metrics, as derived from its citation uses."""

    count: int
    sessions: int  # distinct sessions (uses outside a session are not counted here)
    max_confidence: float
    last: datetime | None

    @property
    def cross_session(self) -> int:
        return max(0, self.sessions - 1)


@dataclass(frozen=True, slots=True)
class Verdict:
    promoted: bool
    level: int  # the level after this evaluation
    reason: str | None  # why it stays, in one phrase (None when promoted)


def evaluate(level: int, access: Access, now: datetime) -> Verdict:
    """Whether a memory at ``level`` with ``access`` moves up one level now, and if not, the first condition that
    fails (in the seed's order: accesses, confidence, sessions, staleness)."""
    if level >= MAX_LEVEL:
        return Verdict(False, MAX_LEVEL, "Already at maximum level")
    need = PROMOTION[level]
    if access.count < need.min_accesses:
        return Verdict(False, level, f"Access count {access.count} < {need.min_accesses}")
    if access.max_confidence < need.min_confidence:
        return Verdict(False, level, f"Confidence {access.max_confidence:.2f} < {need.min_confidence}")
    if access.cross_session < need.min_cross_session:
        return Verdict(False, level, f"Cross-session refs {access.cross_session} < {need.min_cross_session}")
    idle = (now - access.last).days if access.last is not None else None
    if idle is None or idle > need.max_days_idle:
        return Verdict(False, level, f"Last access {idle if idle is not None else '?'} days ago > {need.max_days_idle}")
    return Verdict(True, level + 1, None)


def name(level: int) -> str:
    return NAMES[max(0, min(level, MAX_LEVEL))]
