"""The hook payloads Claude Code 2.1.330 really sent (tests/fixtures/hook_payloads, captured while it wrote the
fixture transcripts), replayed through the plugin's hook command into a memory service whose own Claude home
is empty: the hooks alone bring every session in, exactly as an import of the transcripts would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from claude_memory.client.connection import ServiceClient
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.capture import HookPayload, tool_output
from claude_memory.service.discovery import discover
from claude_memory.service.lock import holder_pid
from claude_memory.service.memory import Memory
from support import own_fixtures as fx
from support.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "claude-memory-hook"
REGISTERED = set(json.loads((REPO / "plugin" / "hooks" / "hooks.json").read_text())["hooks"])


def test_every_captured_payload_is_read_as_claude_code_sent_it() -> None:
    records = fx.hook_payloads()
    assert {r["event"] for r in records} >= REGISTERED | {"SubagentStart", "SubagentStop", "PreToolUse"}
    outputs: dict[str, list[str]] = {}
    for record in records:
        payload = HookPayload.model_validate(record["payload"])
        assert payload.hook_event_name == record["event"] and payload.session_id in fx.SESSIONS
        assert payload.transcript_path and fx.fixture_path(payload.transcript_path).is_file()
        assert payload.cwd in fx.PROJECTS
        if record["event"] == "PostToolUse":
            outputs.setdefault(str(payload.tool_name), []).append(tool_output(payload.tool_response))
    assert f"{fx.ECHO_WORD}\n" in [out + "\n" for out in outputs["Bash"]]  # stdout of the echo
    assert any("Meeting notes: ship the greeting feature" in out for out in outputs["Read"])  # a read file
    (mcp,) = outputs["mcp__notes__remember"]  # an MCP tool's answer arrives as a JSON string
    assert json.loads(mcp) == {"result": "noted: the user prefers uv over pip"}
    (failure,) = [r["payload"] for r in records if r["event"] == "PostToolUseFailure"]
    assert failure["tool_name"] == "Read" and "does not exist" in failure["error"]
    prompts = [r["payload"]["prompt"] for r in records if r["event"] == "UserPromptSubmit"]
    assert any(p.startswith("<task-notification>") for p in prompts)  # a background agent reporting back
    # The compaction summariser's SubagentStop names a transcript Claude Code never wrote.
    stops = [r["payload"] for r in records if r["event"] == "SubagentStop"]
    assert any(not fx.fixture_path(p["agent_transcript_path"]).exists() for p in stops)
    assert any(fx.fixture_path(p["agent_transcript_path"]).is_file() for p in stops)


def _relocated(payload: dict[str, Any], home: Path) -> dict[str, Any]:
    """The payload with its transcript paths pointing into ``home``, a copy of the fixtures' Claude home."""
    prefix = f"{fx.HOME}/.claude/"
    out = dict(payload)
    for key in ("transcript_path", "agent_transcript_path"):
        if isinstance(out.get(key), str) and out[key].startswith(prefix):
            out[key] = str(home / out[key][len(prefix) :])
    return out


def _env(data: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    return env | {
        "CLAUDE_MEMORY_HOME": str(data),
        "CLAUDE_MEMORY_PYTHON": sys.executable,
        "CLAUDE_CONFIG_DIR": str(home),
    }


def _ids(data: Path) -> set[int]:
    with Memory(data) as memory:
        return {int(r[0]) for r in memory.con.execute("SELECT id FROM events").fetchall()}


@pytest.mark.parametrize("also_subagent_stops", [False, True], ids=["plugin-hooks", "with-SubagentStop"])
def test_replayed_hooks_alone_capture_every_session(
    fixtures_home: Path, tmp_path: Path, also_subagent_stops: bool
) -> None:
    """The plugin registers the hooks in plugin/hooks/hooks.json; its service also handles SubagentStop,
    which names the subagent's own transcript (and, for the compaction summariser, one that is never written)."""
    watched = tmp_path / "watched"  # the service's Claude home: nothing to catch up with in its projects/
    (watched / "projects").mkdir(parents=True)
    # where the payloads' transcripts are: inside that Claude home (a hook may name no other file), but not
    # under projects/, so that only the hooks bring them in
    home = shutil.copytree(fixtures_home, watched / "hooked")
    data = tmp_path / "data"
    events = REGISTERED | ({"SubagentStop"} if also_subagent_stops else set())
    found = discover(home)
    expected_files = [f for f in found.files if also_subagent_stops or f.agent_id is None]
    with Memory(tmp_path / "reference") as memory:
        memory.import_files(expected_files, settle_seconds=0)
    reference = _ids(tmp_path / "reference")

    env = _env(data, watched)
    serve = subprocess.Popen(
        [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(watched), "--no-watch"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = ServiceClient(data, timeout=30)
    try:
        wait_for(client.ping, "the service", timeout=120)
        replayed = 0
        for record in fx.hook_payloads():
            if record["event"] not in events:
                continue
            payload = json.dumps(_relocated(record["payload"], home)).encode()
            done = subprocess.run([str(HOOK), record["event"]], input=payload, env=env, capture_output=True, timeout=60)
            assert (done.returncode, done.stderr) == (0, b""), record
            if done.stdout:  # context, only ever for the events that may give it
                answer = json.loads(done.stdout)["hookSpecificOutput"]
                assert record["event"] in ("SessionStart", "UserPromptSubmit")
                assert answer["hookEventName"] == record["event"] and answer["additionalContext"].strip()
            replayed += 1
        assert replayed > 100

        def settled() -> bool:
            status = client.call("status")
            busy = status["service"]["queued_tasks"] or status["spool"]["bytes"] or status["spool"]["batches_waiting"]
            return not busy and status["store"]["events"] >= len(reference)

        wait_for(settled, "the service to apply every capture", timeout=120)
        summaries = client.call("sessions", {"limit": 100})
    finally:
        client.close()
        subprocess.run([sys.executable, "-m", "claude_memory", "stop"], env=env, capture_output=True, timeout=60)
        serve.wait(timeout=60)
    assert holder_pid(RuntimePaths(data).lock) is None
    assert _ids(data) == reference
    assert {s["session_id"] for s in summaries} == set(fx.SESSIONS)
    hooks_log = data / "logs" / "hooks.log"
    assert not hooks_log.exists() or not hooks_log.read_text(encoding="utf-8").strip()
