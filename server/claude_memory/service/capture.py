"""Captures from Claude Code's hooks, applied by the service (from the spool, in the worker thread).

Hooks are triggers: each capture names its transcript, and the transcript is read at once from its
checkpoint, so events get the same dedupe keys and source lines as any import, and their text passes the
privacy filter like any import (the spool holds no content: ``claude_memory.wire.CAPTURE_FIELDS``).
At SessionEnd the session's rule-based summary is written. A ``capture`` request that carries a
PostToolUse result (the service API's direct path) stores the call at once under the transcript's own
key for it, ``tool:<session>:<tool_use_id>``, so the transcript's copy is skipped when it arrives.
Every step is idempotent: a capture applied twice (after a crash, or delivered twice) changes nothing
the second time.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from claude_memory.core import events as ev
from claude_memory.core.edits import edit_hunks
from claude_memory.core.events import ParsedEvent, SourceRef, event_id_for
from claude_memory.core.injection import SessionFacts, session_summary
from claude_memory.core.tasks import task_op
from claude_memory.core.toolfiles import files_touched
from claude_memory.core.transcript import tool_call_text
from claude_memory.service.discovery import transcript_file
from claude_memory.service.importer import prepare_event
from claude_memory.service.memory import Memory
from claude_memory.service.projects import ProjectResolver
from claude_memory.store import queries, sessions
from claude_memory.store.db import from_store_time
from claude_memory.store.writer import SessionInfo

log = logging.getLogger("claude_memory.service")

LIVE_SETTLE_SECONDS = 2.0  # an open assistant message is complete once its file is idle this long
TURN_OVER = frozenset({"Stop", "SubagentStop", "PreCompact", "PostCompact", "SessionEnd"})
TOOL_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})


class HookPayload(BaseModel):
    """The fields of Claude Code's hook input that capture uses (others are kept and ignored)."""

    model_config = ConfigDict(extra="allow")
    hook_event_name: str = Field(min_length=1, max_length=100)
    session_id: str = Field(min_length=1, max_length=200)
    transcript_path: str | None = None
    cwd: str | None = None
    prompt: str | None = None
    source: str | None = None
    reason: str | None = None
    tool_name: str | None = None
    tool_input: Any = None
    tool_response: Any = None
    tool_use_id: str | None = None
    error: str | None = None
    agent_id: str | None = None
    agent_transcript_path: str | None = None


def under_home(path: str, home: Path) -> bool:
    """True if ``path`` (symbolic links resolved) lies inside the Claude home ``home``: a hook may only name
    Claude Code's own transcripts, never make the service read another file."""
    try:
        return Path(path).resolve().is_relative_to(home.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def tool_output(response: Any) -> str:
    """The readable output in a PostToolUse ``tool_response`` (Bash stdout/stderr, a read file's content,
    an MCP tool's JSON string, or the structure itself as JSON)."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        if "stdout" in response or "stderr" in response:
            parts = [response.get("stdout"), response.get("stderr")]
            return "\n".join(p for p in parts if isinstance(p, str) and p)
        file_info = response.get("file")
        if isinstance(file_info, dict) and isinstance(file_info.get("content"), str):
            return str(file_info["content"])
        if isinstance(response.get("content"), str):
            return str(response["content"])
    if response is None:
        return ""
    return json.dumps(response, ensure_ascii=False, default=str)


def _find_line(path: Path, needle: str) -> tuple[int, int, int] | None:
    """(line number, byte start, byte end) of the first line of ``path`` containing ``needle``."""
    target = needle.encode("utf-8")
    try:
        with path.open("rb") as fh:
            offset = 0
            for line_no, line in enumerate(fh, start=1):
                if target in line:
                    return line_no, offset, offset + len(line)
                offset += len(line)
    except OSError:
        return None
    return None


class Capture:
    """Applies hook captures to the store. Use from the service's worker thread only."""

    def __init__(self, memory: Memory, claude_home: Path) -> None:
        self.memory = memory
        self.claude_home = claude_home
        self.projects = ProjectResolver()
        self._refused: set[str] = set()  # paths outside the Claude home already logged

    def _transcripts(self, payload: HookPayload) -> list[Path]:
        """The transcripts a capture names that lie under the Claude home (others are refused, logged once)."""
        found = []
        for path in (payload.transcript_path, payload.agent_transcript_path):
            if not path or not path.endswith(".jsonl"):
                continue
            if under_home(path, self.claude_home):
                found.append(Path(path))
            elif path not in self._refused:
                self._refused.add(path)
                log.warning("A %s hook named a transcript outside %s; not reading it.", payload.hook_event_name,
                            self.claude_home)  # fmt: skip
        return found

    def apply(self, payload: HookPayload) -> dict[str, Any]:
        """Read the named transcripts, then store what only the hook knows. Returns what changed."""
        name = payload.hook_event_name
        settle = 0.0 if name in TURN_OVER else LIVE_SETTLE_SECONDS
        files = [f for f in (transcript_file(p) for p in self._transcripts(payload) if p.is_file()) if f]
        new = self.memory.import_files(files, settle_seconds=settle).events_new if files else 0
        if name in TOOL_EVENTS and payload.tool_use_id and (payload.tool_response is not None or payload.error):
            new += self._tool(payload)  # only a payload with the result (a direct `capture` call): hooks spool
            # no content, and the transcript's tool_result line brings the call in as soon as it is written
        ended = name == "SessionEnd" and self.end_session(payload.session_id, payload.reason)
        return {"event": name, "new_events": new, "session_summary": ended}

    def _tool(self, payload: HookPayload) -> int:
        key = f"tool:{payload.session_id}:{payload.tool_use_id}"
        if queries.event_known(self.memory.con, event_id_for(key)):
            return 0  # the transcript had it already (or this capture was applied before)
        name = payload.tool_name or ""
        failed = payload.hook_event_name == "PostToolUseFailure"
        output = (payload.error or "") if failed else tool_output(payload.tool_response)
        structured = payload.tool_response if isinstance(payload.tool_response, dict) else None
        text, metadata = tool_call_text(name, payload.tool_input, output, structured, is_error=failed)
        metadata["captured_by"] = "hook"
        path = payload.transcript_path or ""
        if path and not under_home(path, self.claude_home):
            path = ""  # cited without a line: the file is not Claude Code's
        found = _find_line(Path(path), f'"{payload.tool_use_id}"') if path else None
        line, start, end = found or (0, 0, 0)
        event = ParsedEvent(
            dedupe_key=key,
            type=ev.TOOL_USE,
            session_id=payload.session_id,
            timestamp=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            text=text,
            source=SourceRef(path, line, line, start, end, None),
            cwd=payload.cwd,
            agent_id=payload.agent_id,
            tool_name=name or None,
            tool_use_id=payload.tool_use_id,
            metadata=metadata,
        )
        event.files = files_touched(name, payload.tool_input, structured, payload.cwd)
        event.edits = edit_hunks(name, payload.tool_input, structured, failed=failed)
        task = task_op(name, payload.tool_input, structured, failed=failed)
        if task is not None:
            event.metadata["task"] = task
        settings = self.memory.settings
        prepare_event(event, self.memory.privacy, self.projects, settings.max_tool_output_chars)
        session = SessionInfo(payload.session_id, event.project, event.cwd, path or None)
        return sum(self.memory.writer.append([event], sessions=[session]).values())

    def end_session(self, session_id: str, reason: str | None) -> bool:
        """Write the session's rule-based summary (replacing an earlier one). False if it has no events."""
        facts = session_facts(self.memory, session_id)
        if facts is None:
            return False
        self.memory.writer.end_session(session_id, reason, session_summary(facts))
        return True


def session_facts(memory: Memory, session_id: str) -> SessionFacts | None:
    """What the store holds about a session, for its summary; None when it has no events."""
    events = sessions.session_events(memory.con, session_id)
    if not events:
        return None
    touched: Counter[str] = Counter(f for e in events for f in e.files)
    heading = sessions.session_heading(memory.con, session_id)
    times = [e.ts for e in events if e.ts is not None]
    return SessionFacts(
        title=heading.title if heading else None,
        project=heading.project if heading else None,
        first_ts=from_store_time(min(times)) if times else None,
        last_ts=from_store_time(max(times)) if times else None,
        prompts=tuple(e.text for e in events if e.type == ev.USER_PROMPT),
        counts=Counter(e.type for e in events),
        tools=Counter(e.tool_name for e in events if e.type == ev.TOOL_USE and e.tool_name),
        files=tuple(f for f, _ in touched.most_common(6)),
    )
