"""Endless mode on real stores and a real service (SEED_SPEC §9's success criteria): it toggles on and off without
losing anything, its working set is a 24-hour sliding window, consolidation runs in the background, the continuity of
each prompt is logged, and its context is there again after the service restarts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from claude_memory.client.connection import ServiceClient
from claude_memory.service.capture import HookPayload
from claude_memory.service.memory import Memory
from claude_memory.service.recall import ContextParams, Recaller
from support import service_proc
from support.waiting import wait_for

PROJECT = "/nonexistent/endless"


def _line(n: int, session: str, ts: datetime, kind: str, text: str) -> str:
    if kind == "user":
        message: dict[str, object] = {"role": "user", "content": text}
    else:
        message = {"id": f"m{n}", "role": "assistant", "content": [{"type": "text", "text": text}]}
    stamp = ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return json.dumps({"type": kind, "uuid": f"e{n}", "sessionId": session, "timestamp": stamp, "cwd": PROJECT,
                       "message": message}) + "\n"  # fmt: skip


def _write(path: Path, lines: list[tuple[str, datetime, str, str]], start: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        for n, (session, ts, kind, text) in enumerate(lines, start=start):
            fh.write(_line(n, session, ts, kind, text))


def _now() -> datetime:
    return datetime.now(UTC)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    now = _now()
    home = tmp_path / "claude"
    _write(home / "projects" / "-nonexistent-endless" / "s1.jsonl", [
        ("s1", now - timedelta(days=3), "user", "def legacy_report(): fix the old report export"),  # outside the day
        ("s1", now - timedelta(hours=30), "user", "fix the discount rounding in cart.py"),
        ("s2", now - timedelta(hours=3), "user", "fix the discount rounding bug in cart.py again, the test fails"),
        ("s2", now - timedelta(hours=3, minutes=-1), "assistant", "I fixed the discount rounding bug; it passes."),
        ("s2", now - timedelta(hours=2), "user", "now add a test for the discount fix in cart.py"),
        ("s3", now - timedelta(hours=1), "user", "update the discount docs and fix the typo in cart.py"),
    ])  # fmt: skip
    return home


@pytest.fixture()
def memory(tmp_path: Path, home: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "data") as m:
        m.import_history(home, settle_seconds=0)
        yield m


def test_toggle_on_and_off_keeps_everything_and_the_window_is_the_last_24_hours(memory: Memory) -> None:
    endless = memory.endless
    assert endless.mode() == "session" and endless.refresh() == 0
    assert endless.status(PROJECT)["working_set"] == 0  # session mode keeps nothing new
    state = endless.set_mode("endless")
    assert state["mode"] == "endless"
    live = endless.working_set(PROJECT)
    texts = [w["text"] for w in live]
    assert len(live) == 4 and not any(
        "legacy_report" in t or t.startswith("fix the discount rounding in") for t in texts
    )
    assert live[0]["type"] == "user_prompt"  # prompts are the most relevant, then the newest
    made = endless.consolidated(PROJECT)
    assert made and "cart.py" in made[0]["topics"] and 0 < made[0]["confidence"] <= 1
    # every prompt was scored against the one before it (the week's, oldest first; three in the last day)
    assert sum(endless.status(PROJECT)["transitions_24h"].values()) == 3
    before = (endless.status(PROJECT)["working_set"], endless.status(PROJECT)["consolidated"])
    endless.set_mode("session")
    after = endless.status(PROJECT)
    assert after["mode"] == "session" and (after["working_set"], after["consolidated"]) == before
    with pytest.raises(ValueError, match="endless' or 'session"):
        endless.set_mode("forever")


def test_forget_takes_working_set_entries_and_the_consolidated_memories_built_on_them(memory: Memory) -> None:
    memory.endless.set_mode("endless")
    made = memory.endless.consolidated(PROJECT)[0]
    from claude_memory.core.filters import ForgetSelector

    memory.forget(ForgetSelector(event_ids=(made["source_events"][0],)))
    assert made["id"] not in {c["id"] for c in memory.endless.consolidated(PROJECT)}
    assert made["source_events"][0] not in {w["citation"] for w in memory.endless.working_set(PROJECT)}
    assert memory.endless.status(PROJECT)["working_set"] == 3


def _session_start(memory: Memory, session: str) -> str:
    payload = HookPayload.model_validate({"hook_event_name": "SessionStart", "session_id": session, "cwd": PROJECT})
    return str(Recaller(memory).context(ContextParams(payload=payload))["additional_context"])


def test_session_start_in_endless_mode_opens_with_continuity_working_set_and_consolidated(memory: Memory) -> None:
    plain = _session_start(memory, "s9")
    assert "Last session:" in plain or ("Recent memories:" in plain and "Context:" not in plain)
    memory.endless.set_mode("endless")
    opening = _session_start(memory, "s9")
    assert "Context: " in opening and "Recent context (working set):" in opening
    assert "Related knowledge (consolidated):" in opening and "Last session:" not in opening
    assert "[mem:" in opening.split("Recent context (working set):")[1]


def test_consolidation_runs_in_the_background_and_the_context_survives_a_restart(tmp_path: Path, home: Path) -> None:
    data = tmp_path / "data"
    proc = service_proc.serve(data, home)
    client = ServiceClient(data, timeout=30)
    restarted = None
    try:
        wait_for(lambda: client.call("status")["store"]["events"] >= 6, what="the import")
        config = {"consolidation": {"trigger_event_count": 3, "min_events": 3}}
        assert client.call("mode", {"set": "endless", "config": config})["mode"] == "endless"
        first = client.call("endless", {"project": PROJECT})["state"]["consolidated"]
        now = _now()
        _write(home / "projects" / "-nonexistent-endless" / "s4.jsonl", [
            ("s4", now, "user", "class InvoiceExporter: refactor the invoice exporter"),
            ("s4", now, "assistant", "I refactored the InvoiceExporter class into two functions."),
            ("s4", now, "user", "the invoice exporter refactor broke the csv test, refactor it back"),
        ], start=100)  # fmt: skip
        wait_for(
            lambda: client.call("endless", {"project": PROJECT})["state"]["consolidated"] > first,
            timeout=120, what="a consolidation in the background",
        )  # fmt: skip
        seen = client.call("endless", {"project": PROJECT})
        assert any("invoiceexporter" in c["topics"] or "refactor" in c["topics"] for c in seen["consolidated"])
        working = {w["citation"] for w in seen["working_set"]}
    finally:
        client.close()
        service_proc.stop(data)
        proc.wait(timeout=60)
    restarted = service_proc.serve(data, home)
    client = ServiceClient(data, timeout=30)
    try:
        wait_for(client.ping)
        state = client.call("endless", {"project": PROJECT})
        assert state["state"]["mode"] == "endless" and {w["citation"] for w in state["working_set"]} == working
        answer = client.call("context", {"payload": {"hook_event_name": "SessionStart", "session_id": "after",
                                                     "cwd": PROJECT}})  # fmt: skip
        assert "Recent context (working set):" in answer["additional_context"]
    finally:
        client.close()
        service_proc.stop(data)
        restarted.wait(timeout=60)
