"""The plugin end to end: the real Claude Code CLI (against the fake API in tests/support/fake_anthropic.py) runs our
hooks from the repository root as a plugin, and the memory service they start captures and injects.

Session 1 talks about a distinctive topic and runs a Bash tool; session 2 asks about the topic. The
request the fake model receives in session 2 must carry the injected memory with its citation; the
service must hold both transcripts, the tool call exactly once, and nothing we injected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_memory.client.connection import ServiceClient
from claude_memory.service.lock import holder_pid
from support.fake_anthropic import FakeAnthropic, Rule, text, tool
from support.shared_data import embedding_model

REPO = Path(__file__).resolve().parents[2]
TOPIC = "The zebra-quartz deployment listens on port 4711"
RULES = [
    Rule(
        "ZEBRA_SETUP",
        [
            [text("Checking the zebra-quartz port."), tool("Bash", command="echo zebra-quartz-port-4711")],
            [text("The zebra-quartz service answered on 4711.")],
        ],
        needs_tool="Bash",
    )
]


@pytest.fixture(params=["keyword", "hybrid"])
def world(
    request: pytest.FixtureRequest, tmp_path: Path, claude_bin: Path, fake_anthropic: Callable[..., FakeAnthropic]
) -> Iterator[dict[str, Any]]:
    """A fake Anthropic API, a scratch HOME, a project directory and a data directory for the service, which
    searches by keyword alone or (with the embedding model) by keyword and meaning."""
    model = {"CLAUDE_MEMORY_MODEL_PATH": str(embedding_model())} if request.param == "hybrid" else {}
    api = fake_anthropic(RULES)
    home, data, work = tmp_path / "home", tmp_path / "data", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC"))},
        "HOME": str(home),
        **api.env(),
        "CLAUDE_MEMORY_HOME": str(data),
        **model,
        "CLAUDE_MEMORY_PYTHON": sys.executable,
    }
    try:
        yield {"env": env, "home": home, "data": data, "work": work, "api": api, "claude": claude_bin}
    finally:
        subprocess.run([sys.executable, "-m", "claude_memory", "stop"], env=env, capture_output=True, timeout=60)
    assert holder_pid(data / "service.lock") is None, "the memory service outlived the test"


def claude(world: dict[str, Any], prompt: str, *tools: str) -> dict[str, Any]:
    args = [str(world["claude"]), "-p", prompt, "--plugin-dir", str(REPO / "plugin"), "--model", "claude-sonnet-4-5",
            "--output-format", "json"]  # fmt: skip
    if tools:
        args += ["--allowedTools", ",".join(tools)]
    done = subprocess.run(args, cwd=world["work"], env=world["env"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    assert not result.get("is_error"), result
    return result


def stored(world: dict[str, Any], want: dict[str, int], timeout: float = 30) -> list[dict[str, Any]]:
    """Every stored event, once the store holds at least ``want`` events of each type."""
    with ServiceClient(world["data"], timeout=30) as client:
        deadline = time.monotonic() + timeout
        while True:
            events: list[dict[str, Any]] = client.call("history", {"limit": 1000})
            counts = {t: sum(1 for e in events if e["type"] == t) for t in want}
            if all(counts[t] >= n for t, n in want.items()) or time.monotonic() > deadline:
                return events
            time.sleep(0.2)


def test_second_session_gets_the_first_sessions_memory_with_its_citation(world: dict[str, Any]) -> None:
    first = claude(world, f"ZEBRA_SETUP: {TOPIC}. Please check it.", "Bash")
    events = stored(world, {"user_prompt": 1, "tool_use": 1, "agent_response": 1})
    prompt = [e for e in events if e["type"] == "user_prompt" and "zebra-quartz" in e["text"]]
    assert len(prompt) == 1 and prompt[0]["session_id"] == first["session_id"]
    citation = prompt[0]["citation"]  # rendered: mem:AbC123

    second = claude(world, "Which port does the zebra-quartz deployment listen on?")
    assert second["session_id"] != first["session_id"]

    # The fake model received the memory, with its citation, as UserPromptSubmit context.
    bodies = [json.dumps(body, ensure_ascii=False) for body in world["api"].bodies()]
    asked = [b for b in bodies if "Which port does the zebra-quartz deployment listen on?" in b]
    assert asked, "the second session's prompt never reached the model"
    injected = [b for b in asked if "UserPromptSubmit hook additional context: " in b]
    assert injected, "no memory was injected into the second session's prompt"
    assert citation in injected[0] and "listens on port 4711" in injected[0]
    assert "SessionStart hook additional context: " in injected[0]  # the project's last session, at start

    events = stored(world, {"user_prompt": 2, "agent_response": 2})
    # Both transcripts were ingested.
    assert {first["session_id"], second["session_id"]} <= {e["session_id"] for e in events}
    # The tool call was captured once (by the PostToolUse hook or the transcript, never both).
    tools = [e for e in events if e["type"] == "tool_use"]
    assert len(tools) == 1 and tools[0]["tool_name"] == "Bash"
    assert "zebra-quartz-port-4711" in tools[0]["text"]
    assert len({e["id"] for e in events}) == len(events)
    # Nothing we injected came back as a memory.
    for e in events:
        assert "hook additional context" not in e["text"]
        assert "Memories from earlier Claude Code sessions" not in e["text"]
        assert "claude-memory has project" not in e["text"]
    # Session 1 ended with its rule-based summary, which session 2 was shown at its start.
    assert "Last session: Session" in injected[0] and "Tools: Bash ×1" in injected[0]
