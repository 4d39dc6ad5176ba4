"""The real ``claude-memory`` commands while a real memory service owns the store: they go through its socket,
answer as they do in-process (the same JSON, the same text), and forget through it for good."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pytest

from claude_memory.client.connection import ServiceClient, ServiceUnavailable
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import holder_pid
from support import own_fixtures as fx
from support.shared_data import embedding_model

Cli = Callable[..., subprocess.CompletedProcess[str]]
SMALL = fx.GREETING  # prompt, answer, Bash call, answer
VOLATILE = {"took_ms", "timings", "citation_uses", "sessions_used", "last_used", "store_bytes"}


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def stable(data: Any) -> Any:
    """``data`` without the fields that change from one run to the next."""
    if isinstance(data, dict):
        return {k: stable(v) for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [stable(v) for v in data]
    return data


@dataclass
class Service:
    """A ``claude-memory serve`` process for one data directory, and the command line against it."""

    data: Path
    home: Path
    model: Path
    proc: subprocess.Popen[bytes]
    log: Path
    run_cli: Cli
    stopped: bool = field(default=False)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run_cli(self.data, *args, model=self.model)

    def stop(self) -> None:
        """``claude-memory stop``, then make sure the process is gone (killed if it is not)."""
        if self.stopped:
            return
        self.stopped = True
        try:
            result = self.cli("stop")
            assert result.returncode == 0, result.stderr
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
        assert self.proc.returncode is not None
        assert holder_pid(RuntimePaths(self.data).lock) is None, "the service lock is still held"


def _wait_for_ping(service: Service, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if service.proc.poll() is not None:
            pytest.fail(f"the memory service exited with {service.proc.returncode}: {service.log.read_text()}")
        try:
            with ServiceClient(service.data, timeout=1) as client:
                client.ping(timeout=1)
            return
        except ServiceUnavailable:
            time.sleep(0.1)
    pytest.fail(f"the memory service did not answer a ping in {seconds:g} s: {service.log.read_text()}")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path, cli: Cli) -> Iterator[Service]:
    model = embedding_model()
    tmp = tmp_path_factory.mktemp("cli-service")
    home = tmp / "claude_home"
    shutil.copytree(fixtures_home, home)
    data = tmp / "data"
    env = {**os.environ, "CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_MODEL_PATH": str(model)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    log = tmp / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(home), "--no-watch"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    running = Service(data, home, model, proc, log, cli)
    try:
        _wait_for_ping(running)
        yield running
    finally:
        running.stop()


def transcript_count(home: Path) -> int:
    return len(list((home / "projects").rglob("*.jsonl")))


@pytest.fixture(scope="module")
def imported(service: Service) -> Service:
    """The fixture history imported through the service, and embedded (the import waits for that)."""
    report = as_json(service.cli("import", "--claude-home", str(service.home), "--json"))
    assert report["files"]["found"] == transcript_count(service.home) and report["skipped_lines"]["total"] == 0
    status = as_json(service.cli("status", "--json"))
    assert status["events"] > 80 and status["available"] and status["pending"] == 0
    return service


def test_commands_answer_through_the_service_while_it_holds_the_store(imported: Service) -> None:
    svc = imported
    with pytest.raises(duckdb.Error):  # the service owns the file: no other process may open it
        duckdb.connect(str(svc.data / "memory.duckdb")).close()

    status = as_json(svc.cli("status", "--json"))
    assert status["service"]["pid"] == svc.proc.pid and status["store"] == str(svc.data)
    assert status["watcher"] == {"root": str(svc.home / "projects"), "running": False, "error": None}
    assert {"model", "available", "reason", "pending", "failed", "embedded_events", "vectors", "index_live"} <= set(
        status
    )
    human = svc.cli("status")
    assert human.returncode == 0, human.stderr
    assert f"Service: running (pid {svc.proc.pid}" in human.stdout and "Watcher: off" in human.stdout
    assert "Spool: 0 bytes" in human.stdout and "Semantic search: on" in human.stdout

    again = svc.cli("import", "--claude-home", str(svc.home), "--no-wait")
    assert again.returncode == 0, again.stderr
    assert f"Read 0 of {transcript_count(svc.home)}" in again.stdout
    assert f"memory service (pid {svc.proc.pid}) did this import" in again.stdout
    elsewhere = svc.cli("import", "--claude-home", str(svc.data))
    assert elsewhere.returncode == 1 and "claude-memory stop" in elsewhere.stderr
    nothing = svc.cli("import", "--claude-home", str(svc.home), "--project", "/no/such/project")
    assert nothing.returncode == 4 and "No Claude Code transcripts" in nothing.stderr

    found = as_json(svc.cli("search", fx.TOPIC, "--limit", "3", "--json"))
    assert len(found["results"]) == 3 and found["meta"]["mode"] == "hybrid"
    text = svc.cli("search", fx.TOPIC, "--limit", "3")
    assert text.returncode == 0 and text.stdout.startswith(f"#1 [{found['results'][0]['citation']}]")
    smart = svc.cli("search", fx.TOPIC, "--smart", "--limit", "3")
    assert smart.returncode == 0 and smart.stdout.splitlines()[-1].startswith("~")
    assert "of 2000 tokens" in smart.stdout
    none = svc.cli("search", "zzqxv wqxyzj", "--mode", "keyword")
    assert none.returncode == 0 and "No memories match." in none.stdout

    citation = found["results"][0]["citation"]
    shown = svc.cli("show", citation)
    assert shown.returncode == 0 and citation in shown.stdout and "Source " in shown.stdout
    assert svc.cli("show", "mem:zzzzzz").returncode == 4
    window = svc.cli("timeline", citation, "mem:zzzzzz", "--before", "1", "--after", "1")
    assert window.returncode == 0 and "Warning: no memory mem:zzzzzz" in window.stderr
    assert window.stdout.startswith("Session ") and f"▶ [{citation}]" in window.stdout
    for args in (("history", "--limit", "5"), ("sessions",), ("stats",)):
        run = svc.cli(*args)
        assert run.returncode == 0 and run.stdout.strip(), (args, run.stderr)
    assert as_json(svc.cli("reindex", "--json"))["vectors"] == status["index_live"]


def test_forget_through_the_service(imported: Service, tmp_path: Path) -> None:
    svc = imported
    assert not svc.stopped, "runs before test_answers_match_the_in_process_ones, which stops the service"
    events = as_json(svc.cli("history", "--session", SMALL, "--json"))["events"]
    assert len(events) == 4
    citation = events[0]["citation"]

    unknown = svc.cli("forget", "mem:zzzzzz", "--yes")
    assert unknown.returncode == 4 and unknown.stderr == "Error: No memory mem:zzzzzz; nothing was forgotten.\n"
    none = svc.cli("forget", "--session", "no-such-session", "--yes", "--json")
    assert none.returncode == 4 and "Nothing matches" in none.stderr and json.loads(none.stdout) == {"forgotten": 0}
    unconfirmed = svc.cli("forget", citation)  # no terminal to ask on
    assert unconfirmed.returncode == 1 and "1 events match; re-run with --yes" in unconfirmed.stderr
    assert svc.cli("show", citation).returncode == 0

    before = as_json(svc.cli("stats", "--json"))
    assert as_json(svc.cli("forget", citation, "--yes", "--json")) == {"forgotten": 1}
    after = as_json(svc.cli("stats", "--json"))
    assert after["events"] == before["events"] - 1 and after["forgotten_events"] == before["forgotten_events"] + 1
    gone = svc.cli("show", citation)
    assert gone.returncode == 4 and "No memory" in gone.stderr
    rest = as_json(svc.cli("history", "--session", SMALL, "--json"))["events"]
    assert [e["citation"] for e in rest] == [e["citation"] for e in events[1:]]
    assert svc.cli("forget", "--session", SMALL, "--yes").stdout == "Forgot 3 events.\n"
    assert as_json(svc.cli("history", "--session", SMALL, "--json"))["events"] == []


def test_answers_match_the_in_process_ones(imported: Service, tmp_path: Path) -> None:
    """Every query command, through the service and then in-process on the same store once it stopped:
    the same JSON (less timings and use counts) and the same text."""
    svc = imported
    ranked = as_json(svc.cli("search", fx.TOPIC, "--limit", "6", "--json"))["results"]
    first, second = ranked[0]["citation"], ranked[3]["citation"]
    batch = tmp_path / "batch.jsonl"
    batch.write_text(f'{{"query": "{fx.ECHO_WORD}", "project": "{fx.WORK}", "limit": 2}}\nnot json\n')
    commands: list[tuple[str, ...]] = [
        ("search", fx.TOPIC, "--limit", "6", "--json"),
        ("search", fx.TOPIC, "--limit", "6"),
        ("search", fx.ECHO_WORD, "--mode", "keyword", "--project", fx.WORK, "--json"),
        ("search", "formatting the python code", "--mode", "semantic", "--type", "tool_use", "--json"),
        ("search", fx.TOPIC, "--since", "2026-03-12", "--until", "2026-03-15", "--json"),
        ("search", fx.TOPIC, "--budget", "900", "--limit", "5", "--json"),
        ("search", fx.TOPIC, "--budget", "900", "--limit", "5"),
        ("search", "--batch", str(batch)),
        ("search", "--batch", str(batch), "--budget", "300"),
        ("show", first, "--json"),
        ("show", first, "--context", "1"),
        ("timeline", first, second, "--json"),
        ("timeline", first, second, "--before", "1"),
        ("history", "--limit", "40", "--json"),
        ("history", "--limit", "40"),
        ("history", "--type", "user_prompt", "--project", fx.WORK, "--json"),
        ("sessions", "--json"),
        ("sessions",),
        ("stats", "--json"),
    ]

    def answers() -> list[Any]:
        out: list[Any] = []
        for args in commands:
            run = svc.cli(*args)
            assert run.returncode == 0, (args, run.stderr)
            if "--batch" in args:
                out.append([stable(json.loads(line)) for line in run.stdout.splitlines()])
            elif "--json" in args:
                out.append(stable(json.loads(run.stdout)))
            else:  # (less `show`'s line of uses: each call counts one)
                out.append("".join(line for line in run.stdout.splitlines(True) if not line.startswith("Used ")))
        return out

    through_service = answers()
    svc.stop()
    assert ServiceClient(svc.data).paths.socket.exists() is False
    local_status = as_json(svc.cli("status", "--json"))
    assert local_status["service"] is None and local_status["events"] == through_service[-1]["events"]
    assert "Service: not running (starts on demand)" in svc.cli("status").stdout
    in_process = answers()
    for args, remote, local in zip(commands, through_service, in_process, strict=True):
        assert remote == local, args


def test_a_service_that_stops_answering_mid_command_is_one_sentence(tmp_path: Path, cli: Cli) -> None:
    """A stand-in service answers the ping and hangs up on the next request."""
    data = tmp_path / "data"
    path = RuntimePaths(data).socket
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    server.settimeout(30)

    def serve() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn, conn.makefile("rb") as lines:
            for line in lines:
                request = json.loads(line)
                if request["method"] != "ping":
                    return  # hang up without an answer
                answer = {"id": request["id"], "result": {"service": "claude-memory", "pid": 1}}
                conn.sendall(json.dumps(answer).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        run = cli(data, "stats")
    finally:
        server.close()
        thread.join(10)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("Error: The memory service stopped answering") and len(run.stderr.splitlines()) == 1
    assert not (data / "memory.duckdb").exists()  # it did not fall back to opening the store itself
