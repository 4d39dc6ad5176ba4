"""The memory service as a real process: one per data directory, live capture, the hook spool, and
crash safety (50 hooks at once while the service is SIGKILLed in the middle of an import)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_memory.client.connection import ServiceClient, call_starting
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.discovery import TranscriptFile
from claude_memory.service.lock import holder_pid
from claude_memory.service.memory import Memory
from claude_memory.wire import spool_capture
from support import service_proc
from support.own_fixtures import ECHO_WORD as ECHO
from support.own_fixtures import WORK
from support.waiting import wait_for

REPO = service_proc.REPO
HOOK = service_proc.HOOK


_env = service_proc.env
_serve = service_proc.serve
_stop = service_proc.stop
_hook = service_proc.hook


@pytest.fixture()
def claude_home(tmp_path: Path, fixtures_home: Path) -> Path:
    home = tmp_path / "claude"
    shutil.copytree(fixtures_home / "projects", home / "projects")
    return home


@pytest.fixture()
def running(tmp_path: Path, claude_home: Path) -> Iterator[tuple[Path, ServiceClient]]:
    data = tmp_path / "data"
    proc = _serve(data, claude_home)
    client = ServiceClient(data, timeout=30)
    try:
        wait_for(client.ping)
        yield data, client
    finally:
        client.close()
        _stop(data)
        proc.wait(timeout=30)


def _ids(data: Path) -> list[int]:
    with Memory(data) as memory:
        return [int(r[0]) for r in memory.con.execute("SELECT id FROM events ORDER BY id").fetchall()]


def _reference_ids(tmp_path: Path, home: Path) -> list[int]:
    with Memory(tmp_path / "reference") as memory:
        memory.import_history(home)
    return _ids(tmp_path / "reference")


def test_a_second_service_for_the_same_directory_refuses_politely(
    running: tuple[Path, ServiceClient], claude_home: Path
) -> None:
    data, client = running
    pid = client.ping()["pid"]
    second = _serve(data, claude_home)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 3
    assert err.strip() == f"A memory service is already running for {data} (pid {pid})."
    assert client.ping()["pid"] == pid  # the first one is untouched


def test_the_socket_and_the_data_directory_are_user_only(running: tuple[Path, ServiceClient]) -> None:
    data, _ = running
    assert stat.S_IMODE(RuntimePaths(data).socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700


def _modes(root: Path) -> dict[str, int]:
    """The permission bits of ``root`` and of everything in it, by relative path."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink():
            found[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_a_data_directory_made_readable_by_others_is_tightened_and_stays_user_only(
    tmp_path: Path, claude_home: Path
) -> None:
    data = tmp_path / "data"
    (data / "logs").mkdir(parents=True)
    (data / "settings.json").write_text("{}")
    (data / "logs" / "service.log").write_text("an old log line\n")
    for path, mode in [(data, 0o755), (data / "logs", 0o755), (data / "settings.json", 0o644),
                       (data / "logs" / "service.log", 0o644)]:  # fmt: skip
        path.chmod(mode)
    old = os.umask(0o022)  # what the user's shell usually has
    try:
        proc = _serve(data, claude_home)
    finally:
        os.umask(old)
    client = ServiceClient(data, timeout=30)
    try:
        wait_for(client.ping)
        wait_for(lambda: client.call("status")["store"]["events"] > 0, what="the first import")
        done = _run_hook(data, "Stop", b"not json")  # the hook logs why it did nothing
        assert done.returncode == 0
        while_running = _modes(data)
    finally:
        client.close()
        _stop(data)
        proc.wait(timeout=30)
    for modes in (while_running, _modes(data)):
        wrong = {p: oct(m) for p, m in modes.items() if m != (0o700 if (data / p).is_dir() else 0o600)}
        assert not wrong, wrong
    assert {"memory.duckdb", "logs/service.log", "logs/hooks.log", "service.lock"} <= set(while_running)


def test_a_temp_socket_directory_that_is_not_private_is_refused_and_another_is_used(
    tmp_path: Path, claude_home: Path, request: pytest.FixtureRequest
) -> None:
    temp = Path(tempfile.mkdtemp(prefix="cm", dir="/tmp"))  # a short system temp dir: a socket path has ~107 bytes
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    hostile = temp / f"claude-memory-{os.getuid()}"
    hostile.mkdir(mode=0o777)
    hostile.chmod(0o777)  # anyone may put a socket of their own here
    data = tmp_path / ("long-" * 25) / "data"  # too long a path for a socket inside it
    env = {**_env(data), "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(claude_home)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:

        def service() -> Any:  # asked through the CLI, which finds the socket as every client does
            done = subprocess.run([sys.executable, "-m", "claude_memory", "status", "--json"], env=env,
                                  capture_output=True, text=True)  # fmt: skip
            return done.returncode == 0 and json.loads(done.stdout)["service"]

        wait_for(service)
        sockets = [p for p in temp.rglob("*.sock")]
        assert len(sockets) == 1 and sockets[0].parent.name == f"claude-memory-{os.getuid()}-1"
        assert stat.S_IMODE(sockets[0].parent.stat().st_mode) == 0o700 and not list(hostile.iterdir())
        log = (data / "logs" / "service.log").read_text(encoding="utf-8")
        assert f"{hostile} belongs to another user or is not private" in log
    finally:
        subprocess.run([sys.executable, "-m", "claude_memory", "stop"], env=env, capture_output=True, timeout=60)
        proc.wait(timeout=30)


def test_bad_requests_get_one_sentence_and_the_connection_goes_on(running: tuple[Path, ServiceClient]) -> None:
    _, client = running
    for method, params, code in [
        ("no_such_method", {}, "bad_request"),
        ("search", {"query": ""}, "bad_request"),
        ("search", {"query": "x", "limit": 0}, "bad_request"),
        ("forget", {"refs": ["mem:ZZZZZZ"]}, "not_found"),
    ]:
        with pytest.raises(Exception) as err:
            client.call(method, params)
        assert getattr(err.value, "code", None) == code, (method, err.value)
        assert str(err.value).endswith(".") and "\n" not in str(err.value)
    assert client.ping()["service"] == "claude-memory"


def _run_hook(data: Path, event: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(HOOK), event], input=stdin, env=_env(data), capture_output=True, timeout=60)


def test_the_hook_client_gets_context_and_hands_over_captures_in_one_request(
    running: tuple[Path, ServiceClient],
) -> None:
    data, client = running
    ask = {"query": ECHO, "mode": "keyword", "project": WORK}
    wait_for(lambda: len(client.call("search", ask)["results"]) >= 3, what="the import")
    # Pretty-printed, so the payload has line breaks: the client passes it on unparsed, as one request line.
    prompt = {"session_id": "asking", "transcript_path": "/nowhere/asking.jsonl", "cwd": WORK,
              "hook_event_name": "UserPromptSubmit", "prompt": f"the {ECHO} echo"}  # fmt: skip
    done = _run_hook(data, "UserPromptSubmit", json.dumps(prompt, indent=2).encode())
    assert (done.returncode, done.stderr) == (0, b"")
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert ECHO in output["additionalContext"] and "mem:" in output["additionalContext"]

    before = client.call("status")["service"]["captures"]
    capture = {"session_id": "asking", "transcript_path": "/nowhere/asking.jsonl", "cwd": WORK,
               "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "echo hi"},
               "tool_response": {"stdout": "hi\n", "stderr": ""}, "tool_use_id": "toolu_hook_client"}  # fmt: skip
    done = _run_hook(data, "PostToolUse", json.dumps(capture, indent=1).encode())
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    wait_for(lambda: client.call("status")["service"]["captures"] > before, what="the capture")
    assert not RuntimePaths(data).spool.exists() or not RuntimePaths(data).spool.read_text().strip()

    # A payload the service refuses (no session): nothing printed, the reason logged in one line.
    done = _run_hook(data, "UserPromptSubmit", b'{"prompt": "hello-from-fake"}')
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (data / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "UserPromptSubmit: ValueError: The memory service refused the UserPromptSubmit hook" in log
    assert "session_id" in log
    # A refused capture is spooled all the same (a service from before an upgrade may not know `hook`).
    done = _run_hook(data, "Stop", b'{"transcript_path": "/nowhere/refused.jsonl", "last_assistant_message": "x"}')
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    spooled = [json.loads(line) for line in RuntimePaths(data).spool.read_text().splitlines() if line.strip()]
    assert [r["payload"] for r in spooled] == [{"hook_event_name": "Stop", "transcript_path": "/nowhere/refused.jsonl"}]


def test_hostile_hook_payloads_leave_the_service_running_and_get_no_answer(
    running: tuple[Path, ServiceClient], tmp_path: Path, transcripts: Path
) -> None:
    data, client = running
    pid = client.ping()["pid"]
    deep = b"{" + b'"a":{' * 100_000 + b"}" * 100_001
    splice = b'{}},"method":"shutdown","params":{},"x":{"y":{}'
    for event, payload in [("Stop", splice), ("UserPromptSubmit", splice), ("Stop", deep), ("SessionStart", deep)]:
        done = _run_hook(data, event, payload)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), event
        assert client.ping()["pid"] == pid  # still the same service: not stopped, not crashed
    log = (data / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert log.count("nested deeper than 64 levels") == 2 and log.count("not valid JSON") == 2

    # A transcript outside the Claude home is never read, whatever a hook says.
    (outside,) = _write_sessions(tmp_path / "outside", transcripts, 1)
    before = client.call("status")["service"]["captures"]
    payload = {"hook_event_name": "Stop", "session_id": outside.stem, "transcript_path": str(outside),
               "cwd": str(tmp_path)}  # fmt: skip
    done = _run_hook(data, "Stop", json.dumps(payload).encode())
    assert (done.returncode, done.stdout) == (0, b"")
    wait_for(lambda: client.call("status")["service"]["captures"] > before, what="the capture")
    assert client.call("history", {"session": outside.stem, "limit": 10}) == []
    service_log = (data / "logs" / "service.log").read_text(encoding="utf-8")
    assert "named a transcript outside" in service_log and str(outside) not in service_log


BASH_TRANSCRIPT = "greeting.jsonl"  # prompt, answer, Bash call, answer


def _fresh_copy(path: Path, n: int = 1) -> list[bytes]:
    """The transcript's lines as another session (number ``n``): new line uuids (events are deduplicated
    by them) and a new session id."""
    out = []
    for raw in path.read_bytes().splitlines():
        obj = json.loads(raw)
        if isinstance(obj.get("uuid"), str):
            obj["uuid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{n}:{obj['uuid']}"))
        obj["sessionId"] = f"6b1f7f4e-0000-4000-8000-{n:012d}"
        out.append(json.dumps(obj).encode() + b"\n")
    return out


def _write_sessions(folder: Path, transcripts: Path, count: int) -> list[Path]:
    """``count`` fresh copies of the Bash transcript, one session each, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(1, count + 1):
        path = folder / f"6b1f7f4e-0000-4000-8000-{n:012d}.jsonl"
        path.write_bytes(b"".join(_fresh_copy(transcripts / BASH_TRANSCRIPT, n)))
        paths.append(path)
    return paths


def test_appended_lines_and_new_sessions_are_captured_live(
    running: tuple[Path, ServiceClient], claude_home: Path, transcripts: Path
) -> None:
    _, client = running
    wait_for(lambda: client.call("status")["watcher"]["running"], what="the watcher")
    wait_for(lambda: client.call("status")["service"]["queued_tasks"] == 0, what="the first scan")
    source = _fresh_copy(transcripts / BASH_TRANSCRIPT)
    # A new project and session appear while the service runs, and the transcript grows line by line.
    target = claude_home / "projects" / "-tmp-brand-new-project" / "6b1f7f4e-0000-4000-8000-000000000001.jsonl"
    target.parent.mkdir(parents=True)
    with target.open("wb") as fh:
        for line in source:
            fh.write(line)
            fh.flush()
            time.sleep(0.01)

    def captured() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = client.call("history", {"limit": 10_000})
        mine = [e for e in events if e["source"]["path"] == str(target)]
        return mine if {e["type"] for e in mine} >= {"user_prompt", "tool_use", "agent_response"} else []

    events = wait_for(captured, timeout=20, what="the new transcript's events")
    assert len(events) == len({e["id"] for e in events})
    assert all(e["source"]["line_start"] >= 1 for e in events)


def test_captures_spooled_while_the_service_is_down_are_applied_once_when_it_starts(
    tmp_path: Path, claude_home: Path, transcripts: Path
) -> None:
    data = tmp_path / "data"
    paths = RuntimePaths(data)
    # A session the service does not scan (in its Claude home, not under projects/): only the spooled Stop
    # brings it in.
    (transcript,) = _write_sessions(claude_home / "elsewhere", transcripts, 1)
    payload = {
        "hook_event_name": "Stop", "session_id": transcript.stem, "transcript_path": str(transcript),
        "cwd": str(tmp_path), "last_assistant_message": f"The command printed {ECHO}. Done.",
    }  # fmt: skip
    for _ in range(3):  # delivered three times: stored once
        spool_capture(paths, payload)
    assert ECHO.encode() not in paths.spool.read_bytes()  # no content reaches the spool
    with paths.spool.open("ab") as fh:
        fh.write(b'{"v": 1, "payload": {"hook_event_name": "Stop"}}\n')  # no session: rejected, reported
        fh.write(b"not json\n")
    proc = _serve(data, claude_home, "--no-watch")
    client = ServiceClient(data, timeout=30)
    try:
        wait_for(client.ping)

        def stored() -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = client.call("history", {"session": transcript.stem, "limit": 100})
            return found if {e["type"] for e in found} >= {"user_prompt", "tool_use", "agent_response"} else []

        found = wait_for(stored, what="the spooled capture")
        wait_for(lambda: not list(paths.spool_dir.glob("batch-*.jsonl")), what="the spool batch to be deleted")
    finally:
        client.close()
        _stop(data)
        proc.wait(timeout=30)
    with Memory(tmp_path / "reference") as memory:
        memory.import_files([TranscriptFile(transcript, transcript.stem)], settle_seconds=0)
    reference = _ids(tmp_path / "reference")
    assert sorted(e["id"] for e in found) == reference
    log = (paths.log_dir / "service.log").read_text(encoding="utf-8")
    assert log.count("dropped: not a hook capture") == 2


def test_fifty_hooks_at_once_and_a_service_killed_mid_import_store_every_event_exactly_once(
    tmp_path: Path, claude_home: Path, transcripts: Path
) -> None:
    data = tmp_path / "data"
    live = _write_sessions(claude_home / "live", transcripts, 40)  # sessions only the hooks tell about (not scanned)
    with Memory(tmp_path / "reference") as memory:
        memory.import_history(claude_home)
        memory.import_files([TranscriptFile(p, p.stem) for p in live], settle_seconds=0)
    reference = _ids(tmp_path / "reference")
    proc = _serve(data, claude_home)
    client = ServiceClient(data, timeout=30)
    hooks: list[subprocess.Popen[bytes]] = []
    restarted: subprocess.Popen[str] | None = None
    try:
        pid = wait_for(client.ping)["pid"]
        for i in range(50):
            if i % 5 == 4:
                payload = {"hook_event_name": "UserPromptSubmit", "session_id": "storm", "cwd": str(tmp_path),
                           "prompt": f"what did the storm tool print {i}"}  # fmt: skip
                hooks.append(_hook(data, claude_home, "UserPromptSubmit", payload))
                continue
            transcript = live.pop()
            payload = {"hook_event_name": "Stop", "session_id": transcript.stem, "cwd": str(tmp_path),
                       "transcript_path": str(transcript), "stop_hook_active": False}  # fmt: skip
            hooks.append(_hook(data, claude_home, "Stop", payload))
        time.sleep(0.3)  # the first scan is importing the fixtures, hooks are connecting
        os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        results = [h.wait(timeout=60) for h in hooks]
        assert results == [0] * 50  # a hook never fails Claude Code, whatever happened to the service
        outputs = [h.stdout.read() if h.stdout else b"" for h in hooks]
        assert all(not out or out.startswith(b'{"hookSpecificOutput"') for out in outputs)
        # A hook that found no service started one; make sure one runs (the lock keeps it to one).
        restarted = _serve(data, claude_home)

        def settled() -> bool:
            status = client.call("status")
            busy = status["service"]["queued_tasks"] or status["spool"]["bytes"] or status["spool"]["batches_waiting"]
            return not busy and status["store"]["events"] >= len(reference)

        wait_for(settled, timeout=120, what="the restarted service to apply every capture")
    finally:
        client.close()
        _stop(data)
        for h in hooks:
            if h.poll() is None:
                h.kill()
    if restarted is not None:
        restarted.wait(timeout=30)
    ids = _ids(data)
    assert len(ids) == len(set(ids))
    assert sorted(ids) == reference
    with Memory(data) as memory:  # the keyword index holds each event once too
        dupes = memory.con.execute(
            "SELECT count(*) FROM (SELECT event_id, term FROM (SELECT * FROM kw_main UNION ALL SELECT * FROM kw_delta) "
            "GROUP BY ALL HAVING count(*) > 1)"
        ).fetchone()
        assert dupes == (0,)


def test_a_service_whose_code_changed_on_disk_stops_when_quiet_and_the_next_client_starts_the_new_one(
    tmp_path: Path, claude_home: Path
) -> None:
    # a copy of the package stands for an installation that is upgraded under a running service
    copy = tmp_path / "install"
    shutil.copytree(REPO / "server" / "claude_memory", copy / "claude_memory",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    data = tmp_path / "data"
    env = _env(data) | {"PYTHONPATH": str(copy)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(claude_home), "--no-watch"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    client = ServiceClient(data, timeout=30)
    try:
        first = wait_for(client.ping)
        time.sleep(6)  # longer than one check: an unchanged service keeps running
        assert proc.poll() is None
        assert client.ping()["pid"] == first["pid"]
        client.close()

        (copy / "claude_memory" / "core" / "clip.py").write_text(
            (copy / "claude_memory" / "core" / "clip.py").read_text() + "\n# upgraded\n"
        )
        assert proc.wait(timeout=40) == 0  # quiet for 5 s, then the next 5-second check sees the change
        log = (data / "logs" / "service.log").read_text()
        assert f"The claude-memory code in {copy / 'claude_memory'} changed on disk; stopping" in log
        assert not RuntimePaths(data).socket.exists()
        assert holder_pid(RuntimePaths(data).lock) is None

        assert client.ensure_running(wait=60)  # what every face does when no service answers
        assert client.ping()["pid"] != first["pid"]
        client.close()
        _stop(data)
    finally:
        client.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def test_a_write_on_a_connection_the_stopped_service_closed_goes_to_the_next_service(
    running: tuple[Path, ServiceClient], claude_home: Path
) -> None:
    """What the MCP server and the language server do with a write (no resending once it may have reached
    the service): when the service had stopped (an upgrade, `claude-memory stop`) the write never reached it,
    so it is sent to a new one instead of failing as dropped."""
    data, client = running
    first = client.ping()["pid"]
    with ServiceClient(data, timeout=30) as other:
        other.call("shutdown")
    wait_for(lambda: holder_pid(RuntimePaths(data).lock) is None, what="the service to stop")
    started: list[subprocess.Popen[str]] = []

    def start(c: ServiceClient) -> None:
        started.append(_serve(data, claude_home))
        wait_for(c.ping)

    try:
        assert call_starting(client, "drain", {}, start, retry=False) == {"scheduled": True}
        assert len(started) == 1 and client.ping()["pid"] not in (first, None)
    finally:
        _stop(data)
        for proc in started:
            proc.wait(timeout=30)
