"""The task projection in a real store: folded from the task tool calls of imported transcripts, rebuilt to the same
result, idempotent on re-import, cascaded by forget; ../shared's fixture to-do lists against an expectation derived
here from their lines (not from the product)."""

from __future__ import annotations

import json
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest

from claude_memory.client.transport import connect
from claude_memory.core.filters import ForgetSelector
from claude_memory.core.tasks import task_key
from claude_memory.service import idle
from claude_memory.service import tasks as tasks_service
from claude_memory.service.memory import Memory
from claude_memory.store import db
from claude_memory.store import tasks as tasks_store
from support.idle_work import quiet_idle_work

PROJECT = "/nonexistent/todo-app"
STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "done"}


def _todo_call(session: str, n: int, todos: list[tuple[str, str]], ts: str) -> str:
    """A TodoWrite call and its result, as Claude Code writes them (two lines)."""
    items = [{"content": c, "status": s, "activeForm": c} for c, s in todos]
    call = {"type": "assistant", "uuid": f"{session}-a{n}", "sessionId": session, "timestamp": ts, "cwd": PROJECT,
            "message": {"id": f"m{session}{n}", "role": "assistant",
                        "content": [{"type": "tool_use", "id": f"toolu_{session}_{n}", "name": "TodoWrite",
                                     "input": {"todos": items}}]}}  # fmt: skip
    result = {"type": "user", "uuid": f"{session}-r{n}", "sessionId": session, "timestamp": ts, "cwd": PROJECT,
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{session}_{n}",
                                                       "content": "Todos have been modified successfully."}]},
              "toolUseResult": {"oldTodos": [], "newTodos": items}}  # fmt: skip
    return json.dumps(call) + "\n" + json.dumps(result) + "\n"


def write_home(home: Path) -> None:
    folder = home / "projects" / "-nonexistent-todo-app"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(
        _todo_call("s1", 1, [("Add input validation", "in_progress"), ("Write the release notes", "pending"),
                             ("Try the Redis cache", "pending")], "2026-03-01T10:00:00.000Z")
        + _todo_call("s1", 2, [("Add input validation", "completed"), ("Write the release notes", "pending"),
                               ("Keep sessions in a dict", "in_progress")], "2026-03-01T10:05:00.000Z")
    )  # fmt: skip
    (folder / "s2.jsonl").write_text(
        _todo_call("s2", 1, [("Write the release notes for 1.2", "completed")], "2026-03-02T09:00:00.000Z")
    )


def projection(memory: Memory) -> dict[str, Any]:
    return {
        table: memory.con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
        for table in ("task_events", "entities", "entity_aliases", "edges")
    }


def test_tasks_survive_sessions_and_the_projection_is_derived(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
    transport = connect(data)
    try:
        found = {t["title"]: t["status"] for t in transport.call("tasks", {})}
        assert found == {"Add input validation": "done", "Write the release notes": "done",
                         "Try the Redis cache": "cancelled", "Keep sessions in a dict": "in_progress"}  # fmt: skip
        assert [t["title"] for t in transport.call("tasks", {"open": True})] == ["Keep sessions in a dict"]
        notes = next(t for t in transport.call("tasks", {}) if t["title"] == "Write the release notes")
        detail = transport.call("task", {"id": notes["id"]})
        steps = [(h["type"], h.get("to") or h.get("initial_status"), h["session_id"]) for h in detail["history"]]
        assert steps == [("task_created", "pending", "s1"), ("task_status_changed", "in_progress", "s2"),
                         ("task_status_changed", "done", "s2")]  # fmt: skip
        assert all(h["citation"].startswith("mem:") for h in detail["history"])  # each cites its TodoWrite call
        with pytest.raises(Exception, match="No task task:nope is remembered"):
            transport.call("task", {"id": "task:nope"})
        start = {"hook_event_name": "SessionStart", "session_id": "s3", "cwd": PROJECT, "source": "startup"}
        context = transport.call("context", {"payload": start})
        text = context["additional_context"]
        assert "Open tasks from earlier sessions:\n- in progress: Keep sessions in a dict [mem:" in text
        assert "Write the release notes" not in text.split("Open tasks")[1].split("Recent memories")[0]  # done
        (cited,) = [c for c in context["citations"] if c in text.split("Keep sessions in a dict")[1][:12]]
        assert cited.startswith("mem:")
    finally:
        transport.close()
    with Memory(data) as memory:
        before = projection(memory)
        memory.con.execute("DELETE FROM ingest_checkpoints")  # read every transcript again: nothing new
        memory.import_history(home, settle_seconds=0)
        memory.tasks.refresh(force=True)
        assert projection(memory) == before  # a rebuild is the same projection, and re-reading adds nothing
        redis = task_key(PROJECT, "Keep sessions in a dict")
        assert memory.tasks.correct("close", redis)["status"] == "done"
        memory.tasks.refresh(force=True)  # a person's correction is not derived: a rebuild keeps it
        assert memory.tasks.detail(redis)["history"][-1]["reason"] == "closed by the user"
        assert "for 1.2" in stored_board(memory)  # (s2's to-do list)
        assert memory.forget(ForgetSelector(session_id="s2")) > 0
        assert "for 1.2" not in stored_board(memory)  # the board kept for later calls held s2's words too
        memory.tasks.refresh()
        statuses = dict(memory.con.execute(
            "SELECT title, json_extract_string(current_json, '$.status') FROM entities WHERE type = 'task'"
        ).fetchall())  # fmt: skip
        assert statuses["Write the release notes"] == "pending"  # s2's completion was forgotten with it
        assert memory.con.execute("SELECT count(*) FROM task_events WHERE session_id = 's2'").fetchone() == (0,)


def stored_board(memory: Memory) -> str:
    """The board stored with the projection, as text."""
    offset = tasks_store.offset(memory.con)
    kept = tasks_store.board(memory.con, offset) if offset is not None else None
    assert kept is not None
    return zlib.decompress(kept).decode()


def _prompt(session: str, text: str, ts: str) -> str:
    return json.dumps({"type": "user", "uuid": f"{session}-p", "sessionId": session, "timestamp": ts, "cwd": PROJECT,
                       "message": {"role": "user", "content": text}}) + "\n"  # fmt: skip


def test_a_forget_folds_the_tasks_again_only_when_the_fold_read_a_forgotten_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold from the start took 330 s at a million events: a forget of a session without task calls keeps the board
    and the projection; one of a prompt whose words the fold reads (a session with calls) folds again without it."""
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    folder = home / "projects" / "-nonexistent-todo-app"
    (folder / "s3.jsonl").write_text(_prompt("s3", "why is the login page slow", "2026-03-03T09:00:00.000Z"))
    s2 = folder / "s2.jsonl"
    s2.write_text(_prompt("s2", "ship the quokka release notes", "2026-03-02T08:59:00.000Z") + s2.read_text())
    folds: list[int] = []
    calls = tasks_store.calls
    monkeypatch.setattr(tasks_store, "calls", lambda con, after=0: folds.append(after) or calls(con, after))
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        memory.tasks.refresh()
        before, board = projection(memory), stored_board(memory)
        folds.clear()
        assert memory.forget(ForgetSelector(session_id="s3")) == 1
        assert folds == [] and stored_board(memory) == board and projection(memory) == before
        (quokka,) = memory.con.execute("SELECT id FROM events WHERE text LIKE '%quokka%'").fetchone()
        assert memory.forget(ForgetSelector(event_ids=(quokka,))) == 1
        assert folds == [0]  # from the start (an update's blockers come from the words before its call)
        assert projection(memory)["entities"] == before["entities"]  # s2's call is still there


def held_back(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """The home of :func:`write_home` without its second session yet: (home, data directory, where the second
    session goes, its lines)."""
    home = tmp_path / "claude"
    write_home(home)
    s2 = home / "projects" / "-nonexistent-todo-app" / "s2.jsonl"
    later = s2.read_text()
    s2.unlink()
    return home, tmp_path / "data", s2, later


def imported_once(tmp_path: Path, *, fold: bool = False) -> tuple[Path, Path, Path, str]:
    """:func:`held_back`, imported (and with ``fold``, folded) by a first process."""
    home, data, s2, later = held_back(tmp_path)
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        if fold:
            memory.tasks.refresh()
    return home, data, s2, later


def asked_for_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each time the projector reads the stored task calls from now on: the seq it reads after (0: all of them)."""
    asked: list[int] = []
    calls = tasks_store.calls

    def spied(con: Any, after: int = 0) -> Any:
        asked.append(after)
        return calls(con, after)

    monkeypatch.setattr(tasks_store, "calls", spied)
    return asked


def test_later_calls_fold_into_the_kept_board_and_give_what_a_rebuild_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, data, s2, later = held_back(tmp_path)
    s1 = s2.with_name("s1.jsonl")
    first, second = s1.read_text().splitlines(keepends=True)[:2], s1.read_text().splitlines(keepends=True)[2:]
    s1.write_text("".join(first))
    asked = asked_for_calls(monkeypatch)
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        memory.tasks.refresh()
        assert asked[-1] == 0  # the first fold reads every call
        with s1.open("a") as f:  # the session goes on, and another starts: later calls
            f.write("".join(second))
        s2.write_text(later)
        memory.import_history(home, settle_seconds=0)
        assert memory.tasks.refresh()
        assert asked[-1] > 0  # only the calls stored since
        got = projection(memory)
        assert {t["title"]: t["status"] for t in memory.tasks.listing(None, (), 100)}[
            "Write the release notes"
        ] == "done"
        memory.tasks.refresh(force=True)
        assert asked[-1] == 0 and projection(memory) == got  # a rebuild gives the same projection


def test_the_idle_step_folds_from_the_start_a_few_calls_at_a_time(tmp_path: Path) -> None:
    home, data, s2, later = held_back(tmp_path)
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        memory.con.execute("DELETE FROM projection_offsets WHERE name = 'task_projector'")  # as after an upgrade
        steps, writing = 0, []
        while memory.tasks.refresh(most=1):
            steps += 1
            writing.append(memory.tasks.writing_next)
            if steps == 1:
                assert memory.tasks.behind and projection(memory)["task_events"] == []  # written at the end only
                s2.write_text(later)  # a later session's calls come meanwhile: they join the fold
                memory.import_history(home, settle_seconds=0)
        # s1's two calls, then s2's; then the write, in a step of its own (the idle step hands back memory before it)
        assert steps == 4 and writing == [False, False, True, False] and not memory.tasks.behind
        got = projection(memory)
        memory.tasks.refresh(force=True)
        assert projection(memory) == got and len(got["task_events"]) > 0


def test_a_quiet_service_hands_back_memory_before_a_fold_from_the_start_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _home, data, _s2, _later = imported_once(tmp_path)
    with Memory(data) as memory:
        memory.con.execute("DELETE FROM projection_offsets WHERE name = 'task_projector'")  # as after an upgrade
        seen: list[str] = []
        release, write = memory.release_memory, memory.writer.write_tasks
        monkeypatch.setattr(memory, "release_memory", lambda: (seen.append("release"), release())[1])
        monkeypatch.setattr(memory.writer, "write_tasks", lambda *a, **k: (seen.append("write"), write(*a, **k)))
        monkeypatch.setattr(idle, "IDLE_TASK_CALLS", 1)
        work = quiet_idle_work(memory)
        for _ in range(6):
            work.step()
        assert seen[seen.index("write") - 1] == "release" and tasks_store.offset(memory.con)


def test_the_idle_steps_fold_from_the_start_reads_the_calls_with_duckdbs_cache_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read of every task call with the words around them was a million-event service's largest moment (+680 MB
    for two seconds): the idle step makes it with DuckDB's memory held to the cache's bound, and the same projection
    comes of it. So it does while an index is built on a thread beside it (the build reads the vector copy, not the
    store)."""
    _home, data, _s2, _later = imported_once(tmp_path, fold=True)
    with Memory(data) as memory:
        expected, limit = projection(memory), db.memory_limit(memory.con)
        limits: list[str] = []
        calls = tasks_store.calls
        monkeypatch.setattr(tasks_store, "calls", lambda con, after=0: (limits.append(db.memory_limit(con)),
                                                                        calls(con, after))[1])  # fmt: skip
        for building in (False, True):
            memory.con.execute("DELETE FROM projection_offsets WHERE name = 'task_projector'")  # as after an upgrade
            work = quiet_idle_work(memory)
            if building:
                work._refit = (threading.current_thread(), memory.vector_index(), [])  # (what a refit's thread holds)
            while work._fold_tasks(memory, 1):
                pass
            assert projection(memory) == expected
        bound = max(db.cache_bound(0), db.READ_FLOOR)
        assert limits[0] == limits[-1] == f"{bound / (1 << 20):.1f} MiB" and limit[-3:] == "GiB"


def test_in_a_service_a_face_reads_what_is_stored_while_the_idle_step_folds_from_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, data, s2, later = imported_once(tmp_path)
    with Memory(data) as memory:
        memory.tasks.background = True  # (the service's)
        monkeypatch.setattr(tasks_service, "FACE_FOLD_SECONDS", 0.0)  # (a fold longer than a face waits for)
        monkeypatch.setattr(tasks_service, "FACE_TASK_CALLS", 1)
        assert memory.tasks.listing(None, (), 10) == [] and memory.tasks.behind  # it did not wait: stored, none yet
        work = quiet_idle_work(memory)
        for _ in range(10):
            work.step()
        assert not memory.tasks.behind and len(memory.tasks.listing(None, (), 10)) == 4
        asked = asked_for_calls(monkeypatch)
        s2.write_text(later)  # a live session's calls: folded into the board at once, for a face too
        memory.import_history(home, settle_seconds=0)
        titles = {t["title"]: t["status"] for t in memory.tasks.listing(None, (), 10)}
        assert titles["Write the release notes"] == "done" and asked == [asked[0]] and asked[0] > 0


def test_in_a_service_a_face_finishes_a_short_fold_from_the_start(tmp_path: Path) -> None:
    _home, data, _s2, _later = imported_once(tmp_path)
    with Memory(data) as memory:
        memory.tasks.background = True
        assert len(memory.tasks.listing(None, (), 10)) == 4 and not memory.tasks.behind  # within FACE_FOLD_SECONDS


def test_a_later_process_folds_later_calls_into_the_board_stored_with_the_projection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, data, s2, later = imported_once(tmp_path, fold=True)
    with Memory(data) as memory:
        assert tasks_store.board_state(memory.con) == tasks_store.offset(memory.con) and tasks_store.board_state(
            memory.con
        )
    asked = asked_for_calls(monkeypatch)
    with Memory(data) as memory:  # another process (a restarted service): nothing to fold, and no board made
        assert not memory.tasks.refresh(most=0, warm=True) and not memory.tasks.behind and asked == []
        s2.write_text(later)
        memory.import_history(home, settle_seconds=0)
        assert memory.tasks.refresh(most=1, warm=True) and len(asked) == 1 and asked[0] > 0  # only the later calls
        memory.release_memory()  # a quiet service hands its board back: the next call reads the stored one
        s3 = s2.with_name("s3.jsonl")
        s3.write_text(_todo_call("s3", 1, [("Keep sessions in a dict", "completed")], "2026-03-03T09:00:00.000Z"))
        memory.import_history(home, settle_seconds=0)
        assert memory.tasks.refresh(most=1, warm=True) and len(asked) == 2 and asked[1] > asked[0]
        got = projection(memory)
        assert {t["title"]: t["status"] for t in memory.tasks.listing(None, (), 10)}[
            "Keep sessions in a dict"
        ] == "done"
        memory.tasks.refresh(force=True)
        assert asked[-1] == 0 and projection(memory) == got  # what a fold from the start gives
        memory.release_memory()
        memory.con.execute("UPDATE task_board SET body = 'not a board'::BLOB")  # (as from another version)
        s3.write_text(s3.read_text() + _todo_call("s3", 2, [("Tag the release", "pending")], "2026-03-03T09:05:00Z"))
        memory.import_history(home, settle_seconds=0)
        assert memory.tasks.refresh() and asked[-1] == 0  # unreadable: folded from the start, and no error
        assert "Tag the release" in {t["title"] for t in memory.tasks.listing(None, (), 10)}
        assert tasks_store.board_state(memory.con) == tasks_store.offset(memory.con)


def test_a_store_without_a_board_makes_it_in_steps_and_writes_only_the_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, data, s2, later = imported_once(tmp_path, fold=True)
    with Memory(data) as memory:
        memory.con.execute("DELETE FROM task_board")  # as a store made before boards were kept
    with Memory(data) as memory:  # another process: the projection is current, but there is no board to fold into
        before = projection(memory)
        writes: list[object] = []
        write = memory.writer.write_tasks
        monkeypatch.setattr(memory.writer, "write_tasks", lambda *a, **k: (writes.append(a), write(*a, **k)))
        steps = 0
        assert not memory.tasks.refresh(most=0, warm=True) and memory.tasks.behind  # busy: it waits for a quiet time
        while memory.tasks.refresh(most=1, warm=True):
            steps += 1
            assert len(memory.tasks.listing(None, (), 10)) == 4  # a face's read meanwhile: current, and it goes on
        assert steps == 3 and writes == [] and projection(memory) == before  # made (2 calls), not written again
        assert tasks_store.board_state(memory.con) == tasks_store.offset(memory.con)  # only the board is
        asked = asked_for_calls(monkeypatch)
        s2.write_text(later)
        memory.import_history(home, settle_seconds=0)
        assert memory.tasks.refresh(most=1, warm=True) and asked == [asked[0]] and asked[0] > 0  # folded into it
        got = projection(memory)
        memory.tasks.refresh(force=True)
        assert projection(memory) == got != before


# ---------------------------------------------------------------------- ../shared's fixture to-do lists

# Rewordings in those lists that the product takes for the same task (rapidfuzz >= 0.92 against the open task),
# judged here by reading the lists: each pair names the same piece of work. The task keeps its first title.
SAME_TASK = {
    "Build computer-use layer on Playwright": "Build computer-use layer on Playwright in Docker",
    "Download TodoMVC and set up in container": "Download/set up TodoMVC in container",
    "Implement LangGraph agent with computer-use tools": "Implement LangGraph agent that uses computer-use tools",
    "Set up Docker container with Playwright and VNC": "Set up Playwright Docker container with VNC",
    "Set up containerized browser environment with X11/VNC": "Set up containerized test environment",
}


def expected_from_lines(files: list[Path]) -> dict[str, str]:
    """Each to-do's final status, from the TodoWrite lines: within a session, its status in the last list naming it;
    dropped from a later list of the session before being completed: cancelled."""
    lists: dict[str, dict[str, tuple[str, list[tuple[str, str]]]]] = {}
    for path in files:
        for raw in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(raw)
            content = (obj.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_use" and block.get("name") == "TodoWrite":
                    todos = [(t["content"], STATUS[t["status"]]) for t in block["input"]["todos"]]
                    lists.setdefault(obj["sessionId"], {})[block["id"]] = (obj["timestamp"], todos)
    final: dict[str, str] = {}
    for calls in lists.values():
        previous: list[str] = []
        for _ts, todos in sorted(calls.values()):
            titles = [SAME_TASK.get(t, t) for t, _ in todos]
            for title in previous:
                if title not in titles and final[title] != "done":
                    final[title] = "cancelled"
            final.update((SAME_TASK.get(t, t), s) for t, s in todos)
            previous = titles
    return final


@pytest.mark.covered_by("tests/integration/test_tasks.py::test_tasks_survive_sessions_and_the_projection_is_derived")
def test_the_fixture_to_do_lists_give_the_tasks_their_lines_say(
    third_party_home: Path, third_party_transcripts: Path, tmp_path: Path
) -> None:
    loose = tmp_path / "claude" / "projects" / "-fixture-transcripts"
    loose.mkdir(parents=True)
    for path in third_party_transcripts.glob("*.jsonl"):
        (loose / path.name).symlink_to(path)
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.import_history(third_party_home, settle_seconds=0)
        memory.import_history(tmp_path / "claude", settle_seconds=0)
    files = sorted(third_party_home.rglob("*.jsonl")) + sorted(third_party_transcripts.glob("*.jsonl"))
    expected = expected_from_lines(files)
    transport = connect(data)
    try:
        found = {t["title"]: t["status"] for t in transport.call("tasks", {})}
    finally:
        transport.close()
    assert len(expected) > 40 and found == expected


def test_calls_read_again_from_their_transcripts_are_privacy_filtered(tmp_path: Path) -> None:
    """A store made before task operations were kept reads its task calls again from the transcripts: through the
    same privacy filter as an import."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    home, data = tmp_path / "claude", tmp_path / "data"
    folder = home / "projects" / "-nonexistent-todo-app"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(
        _todo_call("s1", 1, [(f"Rotate the token {token}", "pending"), ("Ship it", "pending")], "2026-03-01T10:00:00Z")
    )
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        memory.con.execute("UPDATE events SET metadata = NULL WHERE tool_name = 'TodoWrite'")  # as stored before
        memory.con.execute("DELETE FROM projection_offsets")
        memory.tasks.refresh()
        titles = [r[0] for r in memory.con.execute("SELECT title FROM entities ORDER BY 1").fetchall()]
        stored = str(memory.con.execute("SELECT list(payload) FROM task_events").fetchone())
    assert len(titles) == 2 and "Ship it" in titles
    assert not any(token in t for t in titles) and token not in stored


def test_conditions_list_what_they_block(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    folder = home / "projects" / "-nonexistent-todo-app"
    folder.mkdir(parents=True)
    said = {"subject": "Launch the beta", "description": "Waiting for the design review; blocked on PAY-42."}
    use = {"type": "tool_use", "id": "toolu_c1", "name": "TaskCreate", "input": said}
    base = {"sessionId": "s1", "cwd": PROJECT, "timestamp": "2026-03-01T10:00:00Z"}
    answer = {"type": "tool_result", "tool_use_id": "toolu_c1", "content": "Task #1 created successfully"}
    lines = [
        {**base, "type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [use]}},
        {**base, "type": "user", "uuid": "u1", "toolUseResult": {"task": {"id": "1", "subject": "Launch the beta"}},
         "message": {"role": "user", "content": [answer]}},
    ]  # fmt: skip
    (folder / "s1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
    transport = connect(data)
    try:
        (condition,) = transport.call("conditions", {})
        assert condition["text"] == "the design review" and not condition["resolved"]
        assert [b["title"] for b in condition["blocks"]] == ["Launch the beta"]
        (task,) = transport.call("tasks", {})
        assert sorted(b["type"] for b in task["blocker_suggestions"]) == ["artifact", "condition"]
        assert transport.call("tasks", {"status": ["blocked"]}) == []  # suggested, not set: the task is not blocked
        assert transport.call("conditions", {"resolved": True}) == []
    finally:
        transport.close()
