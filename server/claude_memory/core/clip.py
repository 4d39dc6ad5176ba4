"""Bound what an event stores, after privacy filtering (never before: a clipped secret is unrecognisable)."""

from __future__ import annotations

from typing import Any, Final

from claude_memory.core.events import TOOL_USE, ParsedEvent

MAX_META_STRING: Final = 300  # tool-input strings kept in metadata; the event text has the long form
MAX_META_ITEMS: Final = 200


def clip_strings(value: Any, limit: int = MAX_META_STRING) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "…"
    if isinstance(value, dict):
        return {str(k): clip_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [clip_strings(v, limit) for v in value[:MAX_META_ITEMS]]
    return value


def clip_event(event: ParsedEvent, max_tool_text_chars: int) -> None:
    """Cut a tool event's text (file contents, command output) to ``max_tool_text_chars`` and its stored
    input strings to 300 characters, recording the original length. Prompts and answers are kept whole."""
    if event.type != TOOL_USE:
        return
    if "input" in event.metadata:
        event.metadata["input"] = clip_strings(event.metadata["input"])
    if len(event.text) > max_tool_text_chars:
        event.metadata["text_chars"] = len(event.text)
        event.metadata["text_truncated"] = True
        event.text = event.text[:max_tool_text_chars] + "…"
