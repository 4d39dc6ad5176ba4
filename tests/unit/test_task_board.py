"""core/tasks.py: Claude Code's task tools read as task entities (seed §10-11): the seed's required properties."""

from __future__ import annotations

import json
from typing import Any

import pytest

from claude_memory.core import tasks as core_tasks
from claude_memory.core.tasks import Board, Call, TaskEvent, artifact_key, blocker_texts, normalize, task_key, task_op

PROJECT = "/home/dev/shop"


def todo(*items: tuple[str, str]) -> dict[str, Any]:
    op = task_op(
        "TodoWrite", {"todos": [{"content": c, "status": s, "activeForm": c} for c, s in items]}, None, failed=False
    )
    assert op is not None
    return op


def run(board: Board, session: str, op: dict[str, Any], n: int = 1) -> list[TaskEvent]:
    return board.apply(Call(n, session, None, PROJECT, op))


def tasks(board: Board) -> dict[str, str]:
    return {e.title: e.state["status"] for e in board.entities.values() if e.type == "task"}


def test_keys_follow_the_seed() -> None:
    assert normalize("Ｆｉｘ  the  Login-Bug!") == "fix_the_login_bug"
    assert task_key(None, "Fix it") == "task:default:fix_it" and task_key("/p", "Fix it") == "task:/p:fix_it"
    assert artifact_key("https://github.com/o/r/issues/3")[0].startswith("art:url:")  # type: ignore[index]
    assert artifact_key("PAY-42") == ("art:jira:pay-42", "jira")
    assert artifact_key("octo/app#17") == ("art:gh_issue:octo/app:17", "github_issue")
    assert artifact_key("the database") is None


def test_reading_the_tools() -> None:
    assert todo(("A", "completed"), ("B", "in_progress"), ("  ", "pending")) == {
        "kind": "list", "todos": [{"title": "A", "status": "done"}, {"title": "B", "status": "in_progress"}]
    }  # fmt: skip
    result = {"task": {"id": 7, "subject": "Ship it"}}
    created = task_op("TaskCreate", {"subject": "Ship it", "description": "d"}, result, failed=False)
    assert created == {"kind": "create", "id": "7", "title": "Ship it", "description": "d"}
    update = task_op(
        "TaskUpdate", {"taskId": "7", "status": "deleted", "addBlockedBy": ["3"]}, {"success": True}, failed=False
    )
    assert update == {"kind": "update", "id": "7", "status": "cancelled", "blocked_by": ["3"]}
    assert task_op("TaskUpdate", {"taskId": "7", "status": "completed"}, {"success": False}, failed=False) is None
    assert (
        task_op("TodoWrite", {"todos": []}, None, failed=True) is None
        and task_op("Bash", {}, None, failed=False) is None
    )


def test_identity_survives_sessions_and_rewording() -> None:
    board = Board()
    run(board, "s1", todo(("Add input validation", "in_progress"), ("Write the release notes", "pending")))
    events = run(board, "s2", todo(("Add input validation to the signup form", "completed")), n=2)
    assert tasks(board) == {"Add input validation": "done", "Write the release notes": "pending"}
    assert [e.type for e in events] == ["task_status_changed"]
    # another session's list does not cancel what it does not name
    assert board.entities[task_key(PROJECT, "Write the release notes")].state["status"] == "pending"


def test_a_close_but_different_title_is_a_new_task_with_a_suggestion() -> None:
    board = Board()
    run(board, "s1", todo(("Write the database migration", "pending")))
    run(board, "s2", todo(("Write the database seed script", "pending")), n=2)
    assert len(tasks(board)) == 2
    new = board.entities[task_key(PROJECT, "Write the database seed script")]
    assert new.state["suggested_same"] == [task_key(PROJECT, "Write the database migration")]


def test_a_reworded_title_is_compared_with_the_latest_moved_open_tasks_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rapidfuzz looks at MATCH_WINDOW open tasks, the latest opened or moved: an old open task is still found by its
    own title, and a reworded one finds it again once it moves."""
    monkeypatch.setattr(core_tasks, "MATCH_WINDOW", 3)
    board = Board()
    run(board, "s1", todo(("Add input validation", "pending")))
    fillers = [(f"Rotate {word} credentials", "pending") for word in ("staging", "Kafka", "mailer")]
    run(board, "s2", todo(*fillers), n=2)
    run(board, "s3", todo(("Add input validation to the signup form", "pending")), n=3)
    assert len(tasks(board)) == 5  # three tasks opened since: the old one is out of the window, a new task is made
    old = board.entities[task_key(PROJECT, "Add input validation")]
    run(board, "s4", todo(("Add input validation", "in_progress")), n=4)  # its own title finds it, and moves it
    assert old.state["status"] == "in_progress"
    run(board, "s5", todo(("Add input validation on the server", "completed")), n=5)
    assert old.state["status"] == "done" and len(tasks(board)) == 5


def test_a_finished_title_to_be_done_again_is_another_task_each_time() -> None:
    board = Board()
    key = task_key(PROJECT, "Bump the lockfile")
    for n in range(1, 4):
        run(board, f"s{n}", todo(("Bump the lockfile", "in_progress")), n=2 * n)
        run(board, f"s{n}", todo(("Bump the lockfile", "completed")), n=2 * n + 1)
    assert [e.id for e in board.entities.values() if e.type == "task"] == [key, f"{key}#2", f"{key}#3"]
    assert all(e.state["status"] == "done" for e in board.entities.values())


def test_pending_to_done_is_never_applied_directly() -> None:
    board = Board()
    run(board, "s1", todo(("Fix the flaky test", "pending")))
    events = run(board, "s1", todo(("Fix the flaky test", "completed")), n=2)
    moves = [(e.payload["from"], e.payload["to"]) for e in events if e.type == "task_status_changed"]
    assert moves == [("pending", "in_progress"), ("in_progress", "done")]
    assert all("started, then finished" in e.payload["reason"] for e in events)
    # a task first seen completed is created in progress, then finished
    created = run(board, "s1", todo(("Fix the flaky test", "completed"), ("Tag the release", "completed")), n=3)
    assert [(e.type, e.payload.get("initial_status") or e.payload.get("to")) for e in created] == [
        ("task_created", "in_progress"), ("task_status_changed", "done")
    ]  # fmt: skip
    # done is final: a later request to reopen it is recorded and not applied
    done_id = task_key(PROJECT, "Fix the flaky test")
    board.claude_ids[("s1", "9")] = done_id
    rejected = run(board, "s1", {"kind": "update", "id": "9", "status": "in_progress"}, n=4)
    assert [e.type for e in rejected] == ["task_transition_rejected"]
    assert rejected[0].payload["reason"] == "Invalid transition from done to in_progress"
    assert board.entities[done_id].state["status"] == "done"


def test_dropped_from_the_same_sessions_list_is_cancelled() -> None:
    board = Board()
    run(board, "s1", todo(("Plan the work", "in_progress"), ("Cache sessions in Redis", "pending")))
    events = run(board, "s1", todo(("Plan the work", "completed"), ("Keep sessions in a dict", "pending")), n=2)
    assert tasks(board) == {"Plan the work": "done", "Cache sessions in Redis": "cancelled",
                            "Keep sessions in a dict": "pending"}  # fmt: skip
    assert any(e.payload.get("reason") == "dropped from the session's to-do list" for e in events)


def test_blocked_has_blockers_and_done_has_none() -> None:
    board = Board()
    run(board, "s1", {"kind": "create", "id": "1", "title": "Deploy the service", "description": ""})
    run(board, "s1", {"kind": "create", "id": "2", "title": "Provision the database", "description": ""}, n=2)
    events = run(board, "s1", {"kind": "update", "id": "1", "blocked_by": ["2"]}, n=3)
    deploy = board.entities[task_key(PROJECT, "Deploy the service")]
    assert deploy.state["status"] == "blocked" and deploy.state["blockers"] == [
        task_key(PROJECT, "Provision the database")
    ]
    assert [e.type for e in events] == ["task_status_changed", "task_blockers_set"]  # blocked first, then its edge
    assert (deploy.id, "blocked_by", task_key(PROJECT, "Provision the database")) in board.edges
    run(board, "s1", {"kind": "update", "id": "1", "status": "done"}, n=4)
    assert deploy.state["status"] == "done" and deploy.state["blockers"] == []
    assert not [e for e in board.edges if e[0] == deploy.id]
    # blocked with no blocker named: the unknown-blocker placeholder, never an empty list
    loose = board.entities[task_key(PROJECT, "Provision the database")]
    board._move(loose, "blocked", Call(5, "s1", None, PROJECT, {}))
    (placeholder,) = loose.state["blockers"]
    assert board.entities[placeholder].state["auto_placeholder"] is True
    assert board.entities[placeholder].title == "Unknown blocker for: Provision the database"
    with pytest.raises(ValueError, match="needs a blocked task"):
        board._set_blockers(deploy, [{"entity_id": "x"}], "replace", Call(6, "s1", None, PROJECT, {}))


def test_blockers_in_words_become_artifacts_tasks_or_conditions_never_stub_tasks() -> None:
    assert blocker_texts("Blocked on https://github.com/o/r/issues/3 and waiting for the database migratoin.") == [
        "https://github.com/o/r/issues/3", "the database migratoin"
    ]  # fmt: skip
    board = Board()
    run(board, "s1", todo(("Write the database migration", "pending")))
    description = "Blocked on https://github.com/o/r/issues/3; waiting for the database migratoin."
    run(board, "s1", {"kind": "create", "id": "1", "title": "Ship the billing page", "description": description}, n=2)
    ship = board.entities[task_key(PROJECT, "Ship the billing page")]
    kinds = {board.entities[i].type: board.entities[i] for i in ship.state["blocker_suggestions"]}
    assert set(kinds) == {"artifact", "condition"}
    assert kinds["artifact"].state == {"identifier": "https://github.com/o/r/issues/3", "artifact_type": "url"}
    assert kinds["condition"].state["candidates"] == [task_key(PROJECT, "Write the database migration")]
    assert len(tasks(board)) == 2  # no stub task for either blocker


def test_folding_the_same_calls_again_gives_the_same_events_and_dedupe_keys() -> None:
    calls = [("s1", todo(("A task", "pending"), ("B task", "in_progress"))), ("s1", todo(("A task", "completed"))),
             ("s2", todo(("B task", "completed")))]  # fmt: skip
    runs = []
    for _ in range(2):
        board = Board()
        runs.append([(e, e.dedupe_key(s, n)) for n, (s, op) in enumerate(calls) for e in run(board, s, op, n)])
    assert runs[0] == runs[1] and len({k for _, k in runs[0]}) == len(runs[0])


def test_a_persons_corrections_close_and_merge() -> None:
    board = Board()
    run(board, "s1", todo(("Write the release notes", "pending"), ("Document the API", "pending")))
    run(board, "s2", todo(("Draft the changelog", "pending")), n=2)
    notes, api, changelog = (task_key(PROJECT, t) for t in ("Write the release notes", "Document the API",
                                                               "Draft the changelog"))  # fmt: skip
    closed = board.apply(Call(-1, "user", None, None, {"kind": "correction", "action": "close", "id": api}))
    assert [(e.payload["to"], e.payload["reason"]) for e in closed] == [
        ("in_progress", "closed by the user"), ("done", "closed by the user")
    ]  # fmt: skip
    merged = board.apply(Call(-2, "user", None, None, {"kind": "correction", "action": "merge", "id": changelog,
                                                       "into": notes}))  # fmt: skip
    assert [e.payload["reason"] for e in merged] == [f"merged into {notes} by the user"]
    assert board.entities[changelog].state["status"] == "cancelled"
    # from now on the merged title leads to the task that stays
    run(board, "s3", todo(("Draft the changelog", "completed")), n=3)
    assert board.entities[notes].state["status"] == "done"
    assert sum(1 for e in board.entities.values() if e.type == "task") == 3


def test_blockers_in_the_words_around_a_call_about_one_task_are_suggested() -> None:
    board = Board()
    run(board, "s1", {"kind": "create", "id": "1", "title": "Deploy the payments service", "description": ""})
    said = "Sure. That deploy is waiting for PAY-42 to be merged."
    events = board.apply(Call(2, "s1", None, PROJECT, {"kind": "update", "id": "1", "status": "in_progress"}, said))
    deploy = board.entities[task_key(PROJECT, "Deploy the payments service")]
    assert deploy.state["blocker_suggestions"] == ["art:jira:pay-42"] and deploy.state["blockers"] == []
    assert [e.type for e in events] == ["task_blockers_set", "task_status_changed"]
    # a whole to-do list never takes blockers from the words around it
    listed = board.apply(Call(3, "s1", None, PROJECT, todo(("Tag the release", "pending")), "blocked on PAY-7"))
    assert [e.type for e in listed] == ["task_created"]


def test_a_condition_resolves_to_the_task_created_later_under_its_name() -> None:
    board = Board()
    description = "Waiting for the billing API client to exist."
    run(board, "s1", {"kind": "create", "id": "1", "title": "Ship invoices", "description": description})
    ship = board.entities[task_key(PROJECT, "Ship invoices")]
    (condition,) = ship.state["blocker_suggestions"]
    assert board.entities[condition].type == "condition" and not board.entities[condition].state["resolved"]
    events = run(
        board, "s2", {"kind": "create", "id": "1", "title": "the billing API client to exist", "description": ""}, n=2
    )
    client = task_key(PROJECT, "the billing API client to exist")
    assert [e.type for e in events] == ["task_created", "condition_resolved_to"]
    assert board.entities[condition].state == {
        **board.entities[condition].state,
        "resolved": True,
        "resolved_to": client,
    }
    assert (condition, "resolves_to", client) in board.edges
    with pytest.raises(ValueError, match="cannot be resolves_to"):
        board._link(ship.id, "resolves_to", client)  # a task does not resolve to another: only a condition does


def test_a_dumped_board_read_back_folds_later_calls_as_the_board_itself() -> None:
    """Board.dump -> JSON -> Board.load, cut anywhere in a history with every kind of call (lists, Claude Code's
    ids, renames, blockers, conditions resolved, a merge), folds the rest to the same events and the same board."""
    notes, redis, sessions = "Write the release notes", "Try the Redis cache", "Keep sessions in a dict"
    calls = [
        Call(1, "s1", None, PROJECT, todo((notes, "in_progress"), (redis, "pending"))),
        Call(2, "s1", None, PROJECT, {"kind": "create", "id": "1", "title": "Ship invoices",
                                      "description": "Waiting for the billing API client to exist; see PAY-42."}),
        Call(3, "s1", "agent-7", PROJECT, todo(("Draft the changelog", "pending"))),
        Call(4, "s1", None, PROJECT, {"kind": "update", "id": "1", "title": "Ship the invoices",
                                      "status": "in_progress"},
             "That deploy is blocked on https://github.com/o/r/issues/3."),
        Call(5, "s2", None, PROJECT, {"kind": "create", "id": "1", "title": "the billing API client to exist",
                                      "description": ""}),
        Call(6, "s1", None, PROJECT, todo((notes, "completed"), (sessions, "pending"))),
        Call(-1, "user", None, None, {"kind": "correction", "action": "merge",
                                      "id": task_key(PROJECT, "Draft the changelog"),
                                      "into": task_key(PROJECT, sessions)}),
        Call(7, "s1", "agent-7", PROJECT, todo(("Draft the changelog", "completed"))),
        Call(8, "s2", None, PROJECT, {"kind": "update", "id": "1", "status": "done"}),
        Call(9, "s3", None, PROJECT, todo(
            ("Write the release-notes", "pending"), ("Keep session in a dict", "pending")
        )),
    ]  # fmt: skip

    def fold(board: Board, part: list[Call]) -> list[tuple[str, str]]:
        return [(e.type, e.dedupe_key(c.session_id, c.event_id)) for c in part for e in board.apply(c)]

    whole = Board()
    expected = fold(whole, calls)
    assert {t for t, _ in expected} >= {"task_created", "task_status_changed", "condition_resolved_to"}
    for cut in range(len(calls) + 1):
        board = Board()
        before = fold(board, calls[:cut])
        again = Board.load(json.loads(json.dumps(board.dump())))
        assert before + fold(again, calls[cut:]) == expected, cut
        assert json.dumps(again.dump()) == json.dumps(whole.dump()), cut
    with pytest.raises(ValueError, match="format 0 cannot be read"):
        Board.load({**whole.dump(), "format": 0})
