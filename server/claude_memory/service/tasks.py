"""The task projector (seed §11.6): folds every stored task tool call (``TodoWrite``, ``TaskCreate``, ``TaskUpdate``),
in the order they happened, into task events, entities, aliases and edges (:mod:`claude_memory.core.tasks`), and
stores them through the single writer.

The projection is current while its offset is the seq of the newest task call; new calls (an import, a capture) or
a forget (which resets the offset) make the next :meth:`TaskProjector.refresh` fold again. The fold runs over the
task calls only (a few per thousand events), so folding all of them again is what an incremental run does too: a
rebuild and a refresh give the same projection by construction, and the same dedupe keys. Calls stored before their
task operation was kept (``metadata.task``) are read again from their transcript lines.

The board a fold ends with is stored with the projection (``task_board``): later calls fold into it, in this process
or a later one, without folding every call again, and a quiet service hands it back (:meth:`TaskProjector.release`):
at 100k events it is 8,600 entities, tens of MB held for the next call.
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa

from claude_memory.core.citations import render
from claude_memory.core.privacy import PrivacyReport
from claude_memory.core.tasks import Board, Call, task_op
from claude_memory.service.contract import NotFound
from claude_memory.service.reread import reread_call
from claude_memory.store import tasks as store
from claude_memory.store.db import from_store_time

if TYPE_CHECKING:
    from claude_memory.service.memory import Memory

log = logging.getLogger("claude_memory.service")

OPEN_STATUSES: tuple[str, ...] = ("in_progress", "blocked", "pending")
FACE_FOLD_SECONDS = 5.0  # how long a face's read in a service helps a fold from the start before reading what is stored
FACE_TASK_CALLS = 100  # task calls folded at a time meanwhile
ORDER = {s: n for n, s in enumerate(("in_progress", "blocked", "pending", "done", "cancelled"))}


Item = tuple[Any, int, int, "store.StoredCall | store.Correction"]  # (time, 0 call | 1 correction, seq, it)


def _order(item: Item) -> tuple[bool, datetime, int, int]:
    """The fold's order: by time (none last), a person's correction after the calls of its time, then storage."""
    return (item[0] is None, item[0] or datetime.min, item[1], item[2])


@dataclass(slots=True)
class _Folded:
    """The projection as last written, with the board it came from, so that later calls fold into it."""

    board: Board
    last: tuple[bool, datetime, int, int]  # the order of the last item folded
    state: int  # the offset written with it
    events: int  # how many task events are stored (the last one's seq)

    def encode(self) -> bytes:
        """As stored in ``task_board`` (:meth:`decode` reads it back)."""
        none, ts, kind, seq = self.last
        kept = {"board": self.board.dump(), "last": [none, ts.isoformat(), kind, seq], "events": self.events}
        return zlib.compress(orjson.dumps(kept), 1)

    @staticmethod
    def decode(state: int, body: bytes) -> _Folded:
        """ValueError (or a zlib or JSON error) for a body this version cannot read."""
        kept = orjson.loads(zlib.decompress(body))
        none, ts, kind, seq = kept["last"]
        last = (bool(none), datetime.fromisoformat(ts), int(kind), int(seq))
        return _Folded(Board.load(kept["board"]), last, state, int(kept["events"]))


@dataclass(slots=True)
class _Replay:
    """A fold from the start, under way a few calls at a time (the service's idle step)."""

    board: Board
    items: list[Item]
    done: int  # items folded so far
    emitted: list[dict[str, Any]]
    offset: int | None  # the store's offset when it started
    newest: int  # the newest call it holds


class TaskProjector:
    """Keeps the task projection current. Use from the thread that owns the store.

    New calls that all come after the ones folded (a live session's) are folded into the board kept from the last
    fold (held, or read from the store) and only what they add is written; anything else folds everything again: at
    once after a person's correction or a forget, a few calls per quiet idle step otherwise (an import of older
    history). Both give the same projection: the fold is a replay in one order."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._folded: _Folded | None = None
        self._replay: _Replay | None = None
        self.behind = False  # after a refresh: a fold from the start is under way, or waits (``most=0``)
        self.background = False  # a service's: its idle step folds from the start, faces do not wait for it

    def refresh(
        self, *, force: bool = False, most: int | None = None, warm: bool = False, bounded: bool = False
    ) -> bool:
        """Fold again when task calls came or went since the last fold (or when ``force``); True if it did. With
        ``most``, a fold from the start folds at most that many calls per refresh and writes when it reaches the
        end, so that the service's idle step never holds a hook up for long (True while it goes on); ``most=0``
        folds only later calls into the kept board and leaves a fold from the start for later (:attr:`behind`).
        ``warm`` (the service's idle step): with no board stored for the projection (a store from before boards were
        kept), fold to make one even when the projection is current, so that the next calls fold into it. ``bounded``
        (where no other thread queries the store): a fold from the start reads the calls with DuckDB's cache held to
        its bound (:meth:`Memory.bounded`)."""
        con = self._memory.con
        newest = store.newest_call(con)
        offset = store.offset(con)
        self.behind = False
        unboarded = warm and self._folded is None and (self._replay is not None or store.board_state(con) != offset)
        if not force and offset == newest and not unboarded:
            return False  # (a fold under way to make the board goes on at the idle step's next call)
        folded = self._restore(offset) if not force and self._replay is None and offset is not None else None
        if folded is not None:
            later = self._items(store.calls(con, after=folded.state), [])
            if later and _order(later[0]) >= folded.last:
                emitted = {e["dedupe_key"]: e for e in self._apply(folded.board, later)}
                known = store.known_keys(con, list(emitted))
                fresh = [e for key, e in emitted.items() if key not in known]
                events = self._events_table(fresh, folded.events + 1)
                folded.last, folded.state, folded.events = _order(later[-1]), newest, folded.events + len(fresh)
                self._write(folded, events, add=True)
                return True
        if most == 0 and not force:
            self.behind = True
            return False
        replay = self._replay if not force else None
        if replay is not None and (replay.offset != offset or not self._extend(replay, newest)):
            replay = None  # the store changed otherwise than by later calls: start again
        if replay is None:
            calls = self._memory.bounded(lambda: store.calls(con)) if bounded else store.calls(con)
            replay = _Replay(Board(), self._items(calls, store.corrections(con)), 0, [], offset, newest)
        end = len(replay.items) if most is None else min(len(replay.items), replay.done + most)
        replay.emitted += self._apply(replay.board, replay.items[replay.done : end])
        # a bounded fold that folded its last calls writes at the next refresh, when the caller has handed back memory
        # (:attr:`writing_next`): the write is a new service's largest moment
        unwritten = end < len(replay.items) or (most is not None and end > replay.done)
        replay.done = end
        self._replay = replay if unwritten else None
        self.behind = self._replay is not None
        if self._replay is None:
            last = _order(replay.items[-1]) if replay.items else (False, datetime.min, 0, 0)
            unique = list({e["dedupe_key"]: e for e in replay.emitted}.values())
            events = self._events_table(unique, 1)
            self._folded = _Folded(replay.board, last, replay.newest, events.num_rows)
            # what was read and emitted goes before the write (at 100k events: 2,100 calls with the words around them,
            # 15,000 event rows), so that the write's own memory reuses theirs
            replay.items, replay.emitted, unique = [], [], []
            if replay.offset != replay.newest:
                self._write(self._folded, events)
            else:  # (a projection already current is not written again: only the board it came from)
                self._memory.writer.keep_task_board(replay.newest, self._folded.encode())
        return True

    @property
    def writing_next(self) -> bool:
        """A fold from the start has folded every call, and the next refresh writes what it made."""
        return self._replay is not None and self._replay.done == len(self._replay.items)

    def _restore(self, offset: int) -> _Folded | None:
        """The board of the projection at ``offset``, held from now on: the one held, or the one stored with it. None
        if there is none (a store from before boards were kept, or one this version cannot read)."""
        if self._folded is None or self._folded.state != offset:
            body = store.board(self._memory.con, offset)
            try:
                self._folded = _Folded.decode(offset, body) if body is not None else None
            except (ValueError, KeyError, TypeError, zlib.error) as exc:
                log.info("The stored task board could not be read (%s); the task calls are folded again.", exc)
                self._folded = None
        return self._folded

    def release(self) -> None:
        """Hand back the board held for the next call (the service's quiet moments): it is stored with the
        projection, and read again when a call comes."""
        self._folded = None

    def _extend(self, replay: _Replay, newest: int) -> bool:
        """Add the calls stored since ``replay`` started, if they all come after its items; False if they do not."""
        if newest == replay.newest:
            return True
        later = self._items(store.calls(self._memory.con, after=replay.newest), [])
        if replay.items and later and _order(later[0]) < _order(replay.items[-1]):
            return False
        replay.items += later
        replay.newest = newest
        return True

    @staticmethod
    def _items(calls: list[store.StoredCall], corrections: list[store.Correction]) -> list[Item]:
        items: list[Item] = [(c.ts, 0, c.seq, c) for c in calls]
        items += [(c.ts, 1, c.seq, c) for c in corrections]
        return sorted(items, key=_order)

    def _apply(self, board: Board, items: list[Item]) -> list[dict[str, Any]]:
        """Fold ``items`` into ``board``, in order; the task events it emitted."""
        emitted: list[dict[str, Any]] = []
        unread = 0
        for _ts, _kind, _seq, item in items:
            if isinstance(item, store.Correction):
                op = {"kind": "correction", "action": item.kind, "id": item.task_id, "into": item.into_id}
                call = Call(-item.seq, "user", None, None, op)  # cited by no call: a person's
                ts: Any = item.ts
            else:
                found_op = item.op
                if found_op is None:  # stored before task operations were kept: read again, filtered as at import
                    found = reread_call(item.source_path, item.byte_start, item.byte_end, item.tool_use_id)
                    found_op = task_op(item.tool_name, found[0], found[1], failed=found[2]) if found else None
                    if found_op is not None:
                        found_op = self._memory.privacy.filter_value(found_op, PrivacyReport())  # type: ignore[assignment]
                    unread += found is None
                if found_op is None:
                    continue
                # blockers in the words around a call about one task: Claude's just before it, and for an update (a
                # change the user usually asked for) the user's prompt too; never for a whole to-do list
                words = item.answer + ("\n" + item.prompt if found_op.get("kind") == "update" else "")
                call = Call(item.event_id, item.session_id, item.agent_id, item.project, found_op, words)
                ts = item.ts
            for event in board.apply(call):
                emitted.append({
                    "dedupe_key": event.dedupe_key(call.session_id, call.event_id), "type": event.type,
                    "task_id": event.task_id, "session_id": call.session_id, "source_event": call.event_id,
                    "ts": ts, "payload": json.dumps(event.payload, ensure_ascii=False, sort_keys=True),
                })  # fmt: skip
        if unread:
            log.info("%d older task tool calls could not be read again from their transcripts.", unread)
        return emitted

    @staticmethod
    def _events_table(emitted: list[dict[str, Any]], first_seq: int) -> pa.Table:
        """Task events as stored, numbered from ``first_seq``."""
        return pa.table(
            {
                name: [n + first_seq if name == "seq" else e[name] for n, e in enumerate(emitted)]
                for name in store.EVENT_SCHEMA.names
            },
            schema=store.EVENT_SCHEMA,
        )

    def _write(self, folded: _Folded, events: pa.Table, *, add: bool = False) -> None:
        """The task events (all of them; or, with ``add``, the ones to add), with the board's entities, aliases and
        edges in place of the stored ones, and the board itself."""
        board = folded.board
        entities = pa.table(
            {
                "id": [e.id for e in board.entities.values()],
                "type": [e.type for e in board.entities.values()],
                "title": [e.title for e in board.entities.values()],
                "project": [e.project for e in board.entities.values()],
                "current_json": [json.dumps(e.state, sort_keys=True) for e in board.entities.values()],
            },
            schema=store.ENTITY_SCHEMA,
        )
        aliases = sorted(board.aliases.items())
        self._memory.writer.write_tasks(
            events, entities, aliases, sorted(board.edges), folded.state, folded.encode(), add=add
        )

    # ------------------------------------------------------------------ reads for the faces

    def current(self) -> None:
        """Fold the new task calls in first, when this process may write (a face's read). Where the service's idle
        step folds from the start (:attr:`background`), a face helps for FACE_FOLD_SECONDS at most, then reads what is
        stored: such a fold took 2 s at 100k events and 111 s at a million."""
        if self._memory.read_only:
            return
        if not self.background:
            self.refresh()
            return
        deadline = time.monotonic() + FACE_FOLD_SECONDS
        while self.refresh(most=FACE_TASK_CALLS) and self.behind and time.monotonic() < deadline:
            pass

    def listing(
        self, project: str | None, statuses: tuple[str, ...], limit: int, *, fold: bool = True
    ) -> list[dict[str, Any]]:
        """Tasks as the faces show them: open ones first (in progress, blocked, pending), the most recently changed
        first within a status. Without ``fold`` (a hook), as stored: the idle step folds new calls in."""
        if fold:
            self.current()
        con = self._memory.con
        rows = store.tasks(con, project, statuses, status_order=tuple(ORDER), limit=limit)
        return [self._item(r) for r in rows]

    def detail(self, task_id: str) -> dict[str, Any]:
        """One task with its history; NotFound (one sentence) when there is none of that id."""
        self.current()
        con = self._memory.con
        found = store.entity(con, task_id)
        if found is None or found[1] != "task":
            raise NotFound(f"No task {task_id} is remembered; `claude-memory tasks` lists them.", task_id)
        entity_id, _kind, title, project, state = found
        rows = store.tasks(con, project, (), entity_id)
        row = rows[0] if rows else store.TaskRow(entity_id, title, project, state, None, None)
        history = [
            {"type": h["type"], "timestamp": from_store_time(h["ts"]), "session_id": h["session_id"],
             "citation": render(h["citation"]) if h["citation"] else None, **h["payload"]}
            for h in store.history(con, row.id)
        ]  # fmt: skip
        return {**self._item(row), "description": row.state.get("description") or "",
                "suggested_same": list(row.state.get("suggested_same") or []), "history": history}  # fmt: skip

    def correct(self, kind: str, task_id: str, into: str | None = None) -> dict[str, Any]:
        """A person's correction (close, cancel, or merge into another task), recorded so that a rebuild keeps it;
        the task as it is after it. NotFound (one sentence) for an unknown task."""
        self.current()
        found = store.entity(self._memory.con, task_id)
        if found is None or found[1] != "task":
            raise NotFound(f"No task {task_id} is remembered; `claude-memory tasks` lists them.", task_id)
        target = store.entity(self._memory.con, into) if into else None
        if into and (target is None or target[1] != "task"):
            raise ValueError(f"No task {into} is remembered to merge into.")
        if target is not None and target[0] == found[0]:
            raise ValueError("A task cannot be merged into itself.")
        self._memory.writer.correct_task(kind, found[0], target[0] if target else None)
        self.refresh(force=True)
        return self.detail(target[0] if target else found[0])

    def conditions(self, project: str | None, resolved: bool | None) -> list[dict[str, Any]]:
        """Conditions: blockers named in words that are neither a task nor an artifact, with the tasks they might be
        (candidates), what they resolved to (a task created later under that name), and the tasks they block."""
        self.current()
        con = self._memory.con
        out = []
        for cid, text, where, state, blocking in store.conditions(con, project):
            if resolved is not None and bool(state.get("resolved")) != resolved:
                continue
            titles = {i: (store.entity(con, i) or (i, "", i))[2] for i in [*state.get("candidates", []), *blocking]}
            target = store.entity(con, state["resolved_to"]) if state.get("resolved_to") else None
            out.append({
                "id": cid, "text": text, "project": where, "resolved": bool(state.get("resolved")),
                "placeholder": bool(state.get("auto_placeholder")),
                "resolved_to": {"id": target[0], "title": target[2]} if target else None,
                "candidates": [{"id": i, "title": titles[i]} for i in state.get("candidates", [])],
                "blocks": [{"id": i, "title": titles[i]} for i in blocking],
            })  # fmt: skip
        return out

    def rebuild(self) -> dict[str, int]:
        self.refresh(force=True)
        return {
            "tasks": len(store.tasks(self._memory.con, None, ())),
            "task_events": store.count_events(self._memory.con),
        }

    def _refs(self, ids: list[str]) -> list[dict[str, Any]]:
        out = []
        for i in ids:
            found = store.entity(self._memory.con, i)
            _id, kind, title, _project, state = found if found else (i, "unknown", i, None, {})
            placeholder = bool(state.get("auto_placeholder"))
            resolved = store.entity(self._memory.con, state["resolved_to"]) if state.get("resolved_to") else None
            out.append({"id": i, "type": kind, "title": title, "status": state.get("status"),
                        "placeholder": placeholder, "candidates": state.get("candidates", []),
                        "resolved_to": {"id": resolved[0], "title": resolved[2]} if resolved else None})  # fmt: skip
        return out

    def _item(self, row: store.TaskRow) -> dict[str, Any]:
        state = row.state
        return {
            "id": row.id,
            "title": row.title,
            "project": row.project,
            "status": state.get("status", "pending"),
            "blockers": self._refs(list(state.get("blockers") or [])),
            "blocker_suggestions": self._refs(list(state.get("blocker_suggestions") or [])),
            "first_ts": from_store_time(row.first_ts),
            "last_ts": from_store_time(row.last_ts),
            "citation": render(row.last_citation) if row.last_citation else None,
        }
