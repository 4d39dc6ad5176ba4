"""The search's event map merges new events into their sessions' places instead of reading every event again (~1 s
at a million events), and the map it makes is the one a fresh read makes: every event's facts, its neighbours in its
session (time order, events without a time last) and the vector labels it owns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from claude_memory.core.ranking import NO_TIME
from claude_memory.service.memory import Memory
from claude_memory.store import eventmap
from claude_memory.store.eventmap import EventMap

WORK, INFRA = "/nonexistent/work", "/nonexistent/infra"


def _line(session: str, uuid: str, text: str, minute: int | None, cwd: str = WORK) -> str:
    line: dict[str, Any] = {"type": "user", "uuid": uuid, "sessionId": session, "cwd": cwd,
                            "message": {"role": "user", "content": text}}  # fmt: skip
    if minute is not None:
        line["timestamp"] = f"2026-06-01T08:{minute:02d}:00.000Z"
    return json.dumps(line) + "\n"


def _write(home: Path, session: str, lines: list[str]) -> None:
    folder = home / "projects" / "-nonexistent-work"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{session}.jsonl").open("a") as fh:
        fh.writelines(lines)


def _embed_all(memory: Memory) -> None:
    """A chunk row (a vector label) for every event without one, as the embedding worker adds them."""
    memory.con.execute(
        "INSERT INTO chunks SELECT (SELECT next_label FROM label_counter) + row_number() OVER (ORDER BY e.id) - 1, "
        "e.id, 0, 'h' FROM events e WHERE e.id NOT IN (SELECT event_id FROM chunks)"
    )
    memory.con.execute("UPDATE label_counter SET next_label = (SELECT coalesce(max(label), -1) + 1 FROM chunks)")


def _canonical(events: EventMap) -> dict[int, tuple[Any, ...]]:
    """Every event's facts by id, with its session neighbours' ids and its labels: what the map means, whatever
    positions and codes it uses."""
    held = events._require()
    out: dict[int, tuple[Any, ...]] = {}
    for p, event_id in enumerate(held.ids.tolist()):
        same = [q for q in (p - 1, p + 1) if 0 <= q < len(held.ids) and held.session[q] == held.session[p]]
        neighbours = tuple(int(held.ids[q]) if q in same else None for q in (p - 1, p + 1))
        labels, _ = events.labels_of(events.positions([event_id]))
        out[int(event_id)] = (
            held.sessions[held.session[p]],
            held.projects[held.project[p]] if held.project[p] >= 0 else None,
            held.types[held.type[p]],
            int(held.ts[p]),
            int(held.length[p]),
            bool(held.question[p]),
            bool(held.names_time[p]),
            neighbours,
            tuple(sorted(labels.tolist())),
        )
    return out


def _owners(events: EventMap, labels: int) -> list[int | None]:
    """The event of each label below ``labels``, looked up by label (None: no event)."""
    positions = events.events_of_labels(np.arange(labels, dtype=np.int64))
    return [int(events.id_at(np.array([p]))[0]) if p >= 0 else None for p in positions.tolist()]


def test_new_events_merged_into_the_map_give_the_map_a_fresh_read_gives(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(eventmap, "MERGE_SHARE", 2.0)  # (a map this small is read again whole, else)
    home = tmp_path / "claude"
    first = [_line("s-b", "b1", "first step", 10), _line("s-b", "b3", "third step", 30)]
    _write(home, "s-b", [*first, _line("s-b", "b5", "fifth step", 50), _line("s-b", "bx", "a note without time", None)])
    _write(home, "s-d", [_line("s-d", "d1", "deploy the infra", 5, INFRA), _line("s-d", "d2", "then verify", 15)])
    with Memory(tmp_path / "data") as memory:
        memory.import_history(home, settle_seconds=0)
        _embed_all(memory)
        events = EventMap()
        events.refresh(memory.con)
        assert events.loads == 1 and len(_canonical(events)) == 6
        layout = events.layout
        # an earlier time, the same time, a later one and no time in a session the map holds; sessions sorting
        # before, between and after the ones it holds; a project it has not seen
        more = [_line("s-b", "b2", "second step", 20), _line("s-b", "b3b", "also at thirty", 30)]
        _write(home, "s-b", [*more, _line("s-b", "b6", "sixth step", 55), _line("s-b", "by", "another note", None)])
        _write(home, "s-a", [_line("s-a", "a1", "an earlier session", 1), _line("s-a", "a2", "its second", 2)])
        _write(home, "s-c", [_line("s-c", "c1", "between sessions", 40, "/nonexistent/new-project")])
        _write(home, "s-e", [_line("s-e", "e1", "a last session", None)])
        assert memory.import_history(home, settle_seconds=0).events_new == 8
        events.refresh(memory.con)  # the new events, before they have vectors
        _embed_all(memory)
        events.refresh(memory.con)  # ... and their vectors' labels
        fresh = EventMap()
        fresh.refresh(memory.con)
        assert events.loads == 1 and events.layout == layout + 1  # merged, not read again
        merged = _canonical(events)
        assert merged == _canonical(fresh) and len(merged) == 14
        held = fresh._require().ids  # each id looked up where it is, the lookup merged rather than sorted again
        assert (events.id_at(events.positions(held)) == held).all()
        assert (events._require().sorted_ids == fresh._require().sorted_ids).all()
        stored = dict(memory.con.execute("SELECT label, event_id FROM chunks").fetchall())
        assert _owners(events, 16) == _owners(fresh, 16) == [stored[n] for n in range(14)] + [None, None]
        order = [memory.con.execute("SELECT text FROM events WHERE id = ?", [i]).fetchone()[0]  # type: ignore[index]
                 for i in events._require().ids.tolist() if merged[i][0] == "s-b"]  # fmt: skip
        assert order == ["first step", "second step", "third step", "also at thirty", "fifth step", "sixth step",
                         "a note without time", "another note"]  # fmt: skip
        assert merged[next(i for i, f in merged.items() if f[0] == "s-e")][3] == NO_TIME


def test_a_large_batch_of_new_events_reads_the_map_again_whole(tmp_path: Path, monkeypatch: Any) -> None:
    home = tmp_path / "claude"
    _write(home, "s-b", [_line("s-b", f"b{i}", f"step {i}", i) for i in range(10)])
    with Memory(tmp_path / "data") as memory:
        memory.import_history(home, settle_seconds=0)
        events = EventMap()
        events.refresh(memory.con)
        monkeypatch.setattr(eventmap, "MERGE_SHARE", 0.25)  # more than a quarter of the map: read again
        _write(home, "s-b", [_line("s-b", f"c{i}", f"more {i}", 20 + i) for i in range(3)])
        memory.import_history(home, settle_seconds=0)
        events.refresh(memory.con)
        assert events.loads == 2
        _write(home, "s-b", [_line("s-b", "d1", "one more", 40)])
        memory.import_history(home, settle_seconds=0)
        events.refresh(memory.con)
        assert events.loads == 2  # merged
        fresh = EventMap()
        fresh.refresh(memory.con)
        assert _canonical(events) == _canonical(fresh)
