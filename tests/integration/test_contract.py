"""The engine contract on a real store: every operation answers what its result model says, in process and
through a running service alike, and the service's long operations stream their progress."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from claude_memory import wire
from claude_memory.client.connection import ServiceClient
from claude_memory.client.local import LocalTransport
from claude_memory.client.transport import SocketTransport, Transport
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import holder_pid
from claude_memory.service.operations import registry
from claude_memory.wire import OpError
from support.waiting import wait_for


def sample_params(transport: Transport, home: Path) -> dict[str, dict[str, Any]]:
    """Parameters for every operation a store answers in process (reads first; writes that change nothing
    the other calls depend on)."""
    events = transport.call("history", {"limit": 10_000})
    prompt = next(e for e in events if e["type"] == "user_prompt")
    touched = next(e for e in events if e["files"])
    cites = [e["citation"] for e in events[:3]]
    return {
        "ping": {},
        "status": {},
        "search": {"query": "test", "limit": 5},
        "index": {"query": "test", "limit": 5},
        "smart_search": {"query": "test", "limit": 5, "budget": 500},
        "timeline": {"refs": cites, "before": 1, "after": 1},
        "details": {"refs": cites[:1], "context": 1},
        "history": {"limit": 5, "types": ["user_prompt"]},
        "sessions": {"limit": 5},
        "projects": {"limit": 5},
        "stats": {},
        "activity": {"days": 400},
        "changes": {"after_seq": 0, "limit": 5},
        "file_history": {"path": touched["files"][0], "symbol": "test"},
        "file_summary": {"paths": touched["files"][:2]},
        "blame": {"path": "/home/dev/shop/src/shop/cart.py", "text": "class Cart:\n    pass\n", "start": 1},
        "tasks": {"open": True},
        "task": {"id": transport.call("tasks", {})[0]["id"]},
        "conditions": {"resolved": False},
        "task_correct": {"action": "cancel", "id": transport.call("tasks", {})[0]["id"]},
        "tasks_rebuild": {},
        "insights": {},
        "insight": {"id": transport.call("insights", {})["preferences"][0]["id"]},
        "insight_mark": {"id": transport.call("insights", {})["preferences"][0]["id"], "mark": "pin"},
        "insights_rebuild": {},
        "graduate": {"ignore_cooldown": True},
        "endless": {},
        "mode": {"set": "endless", "config": {"consolidation": {"min_events": 3}}},
        "consolidate": {},
        "forget": {"refs": cites[:1], "dry_run": True},
        "embed_wait": {"wait": False},
        "reindex": {},
        "verify": {},
        "context": {
            "payload": {
                "hook_event_name": "UserPromptSubmit",
                "session_id": "not-a-stored-session",
                "cwd": prompt["project"] or "/",
                "prompt": prompt["text"][:200],
            }
        },
        "capture": {"payload": {"hook_event_name": "Stop", "session_id": prompt["session_id"]}},
        "import": {"claude_home": str(home), "settle_seconds": 0},
        "model_status": {},
        "model_remove": {},
        "model_use": {"target": "int8", "cancel": True},  # (a switch itself: tests/integration/test_model_switch.py)
    }


# Operations whose sample call is refused here, with the sentence that says why (what they answer when they are
# not is checked where they can run: model_fetch against a stand-in model hub, tests/e2e/test_model_download.py).
REFUSED = {"model_fetch": "Offline mode is on"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path) -> Path:
    path = tmp_path_factory.mktemp("claude")
    shutil.copytree(fixtures_home / "projects", path / "projects")
    # a TaskCreate call and its result, as Claude Code 2.1.330 writes them: a task for `task` to show
    base = {"sessionId": "0a1e5c1d-00ff-4000-8000-000000000001", "cwd": "/home/dev/shop", "version": "2.1.330",
            "timestamp": "2026-03-20T10:00:00.000Z"}  # fmt: skip
    use = {
        "type": "tool_use",
        "id": "toolu_t1",
        "name": "TaskCreate",
        "input": {"subject": "Ship it", "description": "d"},
    }
    call = {**base, "type": "assistant", "uuid": "t-a1", "message": {"id": "m1", "role": "assistant", "content": [use]}}
    answer = {"type": "tool_result", "tool_use_id": "toolu_t1", "content": "Task #1 created successfully: Ship it"}
    result = {**base, "type": "user", "uuid": "t-u1", "toolUseResult": {"task": {"id": "1", "subject": "Ship it"}},
              "message": {"role": "user", "content": [answer]}}  # fmt: skip
    # and a prompt stating a rule: a preference for `insight` to show
    rule = {
        **base,
        "type": "user",
        "uuid": "t-u0",
        "message": {"role": "user", "content": "always use pnpm here, never npm"},
    }
    (path / "projects" / "-home-dev-shop" / "tasks.jsonl").write_text(
        json.dumps(rule) + "\n" + json.dumps(call) + "\n" + json.dumps(result) + "\n"
    )
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Path:
    path = tmp_path_factory.mktemp("store") / "data"
    local = LocalTransport.open(path)
    try:
        report = local.call("import", {"claude_home": str(home), "settle_seconds": 0})
        assert report["events"]["new"] > 50
    finally:
        local.close()
    return path


@pytest.fixture(scope="module")
def answers_in_process(data: Path, home: Path) -> dict[str, Any]:
    local = LocalTransport.open(data)
    try:
        params = sample_params(local, home)
        answers = {name: local.call(name, p) for name, p in params.items()} | {"_params": params}
        for name, words in REFUSED.items():
            with pytest.raises(OpError) as refused:
                local.call(name, {})
            assert words in str(refused.value) and len(str(refused.value).splitlines()) == 1
            answers[name] = None
        return answers
    finally:
        local.close()


def test_every_operation_answers_what_its_model_says(answers_in_process: dict[str, Any]) -> None:
    ops = registry()
    tested = set(answers_in_process) - {"_params"}
    assert tested == {op.name for op in ops if not op.service_only}, "give every operation sample parameters"
    for op in ops:
        if op.service_only or op.name in REFUSED:
            continue
        answer = answers_in_process[op.name]
        TypeAdapter(op.result).validate_python(answer, strict=False)
        assert json.loads(json.dumps(answer)) == answer, f"{op.name} answers JSON-native data"
    assert answers_in_process["search"]["results"], "the sample search finds something"
    assert answers_in_process["timeline"]["windows"] and answers_in_process["details"]["details"]
    assert answers_in_process["forget"]["matching"] == 1 and answers_in_process["forget"]["forgotten"] == 0


def test_a_result_that_breaks_its_model_is_caught() -> None:
    search = registry().get("search")
    assert search is not None
    with pytest.raises(ValueError):
        TypeAdapter(search.result).validate_python({"results": [{"id": "x"}], "meta": {}})


def test_in_process_a_service_only_operation_says_so(data: Path) -> None:
    local = LocalTransport.open(data)
    try:
        for name in ("hook", "drain", "shutdown"):
            with pytest.raises(OpError) as failed:
                local.call(name, {"event": "Stop", "payload": "{}"} if name == "hook" else {})
            assert failed.value.code == wire.BAD_REQUEST and "only by the memory service" in str(failed.value)
        with pytest.raises(OpError) as unknown:
            local.call("no_such_operation")
        assert (unknown.value.code, str(unknown.value)) == (wire.BAD_REQUEST, "Unknown method 'no_such_operation'.")
        with pytest.raises(OpError) as missing:
            local.call("forget", {"refs": ["mem:zzzzzz"]})
        assert (missing.value.code, missing.value.ref) == (wire.NOT_FOUND, "mem:zzzzzz")
    finally:
        local.close()


@pytest.fixture(scope="module")
def service(data: Path, home: Path, answers_in_process: dict[str, Any]) -> Iterator[SocketTransport]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")} | {"CLAUDE_MEMORY_HOME": str(data)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(home)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = ServiceClient(data, timeout=60)
    info = wait_for(client.ping)
    try:
        yield SocketTransport(client, info)
    finally:
        client.close()
        subprocess.run([sys.executable, "-m", "claude_memory", "stop"], env=env, capture_output=True, timeout=60)
        proc.wait(timeout=60)
        assert holder_pid(RuntimePaths(data).lock) is None


# Answers that must be the same whichever engine gave them (the others carry a pid, a clock, a counter or a
# citation use that the first call recorded: smart_search and details count their expanded citations).
SAME = ("search", "index", "timeline", "history", "sessions", "projects", "file_history",
        "file_summary", "blame", "forget", "embed_wait")  # fmt: skip


def timeless(answer: Any) -> Any:
    """An answer without its timings (``took_ms``)."""
    if isinstance(answer, dict):
        return {k: timeless(v) for k, v in answer.items() if k != "took_ms"}
    if isinstance(answer, list):
        return [timeless(v) for v in answer]
    return answer


def test_the_service_gives_the_same_answers(service: SocketTransport, answers_in_process: dict[str, Any]) -> None:
    params = answers_in_process["_params"]
    for name in SAME:
        assert timeless(service.call(name, params[name])) == timeless(answers_in_process[name]), name
    for op in registry():
        if op.name in params and not op.writes:
            TypeAdapter(op.result).validate_python(service.call(op.name, params[op.name]))
    status = service.call("status")
    assert status["service"]["pid"] != os.getpid() and status["watcher"]["root"].endswith("projects")
    stats = service.call("stats")
    varies = ("store_bytes", "graduation")  # (the sample `graduate` ran after the sample `stats`)
    assert {k: v for k, v in stats.items() if k not in varies} == {
        k: v for k, v in answers_in_process["stats"].items() if k not in varies
    }
    assert sum(stats["graduation"]["levels"].values()) == stats["events"]
    assert answers_in_process["graduate"]["graduated"] >= 1  # the sample details counted a use of a full match


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def start(self, what: str, total: int) -> None:
        self.seen.append((what, total))

    def advance(self, n: int) -> None:
        self.seen.append(("+", n))


def test_the_service_streams_import_progress(service: SocketTransport, home: Path, data: Path) -> None:
    progress = Recorder()
    report = service.call("import", {"claude_home": str(home)}, progress=progress)
    assert report["files"]["found"] > 0 and report["events"]["new"] == 0  # all stored already
    assert progress.seen[0][0] == "import"
    total = progress.seen[0][1]
    assert total > 0 and sum(n for what, n in progress.seen[1:] if what == "+") == total
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:  # no progress lines unless asked for
        raw.settimeout(60)
        raw.connect(str(RuntimePaths(data).socket))
        raw.sendall(wire.request_line(7, "import", {"claude_home": str(home)}))
        first = json.loads(raw.makefile("rb").readline())
    assert first["id"] == 7 and "result" in first and "progress" not in first
    with pytest.raises(OpError) as elsewhere:
        service.call("import", {"claude_home": str(home.parent / "elsewhere")})
    assert "stop it with `claude-memory stop`" in str(elsewhere.value)
