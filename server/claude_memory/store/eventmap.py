"""An in-memory map of the store for ranking: each event's session, project, type, time and session
neighbours, and which event each vector label belongs to, as numpy arrays.

Ranking touches hundreds of candidates per query; asking DuckDB about them costs a scan of the events
table per question (8-40 ms at 100k events; ``bench/README.md``). The map answers the same in well
under a millisecond. It is derived data: rebuilt from DuckDB when events were added or forgotten (85 ms
at 100k events on 2 cores), and extended with new vector labels as they are embedded. About 50 bytes per
event and 16 per chunk, plus a 48-byte datetime per event once ranking has asked for its time (made once:
building the ~1,000 candidates of a hybrid query with fresh datetimes was a third of their cost).
:class:`~claude_memory.store.postings.PostingsIndex` applies search filters through :meth:`EventMap.admitted`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from claude_memory.core.ranking import Candidate
from claude_memory.store import queries
from claude_memory.store.db import to_store_time
from claude_memory.store.keyword import KeywordFilters

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NO_TIME = np.iinfo(np.int64).min  # an event without a timestamp
MAX_HOPS = 64  # how far a neighbour is looked for past events the filters exclude

Int64s = npt.NDArray[np.int64]
Int32s = npt.NDArray[np.int32]


def _codes(column: pa.ChunkedArray) -> tuple[Int32s, list[Any]]:
    """Dictionary codes of a string column (-1 for null) and the code -> value list."""
    encoded = column.combine_chunks().dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
    return codes, encoded.dictionary.to_pylist()


@dataclass(slots=True)
class _Events:
    ids: Int64s  # in (session, time, seq) order: a session's events are consecutive
    by_id: Int64s  # positions sorted by id, for lookups
    sorted_ids: Int64s  # ids[by_id], kept rather than gathered again on every lookup
    session: Int32s
    sessions: list[str]
    project: Int32s
    projects: list[str | None]
    type: Int32s
    types: list[str]
    ts: Int64s  # microseconds since the epoch, NO_TIME if unknown
    session_names: npt.NDArray[np.object_]  # sessions as an array, for gathering
    project_names: npt.NDArray[np.object_]  # projects as an array, plus None last (code -1)

    times_made: npt.NDArray[np.bool_]  # which entries of ``datetimes`` are made
    datetimes: npt.NDArray[np.object_]  # ts as aware datetimes (None if unknown), made on first use

    def times(self, positions: Int64s) -> list[datetime | None]:
        """The times at ``positions`` as aware datetimes: made once per event (1,000 cost 0.6 ms), then cached."""
        new = positions[~self.times_made[positions]]
        if len(new):
            self.datetimes[new] = [
                None if t == NO_TIME else _EPOCH + timedelta(microseconds=t) for t in self.ts[new].tolist()
            ]
            self.times_made[new] = True
        made: list[datetime | None] = self.datetimes[positions].tolist()
        return made

    def code(self, values: list[Any], value: Any) -> int:
        """The code of ``value`` in one of the code lists; -2 (matches nothing) if absent."""
        try:
            return values.index(value)
        except ValueError:
            return -2


class EventMap:
    def __init__(self) -> None:
        self._events: _Events | None = None
        self._generation: tuple[int, int, int] | None = None
        self._labels: Int64s = np.empty(0, dtype=np.int64)  # sorted
        self._label_pos: Int64s = np.empty(0, dtype=np.int64)  # event position of each label
        self._chunk_order: Int64s = np.empty(0, dtype=np.int64)  # labels by event position
        self._chunk_pos: Int64s = np.empty(0, dtype=np.int64)
        self._layout = 0  # bumped whenever positions change meaning (the events were reloaded)

    def refresh(self, con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
        """Bring the map level with the store (one cheap query when nothing changed); returns the store's
        generation (:func:`queries.generation`) the map now reflects."""
        generation = queries.generation(con)
        if generation == self._generation:
            return generation
        if self._generation is None or generation[:2] != self._generation[:2]:
            self._load_events(con)
        self._load_chunks(con)
        self._generation = generation
        return generation

    @property
    def layout(self) -> int:
        """Changes whenever map positions change meaning: a position from one layout is not one of the next."""
        return self._layout

    # ------------------------------------------------------------------ lookups

    def positions(self, ids: list[int] | Int64s) -> Int64s:
        """Map positions of ``ids``; -1 for ids the map does not hold."""
        events = self._require()
        wanted = np.asarray(ids, dtype=np.int64)
        sorted_ids = events.sorted_ids
        found = np.searchsorted(sorted_ids, wanted).clip(0, max(len(sorted_ids) - 1, 0))
        hit = (sorted_ids[found] == wanted) if len(sorted_ids) else np.zeros(len(wanted), dtype=bool)
        return np.where(hit, events.by_id[found] if len(sorted_ids) else -1, -1)

    def admitted(self, positions: Int64s, filters: KeywordFilters) -> npt.NDArray[np.bool_]:
        """Which positions (all valid) the filters let through."""
        events = self._require()
        keep = np.ones(len(positions), dtype=bool)
        if filters.project is not None:
            keep &= events.project[positions] == events.code(events.projects, filters.project)
        if filters.session_id is not None:
            keep &= events.session[positions] == events.code(events.sessions, filters.session_id)
        if filters.types:
            codes = [events.code(events.types, t) for t in filters.types]
            keep &= np.isin(events.type[positions], codes)
        if filters.since is not None:
            keep &= events.ts[positions] >= _micros(filters.since)
        if filters.until is not None:
            keep &= (events.ts[positions] < _micros(filters.until)) & (events.ts[positions] != NO_TIME)
        return keep

    def events_of_labels(self, labels: Int64s) -> Int64s:
        """Event positions of vector labels; -1 for labels the map does not know."""
        if not len(self._labels):
            return np.full(len(labels), -1, dtype=np.int64)
        found = np.searchsorted(self._labels, labels).clip(0, len(self._labels) - 1)
        return np.where(self._labels[found] == labels, self._label_pos[found], -1)

    def labels_of(self, positions: Int64s) -> tuple[Int64s, Int64s]:
        """(labels, owning position) of every chunk of the events at ``positions``."""
        start = np.searchsorted(self._chunk_pos, positions, side="left")
        counts = np.searchsorted(self._chunk_pos, positions, side="right") - start
        owners = np.repeat(positions, counts)
        # the chunk rows start[k] .. start[k] + counts[k] - 1 of every position, in one go
        index = np.arange(len(owners), dtype=np.int64) + np.repeat(start - (np.cumsum(counts) - counts), counts)
        return self._chunk_order[index], owners

    def id_at(self, positions: Int64s) -> Int64s:
        return self._require().ids[positions]

    def candidates(self, ids: list[int], filters: KeywordFilters) -> dict[int, Candidate]:
        """Session facts of the admitted ``ids`` and of their nearest admitted neighbours each side."""
        events = self._require()
        pos = self.positions(ids)
        pos = pos[pos >= 0]
        pos = pos[self.admitted(pos, filters)]
        prev = self._neighbour(pos, -1, filters)
        nxt = self._neighbour(pos, +1, filters)
        extra = np.setdiff1d(np.concatenate([prev[prev >= 0], nxt[nxt >= 0]]), pos)  # neighbours not asked for
        wanted = np.concatenate([pos, extra])
        prev_all = np.concatenate([prev, self._neighbour(extra, -1, filters)])
        next_all = np.concatenate([nxt, self._neighbour(extra, +1, filters)])
        # Built column by column (numpy, then one map() over the columns): a loop over the ~1,000 candidates
        # of a hybrid query took 5 ms at 100k events, this takes about 1.5.
        before = np.where(prev_all >= 0, events.ids[prev_all], -1).tolist()  # ids are >= 0 (63-bit hashes)
        after = np.where(next_all >= 0, events.ids[next_all], -1).tolist()
        facts = map(
            Candidate,
            events.session_names[events.session[wanted]].tolist(),
            events.project_names[events.project[wanted]].tolist(),  # code -1 (no project) is the last: None
            events.times(wanted),
            [None if i < 0 else i for i in before],
            [None if i < 0 else i for i in after],
        )
        return dict(zip(events.ids[wanted].tolist(), facts, strict=True))

    # ------------------------------------------------------------------ internals

    def _require(self) -> _Events:
        if self._events is None:
            raise RuntimeError("EventMap.refresh() must run before lookups.")
        return self._events

    def _neighbour(self, positions: Int64s, step: int, filters: KeywordFilters) -> Int64s:
        """The nearest position ``step`` away in the same session that the filters admit, or -1."""
        events = self._require()
        result = np.full(len(positions), -1, dtype=np.int64)
        current = positions.copy()
        pending = np.arange(len(positions))
        for _ in range(MAX_HOPS):
            if not len(pending):
                break
            candidate = current[pending] + step
            inside = (candidate >= 0) & (candidate < len(events.ids))
            inside[inside] &= events.session[candidate[inside]] == events.session[current[pending][inside]]
            pending, candidate = pending[inside], candidate[inside]
            ok = self.admitted(candidate, filters)
            result[pending[ok]] = candidate[ok]
            current[pending] = candidate
            pending = pending[~ok]
        return result

    def _load_events(self, con: duckdb.DuckDBPyConnection) -> None:
        table = con.execute(
            "SELECT id, session_id, project, type, epoch_us(ts) AS ts FROM events "
            "ORDER BY session_id, ts NULLS LAST, seq"
        ).to_arrow_table()
        ids = table["id"].to_numpy().astype(np.int64)
        session, sessions = _codes(table["session_id"])
        project, projects = _codes(table["project"])
        kind, types = _codes(table["type"])
        by_id = np.argsort(ids, kind="stable").astype(np.int64)
        ts = table["ts"].combine_chunks().fill_null(NO_TIME).to_numpy(zero_copy_only=False).astype(np.int64)
        self._events = _Events(
            ids=ids,
            by_id=by_id,
            sorted_ids=ids[by_id],
            session=session,
            sessions=sessions,
            project=project,
            projects=projects,
            type=kind,
            types=types,
            ts=ts,
            times_made=np.zeros(len(ids), dtype=bool),
            datetimes=np.full(len(ids), None, dtype=object),
            session_names=np.asarray(sessions, dtype=object),
            project_names=np.asarray([*projects, None], dtype=object),
        )
        self._layout += 1
        self._labels = np.empty(0, dtype=np.int64)  # positions changed: chunks are mapped again
        self._label_pos = np.empty(0, dtype=np.int64)

    def _load_chunks(self, con: duckdb.DuckDBPyConnection) -> None:
        known = int(self._labels[-1]) if len(self._labels) else -1
        table = con.execute(
            "SELECT label, event_id FROM chunks WHERE label > ? ORDER BY label", [known]
        ).to_arrow_table()
        labels = table["label"].to_numpy().astype(np.int64)
        owners = self.positions(table["event_id"].to_numpy().astype(np.int64).tolist())
        labels, owners = labels[owners >= 0], owners[owners >= 0]
        self._labels = np.concatenate([self._labels, labels])
        self._label_pos = np.concatenate([self._label_pos, owners])
        order = np.argsort(self._label_pos, kind="stable")
        self._chunk_order = self._labels[order]
        self._chunk_pos = self._label_pos[order]


def _micros(when: datetime) -> int:
    stored = to_store_time(when)
    return int((stored.replace(tzinfo=UTC) - _EPOCH) / timedelta(microseconds=1))
