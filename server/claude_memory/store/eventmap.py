"""An in-memory map of the store for ranking: each event's session, project, type, time, session
neighbours and text traits (length, question, names a time), and which event each vector label belongs
to, as numpy arrays.

Ranking touches hundreds of candidates per query; asking DuckDB about them costs a scan of the events
table per question (8-40 ms at 100k events; ``bench/README.md``). The map answers the same in well
under a millisecond. It is derived data: read from DuckDB whole the first time and after a forget (57-85 ms at
100k events on 2 cores, ~1 s at a million), new events merged into their places, and extended with new vector
labels as they are embedded. About 50 bytes per
event and 16 per chunk.
:class:`~claude_memory.store.postings.PostingsIndex` applies search filters through :meth:`EventMap.admitted`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from claude_memory.core.filters import EventFilters
from claude_memory.core.ranking import NO_TIME, Facts, Scope, micros
from claude_memory.store import queries
from claude_memory.store.db import to_store_time

MAX_HOPS = 64  # how far a neighbour is looked for past events the filters exclude
# New events are merged into their sessions' places (0.1-0.2 s at a million events, against ~1 s to read the map
# again and ~1 s more to map every vector label again) unless they are more than this share of the map, or come
# from more sessions than MERGE_SESSIONS (an import of history): then the map is read again whole.
MERGE_SHARE = 0.05
MERGE_SESSIONS = 256
_FACTS = (
    "SELECT id, seq, session_id, project, type, epoch_us(ts) AS ts, kw_len, coalesce(is_question, false) AS question, "
    "coalesce(names_time, false) AS names_time FROM events"
)

Int64s = npt.NDArray[np.int64]
Int32s = npt.NDArray[np.int32]


def _more_codes(values: list[Any], column: pa.ChunkedArray) -> Int32s:
    """Codes of a string column in ``values`` (-1 for null), values not seen before appended to it."""
    known = {value: code for code, value in enumerate(values)}
    codes = np.empty(len(column), dtype=np.int32)
    for n, value in enumerate(column.to_pylist()):
        if value is None:
            codes[n] = -1
            continue
        code = known.get(value)
        if code is None:
            code = known[value] = len(values)
            values.append(value)
        codes[n] = code
    return codes


def _numbers(table: pa.Table) -> dict[str, npt.NDArray[Any]]:
    """The facts of a :data:`_FACTS` read that the map holds as numbers: ids, times (NO_TIME if unknown), lengths and
    traits, by their :class:`_Events` field names."""
    return {
        "ids": table["id"].to_numpy().astype(np.int64),
        "ts": table["ts"].combine_chunks().fill_null(NO_TIME).to_numpy(zero_copy_only=False).astype(np.int64),
        "length": table["kw_len"].to_numpy().astype(np.int32),
        "question": table["question"].to_numpy(zero_copy_only=False).astype(bool),
        "names_time": table["names_time"].to_numpy(zero_copy_only=False).astype(bool),
    }


def _indexed(ids: Int64s, **fields: Any) -> _Events:
    """The events, with their positions sorted by id for lookups."""
    by_id = np.argsort(ids, kind="stable").astype(np.int64)
    return _Events(ids=ids, by_id=by_id, sorted_ids=ids[by_id], **fields)


def _after_insert(positions: npt.NDArray[Any], inserted: Int64s) -> Int64s:
    """Where old map positions are once new events were put before the (sorted) indices ``inserted``, as
    ``np.insert`` puts them: each moves by the events inserted at or before it."""
    return positions + np.searchsorted(inserted, positions, side="right")


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
    length: Int32s  # indexed terms (events.kw_len)
    question: npt.NDArray[np.bool_]  # events.is_question (store/traits.py)
    names_time: npt.NDArray[np.bool_]  # events.names_time

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
        self._changes: int | None = None  # the write count the generation was read at
        self._labels: Int64s = np.empty(0, dtype=np.int64)  # sorted
        self._label_pos: Int64s = np.empty(0, dtype=np.int64)  # event position of each label
        self._pos_of_label: Int32s = np.empty(0, dtype=np.int32)  # the same, indexed by label (-1: none)
        self._chunk_order: Int64s = np.empty(0, dtype=np.int64)  # labels by event position
        self._chunk_pos: Int64s = np.empty(0, dtype=np.int64)
        self._layout = 0  # bumped whenever positions change meaning (events were read or merged in)
        self._seq = 0  # the highest ``seq`` of the events read
        self.loads = 0  # times the events were read whole

    def refresh(self, con: duckdb.DuckDBPyConnection, changes: int | None = None) -> tuple[int, int, int]:
        """Bring the map level with the store (one cheap query when nothing changed); returns the store's
        generation (:func:`queries.generation`) the map now reflects. ``changes`` is the write count of the
        process that writes the store (:class:`~claude_memory.store.writer.Changes`), when that is this
        process: while it stands still, not even that query is needed (1-2 ms at 100k events)."""
        if changes is not None and changes == self._changes and self._generation is not None:
            return self._generation
        generation = queries.generation(con)
        if generation == self._generation:
            self._changes = changes
            return generation
        if self._generation is None or generation[1] != self._generation[1] or generation[0] < self._generation[0]:
            self._load_events(con)  # the first time, or events were forgotten
        elif generation[0] != self._generation[0] and not self._merge_events(con):
            self._load_events(con)
        self._load_chunks(con)
        self._generation, self._changes = generation, changes
        return generation

    @property
    def generation(self) -> tuple[int, int, int] | None:
        """The store's generation the map reflects (None before its first refresh)."""
        return self._generation

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

    def admitted(self, positions: Int64s, filters: EventFilters) -> npt.NDArray[np.bool_]:
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

    def admitted_chunks(self, filters: EventFilters) -> tuple[Int64s, Int64s]:
        """(labels, event positions) of every embedded chunk of the events the filters admit, in event order."""
        keep = self.admitted(self._chunk_pos, filters)
        return self._chunk_order[keep], self._chunk_pos[keep]

    def events_of_labels(self, labels: Int64s) -> Int64s:
        """Event positions of vector labels; -1 for labels the map does not know."""
        dense = self._pos_of_label  # (a lookup, not a binary search over every label)
        inside = (labels >= 0) & (labels < len(dense))
        out = np.full(len(labels), -1, dtype=np.int64)
        out[inside] = dense[labels[inside]]
        return out

    def labels_of(self, positions: Int64s) -> tuple[Int64s, Int64s]:
        """(labels, counts): the labels of every chunk of the events at ``positions``, grouped by event in the
        order given, and how many each event has (0 for one not embedded yet)."""
        start = np.searchsorted(self._chunk_pos, positions, side="left")
        counts = np.searchsorted(self._chunk_pos, positions, side="right") - start
        # the chunk rows start[k] .. start[k] + counts[k] - 1 of every position, in one go
        index = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(start - (np.cumsum(counts) - counts), counts)
        return self._chunk_order[index], counts.astype(np.int64)

    def id_at(self, positions: Int64s) -> Int64s:
        return self._require().ids[positions]

    def facts(self, ids: list[int] | Int64s, filters: EventFilters, scope: Scope | None = None) -> Facts:
        """Ranking's facts (:class:`~claude_memory.core.ranking.Facts`) of the admitted ``ids``, of their
        nearest admitted neighbours each side, and of the admitted event after the next one (about 1 ms
        for the ~1,000 of a hybrid query)."""
        events = self._require()
        pos = self.positions(ids)
        pos = np.unique(pos[pos >= 0])
        pos = pos[self.admitted(pos, filters)]
        prev = self._neighbour(pos, -1, filters)
        nxt = self._neighbour(pos, +1, filters)
        after = self._neighbour(nxt[nxt >= 0], +1, filters)  # two after: the follow-up's follow-up
        # neighbours not asked for
        extra = np.setdiff1d(np.concatenate([prev[prev >= 0], nxt[nxt >= 0], after[after >= 0]]), pos)
        wanted = np.concatenate([pos, extra])
        prev_all = np.concatenate([prev, self._neighbour(extra, -1, filters)])
        next_all = np.concatenate([nxt, self._neighbour(extra, +1, filters)])
        by_position = np.argsort(wanted)
        ordered = wanted[by_position]

        def rows(positions: Int64s) -> Int64s:  # row of each position among ``wanted``, -1 if not there
            if not len(ordered):
                return np.full(len(positions), -1, dtype=np.int64)
            found = np.searchsorted(ordered, positions).clip(0, len(ordered) - 1)
            return np.where((positions >= 0) & (ordered[found] == positions), by_position[found], -1)

        session = events.session[wanted]
        same_session = np.zeros(len(wanted), dtype=bool)
        same_project = np.zeros(len(wanted), dtype=bool)
        if scope is not None and scope.session_id is not None:
            same_session = session == events.code(events.sessions, scope.session_id)
        if scope is not None and scope.project is not None:
            same_project = events.project[wanted] == events.code(events.projects, scope.project)
        return Facts(
            ids=events.ids[wanted],
            session=session.astype(np.int64),
            ts=events.ts[wanted],
            length=events.length[wanted].astype(np.int64),
            question=events.question[wanted],
            names_time=events.names_time[wanted],
            user=events.type[wanted] == events.code(events.types, "user_prompt"),
            prev=rows(prev_all),
            next=rows(next_all),
            same_session=same_session,
            same_project=same_project,
        )

    # ------------------------------------------------------------------ internals

    def _require(self) -> _Events:
        if self._events is None:
            raise RuntimeError("EventMap.refresh() must run before lookups.")
        return self._events

    def _neighbour(self, positions: Int64s, step: int, filters: EventFilters) -> Int64s:
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
        table = con.execute(f"{_FACTS} ORDER BY session_id, ts NULLS LAST, seq").to_arrow_table()
        self.loads += 1
        self._seq = int(pc.max(table["seq"]).as_py() or 0)
        session, sessions = _codes(table["session_id"])
        project, projects = _codes(table["project"])
        kind, types = _codes(table["type"])
        self._events = _indexed(session=session, sessions=sessions, project=project, projects=projects, type=kind,
                                types=types, **_numbers(table))  # fmt: skip
        self._layout += 1
        self._labels = np.empty(0, dtype=np.int64)  # positions changed: chunks are mapped again
        self._label_pos = np.empty(0, dtype=np.int64)
        self._pos_of_label = np.empty(0, dtype=np.int32)

    def _merge_events(self, con: duckdb.DuckDBPyConnection) -> bool:
        """Merge the events stored since the map was read (``seq`` above the highest read) into their places: after
        their session's events of the same or an earlier time (NULL times last), a new session's after every other
        (session codes stay in the map's order: a session's events consecutive, codes ascending); positions move, so
        the vector labels' positions are moved with them. False when the map should be read again whole."""
        events = self._require()
        table = con.execute(
            f"{_FACTS} WHERE seq > ? ORDER BY session_id, ts NULLS LAST, seq", [self._seq]
        ).to_arrow_table()
        n, added = len(events.ids), table.num_rows
        if added > MERGE_SHARE * n or len(pc.unique(table["session_id"])) > MERGE_SESSIONS:
            return False
        if added == 0:
            return True
        session = _more_codes(events.sessions, table["session_id"])
        new = _numbers(table)
        ts = new["ts"]
        at = np.empty(added, dtype=np.int64)
        for code in np.unique(session):
            rows = np.flatnonzero(session == code)
            lo, hi = (int(i) for i in np.searchsorted(events.session, [code, code + 1]))
            timed = lo + int(np.count_nonzero(events.ts[lo:hi] != NO_TIME))  # its events with a time come first
            known = ts[rows] != NO_TIME
            at[rows[~known]] = hi
            at[rows[known]] = lo + np.searchsorted(events.ts[lo:timed], ts[rows[known]], side="right")
        # old positions move by the events inserted before them (_after_insert); a new event's is its at[i] plus the
        # new events put before it (numpy's order: at[], stably sorted)
        order = np.argsort(at, kind="stable")
        inserted = at[order]
        placed = np.empty(added, dtype=np.int64)
        placed[order] = inserted + np.arange(added)
        # the lookup by id merged too, not sorted again (a million ids: 100 ms)
        by_rank = np.argsort(new["ids"], kind="stable")
        slots = np.searchsorted(events.sorted_ids, new["ids"][by_rank])
        self._events = _Events(
            by_id=np.insert(_after_insert(events.by_id, inserted), slots, placed[by_rank]),
            sorted_ids=np.insert(events.sorted_ids, slots, new["ids"][by_rank]),
            session=np.insert(events.session, at, session),
            sessions=events.sessions,
            project=np.insert(events.project, at, _more_codes(events.projects, table["project"])),
            projects=events.projects,
            type=np.insert(events.type, at, _more_codes(events.types, table["type"])),
            types=events.types,
            **{field: np.insert(getattr(events, field), at, values) for field, values in new.items()},
        )
        self._seq = max(self._seq, int(pc.max(table["seq"]).as_py()))
        self._layout += 1
        # _load_chunks then orders the chunks by their new positions
        self._label_pos = _after_insert(self._label_pos, inserted)
        mapped = self._pos_of_label >= 0
        self._pos_of_label[mapped] = _after_insert(self._pos_of_label[mapped], inserted)
        return True

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
        if len(labels):
            top = int(labels[-1]) + 1
            if top > len(self._pos_of_label):  # grown by doubling: embedding adds labels a batch at a time
                grown = np.full(max(top, 2 * len(self._pos_of_label)), -1, dtype=np.int32)
                grown[: len(self._pos_of_label)] = self._pos_of_label
                self._pos_of_label = grown
            self._pos_of_label[labels] = owners
        order = np.argsort(self._label_pos, kind="stable")
        self._chunk_order = self._labels[order]
        self._chunk_pos = self._label_pos[order]


def _micros(when: datetime) -> int:
    return micros(to_store_time(when))  # stored times are naive UTC
