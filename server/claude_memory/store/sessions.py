"""Reads about one session for its summary: its events, its title and project, and a project's latest
other session with the summary written when it ended. (The list of sessions is :func:`queries.sessions`.)"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import duckdb


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """The parts of a session's event that its summary uses."""

    type: str
    text: str
    tool_name: str | None
    files: tuple[str, ...]
    ts: datetime | None


@dataclass(frozen=True, slots=True)
class SessionHeading:
    title: str | None
    project: str | None


@dataclass(frozen=True, slots=True)
class LastSession:
    session_id: str
    summary: str | None  # written at SessionEnd; None if the session has not ended (or its summary went)


def session_events(con: duckdb.DuckDBPyConnection, session_id: str) -> list[SessionEvent]:
    """The session's events in the order they were stored."""
    rows = con.execute(
        "SELECT type, text, tool_name, files, ts FROM events WHERE session_id = ? ORDER BY seq", [session_id]
    ).fetchall()
    return [SessionEvent(str(r[0]), str(r[1]), r[2], tuple(r[3] or ()), r[4]) for r in rows]


def session_heading(con: duckdb.DuckDBPyConnection, session_id: str) -> SessionHeading | None:
    """The session's title and project; None if the store has no such session."""
    row = con.execute("SELECT title, project FROM sessions WHERE session_id = ?", [session_id]).fetchone()
    return SessionHeading(row[0], row[1]) if row else None


def last_other_session(con: duckdb.DuckDBPyConnection, project: str, current: str) -> LastSession | None:
    """The project's most recently active session other than ``current``, with its SessionEnd summary."""
    row = con.execute(
        "SELECT s.session_id, e.summary FROM sessions s LEFT JOIN session_ends e USING (session_id) "
        "WHERE s.project = ? AND s.session_id <> ? ORDER BY s.last_ts DESC NULLS LAST LIMIT 1",
        [project, current],
    ).fetchone()
    return LastSession(str(row[0]), str(row[1]) if row[1] else None) if row else None
