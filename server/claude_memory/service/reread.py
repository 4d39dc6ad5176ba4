"""Reading a stored tool call again from the transcript lines its event cites (its byte range): for stores made
before a derived record of the call existed (edit records, task operations)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson


def _lines(path: str, start: int, end: int) -> Iterator[dict[str, Any]]:
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    for raw in data.splitlines():
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def reread_call(
    path: str | None, start: int | None, end: int | None, tool_use_id: str | None
) -> tuple[Any, Any, bool] | None:
    """The call's input, its ``toolUseResult`` and whether it failed, from the transcript lines its event cites;
    None when they are not there any more."""
    if not path or start is None or end is None or end <= start or not tool_use_id:
        return None
    try:
        objs = list(_lines(path, start, end))
    except OSError:
        return None
    tool_input: Any = None
    for obj in objs:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("id") == tool_use_id:
                tool_input = block.get("input")
            elif block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                if tool_input is None:
                    return None
                return tool_input, obj.get("toolUseResult"), bool(block.get("is_error"))
    return None
