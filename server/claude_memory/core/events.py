"""Plain typed records that flow from the transcript parser to the store.

These are dataclasses, not pydantic models: the importer creates hundreds of thousands of them, and
they never cross a process boundary (pydantic lives at the edges: CLI JSON, settings, hook payloads).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Final

from claude_memory.core.edits import EditHunk

USER_PROMPT: Final = "user_prompt"
AGENT_RESPONSE: Final = "agent_response"
TOOL_USE: Final = "tool_use"
COMPACTION: Final = "compaction"
COMPACT_SUMMARY: Final = "compact_summary"
SUBAGENT_PROMPT: Final = "subagent_prompt"

EVENT_TYPES: Final = (USER_PROMPT, AGENT_RESPONSE, TOOL_USE, COMPACTION, COMPACT_SUMMARY, SUBAGENT_PROMPT)


@dataclass(slots=True)
class SourceRef:
    """Where an event came from: the transcript file, 1-based inclusive line range, byte range."""

    path: str
    line_start: int
    line_end: int
    byte_start: int
    byte_end: int  # exclusive: offset just past the last line's newline
    uuid: str | None


@dataclass(slots=True)
class ParsedEvent:
    dedupe_key: str
    type: str
    session_id: str
    timestamp: str | None  # ISO-8601 as written by Claude Code
    text: str
    source: SourceRef
    cwd: str | None = None
    project: str | None = None  # set by the importer (git root of cwd)
    git_branch: str | None = None
    agent_id: str | None = None
    is_sidechain: bool = False
    message_id: str | None = None
    tool_name: str | None = None
    tool_use_id: str | None = None
    files: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    edits: list[EditHunk] = field(default_factory=list)  # what an editing call inserted (core.edits)

    @property
    def event_id(self) -> int:
        return event_id_for(self.dedupe_key)


def event_id_for(dedupe_key: str) -> int:
    """Deterministic 63-bit id from the dedupe key, so a resumed import yields the same ids."""
    digest = hashlib.sha256(dedupe_key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & 0x7FFF_FFFF_FFFF_FFFF


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
