"""Turn Claude Code transcript lines into memory events.

A pure, incremental state machine. Feed it lines in file order; it returns events as soon as each
unit is complete:

* a person's prompt (one ``user`` line) -> ``user_prompt`` (``subagent_prompt`` in a subagent file);
* the text of one API message (several ``assistant`` lines sharing ``message.id``) -> ``agent_response``;
* a ``tool_use`` block and its later ``tool_result`` (+ ``toolUseResult``) -> one ``tool_use`` event;
* a ``compact_boundary`` system line -> ``compaction``; the ``isCompactSummary`` line -> ``compact_summary``.

Units that are still open (an API message that may get more lines, a tool call waiting for its result)
are held back. :meth:`TranscriptParser.safe_offset` tells the caller where to resume so that nothing
held back is lost if the process dies: it is the start of the earliest open unit. Re-reading from there
re-creates identical events with identical dedupe keys.

Unknown line types are skipped and counted; malformed lines are reported with their line number and a
reason that never contains the line's content.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from claude_memory.core import events as ev
from claude_memory.core.edits import edit_hunks
from claude_memory.core.events import ParsedEvent, SourceRef
from claude_memory.core.lines import RawLine
from claude_memory.core.machine_text import is_synthetic, safe_type_name, strip_injected, typed_command
from claude_memory.core.tasks import task_op
from claude_memory.core.toolfiles import files_touched

# Line types Claude Code writes that carry no conversation content for memory.
IGNORED_TYPES: Final = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "last-prompt",
        "tag",
        "content-replacement",
        "mode",
        "cost-state",
        "tools-used",
        "atis-latch",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "pr-link",
        "agent-name",
    }
)
_TITLE_TYPES: Final = {"summary": "summary", "custom-title": "customTitle", "ai-title": "aiTitle"}
_RESULT_META_KEYS: Final = (
    "interrupted",
    "isImage",
    "returnCodeInterpretation",
    "status",
    "agentId",
    "type",
    "numFiles",
    "numLines",
    "durationMs",
    "truncated",
    "code",
    "codeText",
    "url",
    "bytes",
    "filePath",
    "mode",
)


@dataclass(slots=True)
class LineIssue:
    """A line that could not be used. ``reason`` never contains the line's content."""

    path: str
    line_no: int
    byte_offset: int
    reason: str


@dataclass(slots=True)
class _Span:
    line_start: int
    line_end: int
    byte_start: int
    byte_end: int

    def extend(self, raw: RawLine) -> None:
        self.line_end = raw.line_no
        self.byte_end = raw.end


@dataclass(slots=True)
class _OpenMessage:
    message_id: str
    first_uuid: str | None
    span: _Span
    text_parts: list[str]
    envelope: dict[str, Any]
    model: str | None
    thinking_blocks: int = 0


@dataclass(slots=True)
class _OpenTool:
    tool_use_id: str
    name: str
    input: Any
    span: _Span
    uuid: str | None
    envelope: dict[str, Any]
    message_id: str | None


@dataclass
class ParseStats:
    lines: int = 0
    ignored_by_type: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)  # non-speech text, by reason
    unknown_types: Counter[str] = field(default_factory=Counter)


class TranscriptParser:
    def __init__(
        self,
        path: str,
        *,
        session_hint: str,
        agent_id: str | None = None,
    ) -> None:
        self.path = path
        self.session_hint = session_hint
        self.agent_id = agent_id
        self.stats = ParseStats()
        self.issues: list[LineIssue] = []
        self.titles: dict[str, str] = {}  # session id -> latest title seen
        self.session_facts: dict[str, dict[str, str]] = {}  # session id -> cwd/version/branch of last line
        self._message: _OpenMessage | None = None
        self._tools: dict[str, _OpenTool] = {}
        self._out: list[ParsedEvent] = []  # events completed by the line being fed
        self._next_offset = 0
        self._next_line = 1

    # ------------------------------------------------------------------ public API

    def feed(self, raw: RawLine) -> list[ParsedEvent]:
        """Consume one line; return the events it completed."""
        self.stats.lines += 1
        self._next_offset = raw.end
        self._next_line = raw.line_no + 1
        if raw.data is None:
            self._issue(raw, "line too long; skipped")
            return []
        if not raw.data.strip():
            return []
        try:
            obj = orjson.loads(raw.data)
        except orjson.JSONDecodeError:
            try:
                raw.data.decode("utf-8")
            except UnicodeDecodeError:
                self._issue(raw, "line is not valid UTF-8")
                return []
            self._issue(raw, "malformed JSON")
            return []
        if not isinstance(obj, dict):
            self._issue(raw, "line is not a JSON object")
            return []
        kind = obj.get("type")
        try:
            self._dispatch(kind, obj, raw)
        except (TypeError, AttributeError, KeyError, ValueError):
            # A line whose fields have unexpected shapes: skip it rather than guess. Events it
            # completed before the bad field was reached (a closed message, a tool result) are kept.
            self._issue(raw, f"unexpected structure in a {safe_type_name(kind)} line")
        out, self._out = self._out, []
        return out

    def finish(self, *, close_tool_calls: bool = True) -> list[ParsedEvent]:
        """The input is complete for now: emit the open message, and the tool calls still waiting for
        a result too when ``close_tool_calls`` (they are then stored without one)."""
        self._close_message()
        if close_tool_calls:
            for tool in list(self._tools.values()):
                self._out.append(self._tool_event(tool, None, None))
            self._tools.clear()
        out, self._out = self._out, []
        return out

    def safe_offset(self) -> tuple[int, int]:
        """(byte offset, line number) from which a fresh parser loses nothing that is held back."""
        starts = [(t.span.byte_start, t.span.line_start) for t in self._tools.values()]
        if self._message is not None:
            starts.append((self._message.span.byte_start, self._message.span.line_start))
        return min(starts) if starts else (self._next_offset, self._next_line)

    def start_at(self, offset: int, line_no: int) -> None:
        self._next_offset = offset
        self._next_line = line_no

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, kind: Any, obj: dict[str, Any], raw: RawLine) -> None:
        if kind == "user":
            self._user(obj, raw)
        elif kind == "assistant":
            self._assistant(obj, raw)
        elif kind == "system" and obj.get("subtype") == "compact_boundary":
            self._close_message()
            self._out.append(self._compaction(obj, raw))
        elif kind == "system":
            self.stats.ignored_by_type[f"system/{safe_type_name(obj.get('subtype'))}"] += 1
        elif kind in _TITLE_TYPES:
            title = obj.get(_TITLE_TYPES[kind])
            if isinstance(title, str) and title.strip():
                self.titles[self._session(obj)] = title.strip()[:500]
            self.stats.ignored_by_type[str(kind)] += 1
        elif kind in IGNORED_TYPES:
            self.stats.ignored_by_type[str(kind)] += 1
        else:
            self.stats.unknown_types[safe_type_name(kind)] += 1

    def _issue(self, raw: RawLine, reason: str) -> None:
        self.issues.append(LineIssue(self.path, raw.line_no, raw.offset, reason))

    # ------------------------------------------------------------------ helpers

    def _session(self, obj: dict[str, Any]) -> str:
        sid = obj.get("sessionId")
        return sid if isinstance(sid, str) and sid else self.session_hint

    def _remember_facts(self, obj: dict[str, Any]) -> None:
        facts = self.session_facts.setdefault(self._session(obj), {})
        for key in ("cwd", "version", "gitBranch"):
            value = obj.get(key)
            if isinstance(value, str) and value:
                facts[key] = value

    def _event(self, obj: dict[str, Any], kind: str, key: str, text: str, span: _Span, uuid: str | None) -> ParsedEvent:
        branch = obj.get("gitBranch")
        return ParsedEvent(
            dedupe_key=key,
            type=kind,
            session_id=self._session(obj),
            timestamp=obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None,
            text=text,
            source=SourceRef(self.path, span.line_start, span.line_end, span.byte_start, span.byte_end, uuid),
            cwd=obj.get("cwd") if isinstance(obj.get("cwd"), str) else None,
            git_branch=branch if isinstance(branch, str) and branch else None,
            agent_id=self.agent_id or (obj.get("agentId") if isinstance(obj.get("agentId"), str) else None),
            is_sidechain=bool(obj.get("isSidechain")),
        )

    @staticmethod
    def _span(raw: RawLine) -> _Span:
        return _Span(raw.line_no, raw.line_no, raw.offset, raw.end)

    def _line_key(self, obj: dict[str, Any], prefix: str, text: str) -> tuple[str, str | None]:
        uuid = obj.get("uuid")
        if isinstance(uuid, str) and uuid:
            return f"uuid:{uuid}", uuid
        return f"{prefix}:{self._session(obj)}:{ev.content_hash(text)}", None

    # ------------------------------------------------------------------ user lines

    def _user(self, obj: dict[str, Any], raw: RawLine) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            raise TypeError("message is not an object")
        self._remember_facts(obj)
        self._close_message()
        content = message.get("content")
        if obj.get("isCompactSummary"):
            text = strip_injected(_plain_text(content))
            if text:
                key, uuid = self._line_key(obj, "summary", text)
                self._out.append(self._event(obj, ev.COMPACT_SUMMARY, key, text, self._span(raw), uuid))
            return
        results = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        for block in results:
            self._out.append(self._tool_result(obj, block, raw))
        if results:
            return
        if obj.get("isMeta"):
            self.stats.dropped["meta line"] += 1
            return
        raw_text = _plain_text(content)
        command = typed_command(raw_text)
        if command is None and is_synthetic(raw_text):
            self.stats.dropped["machine-written prompt"] += 1
            return
        text = command or strip_injected(raw_text)
        if not text:
            self.stats.dropped["only injected context"] += 1
            return
        kind = ev.SUBAGENT_PROMPT if (obj.get("isSidechain") or self.agent_id) else ev.USER_PROMPT
        key, uuid = self._line_key(obj, "prompt", text)
        event = self._event(obj, kind, key, text, self._span(raw), uuid)
        images = _count_blocks(content, "image")
        if images:
            event.metadata["images"] = images
        for meta_key in ("promptId", "permissionMode", "version"):
            value = obj.get(meta_key)
            if isinstance(value, str):
                event.metadata[meta_key] = value
        if command is not None:
            event.metadata["command"] = True
        self._out.append(event)

    def _tool_result(self, obj: dict[str, Any], block: dict[str, Any], raw: RawLine) -> ParsedEvent:
        tool_use_id = str(block.get("tool_use_id") or "")
        tool = self._tools.pop(tool_use_id, None)
        if tool is None:
            # A result whose call we never saw (file read from the middle, or a truncated history).
            tool = _OpenTool(tool_use_id, "", None, self._span(raw), None, obj, None)
        else:
            tool.span.extend(raw)
        return self._tool_event(tool, block, obj)

    def _tool_event(
        self, tool: _OpenTool, result: dict[str, Any] | None, result_line: dict[str, Any] | None
    ) -> ParsedEvent:
        # Claude Code appends system reminders to some results (e.g. after every Read): not tool output.
        output = strip_injected(_plain_text(result.get("content")), cut_unclosed=False) if result else ""
        structured = result_line.get("toolUseResult") if result_line else None
        text, metadata = tool_call_text(
            tool.name,
            tool.input,
            output,
            structured,
            is_error=bool(result and result.get("is_error")),
            missing=result is None,
        )
        event = self._event(
            tool.envelope,
            ev.TOOL_USE,
            f"tool:{self._session(tool.envelope)}:{tool.tool_use_id}",
            text,
            tool.span,
            tool.uuid,
        )
        event.tool_name = tool.name or None
        event.tool_use_id = tool.tool_use_id or None
        event.message_id = tool.message_id
        event.files = files_touched(tool.name, tool.input, structured, event.cwd)
        event.metadata = metadata
        failed = result is None or bool(result.get("is_error"))
        event.edits = edit_hunks(tool.name, tool.input, structured, failed=failed)
        task = task_op(tool.name, tool.input, structured, failed=failed)
        if task is not None:
            event.metadata["task"] = task
        return event

    # ------------------------------------------------------------------ assistant lines

    def _assistant(self, obj: dict[str, Any], raw: RawLine) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            raise TypeError("message is not an object")
        self._remember_facts(obj)
        uuid = obj.get("uuid") if isinstance(obj.get("uuid"), str) else None
        message_id = message.get("id") or uuid or f"line{raw.line_no}"
        current = self._message
        if current is not None and current.message_id != message_id:
            self._close_message()
            current = None
        if current is None:
            current = _OpenMessage(
                str(message_id),
                None,
                self._span(raw),
                [],
                obj,
                message.get("model") if isinstance(message.get("model"), str) else None,
            )
            self._message = current
        else:
            current.span.extend(raw)
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                if current.first_uuid is None:
                    current.first_uuid = uuid
                current.text_parts.append(block["text"])
            elif kind in ("thinking", "redacted_thinking"):
                current.thinking_blocks += 1
            elif kind == "tool_use":
                tool_id = str(block.get("id") or f"line{raw.line_no}")
                self._tools[tool_id] = _OpenTool(
                    tool_id,
                    str(block.get("name") or ""),
                    block.get("input"),
                    self._span(raw),
                    uuid,
                    obj,
                    str(message_id),
                )

    def _close_message(self) -> None:
        message = self._message
        self._message = None
        if message is None:
            return
        text = strip_injected("\n\n".join(p for p in message.text_parts if p.strip()))
        if not text:
            return
        if message.model == "<synthetic>":
            self.stats.dropped["synthetic assistant message"] += 1
            return
        session = self._session(message.envelope)
        key = f"msg:{session}:{message.message_id}:{message.first_uuid or ''}"
        event = self._event(message.envelope, ev.AGENT_RESPONSE, key, text, message.span, message.first_uuid)
        event.message_id = message.message_id
        if message.model:
            event.metadata["model"] = message.model
        if message.thinking_blocks:
            event.metadata["thinking_blocks"] = message.thinking_blocks
        self._out.append(event)

    # ------------------------------------------------------------------ compaction

    def _compaction(self, obj: dict[str, Any], raw: RawLine) -> ParsedEvent:
        found = obj.get("compactMetadata")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        trigger = meta.get("trigger") or "unknown"
        pre = meta.get("preTokens")
        text = f"Conversation compacted ({trigger} trigger"
        text += f", {pre} tokens before)" if isinstance(pre, int) else ")"
        key, uuid = self._line_key(obj, "compact", text + str(raw.offset))
        event = self._event(obj, ev.COMPACTION, key, text, self._span(raw), uuid)
        event.metadata = {
            k: v
            for k, v in {
                "trigger": trigger,
                "pre_tokens": pre,
                "post_tokens": meta.get("postTokens"),
                "logical_parent_uuid": obj.get("logicalParentUuid"),
            }.items()
            if v is not None
        }
        return event


# ---------------------------------------------------------------------- pure helpers


def tool_call_text(
    name: str, tool_input: Any, output: str, structured: Any, *, is_error: bool = False, missing: bool = False
) -> tuple[str, dict[str, Any]]:
    """The text and metadata of a tool-call event: the same for a call read from a transcript and one a
    PostToolUse hook reports. Nothing is clipped here: the privacy filter must see whole strings (a
    secret cut in half is no longer recognisable); core.clip shortens events after filtering."""
    metadata: dict[str, Any] = {}
    extras = _input_extras(name, tool_input)
    if extras:
        metadata["input"] = extras
    if missing:
        metadata["result"] = "missing"
    elif is_error:
        metadata["is_error"] = True
    result_meta = _result_meta(structured)
    if result_meta:
        metadata["result_meta"] = result_meta
    summary = _describe_call(name, tool_input)
    text = f"{name or 'tool'}: {summary}" if summary else (name or "tool")
    if output.strip():
        text = f"{text}\n{output.strip()}"
    return text, metadata


def _plain_text(content: Any) -> str:
    """Text of a message or tool_result content: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "image":
                parts.append("[image]")
    return "\n".join(parts)


def _count_blocks(content: Any, kind: str) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == kind)


def _result_meta(structured: Any) -> dict[str, Any]:
    """Small scalar facts from ``toolUseResult`` (its large strings duplicate the tool_result)."""
    if not isinstance(structured, dict):
        return {}
    meta: dict[str, Any] = {}
    for key in _RESULT_META_KEYS:
        value = structured.get(key)
        if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= 300):
            meta[key] = value
    file_info = structured.get("file")
    if isinstance(file_info, dict):
        for key in ("filePath", "numLines", "startLine", "totalLines"):
            if isinstance(file_info.get(key), str | int):
                meta[f"file.{key}"] = file_info[key]
    names = structured.get("filenames")
    if isinstance(names, list):
        meta["filenames"] = [n for n in names[:50] if isinstance(n, str)]
    return meta


_DESCRIBE_KEYS: Final = {
    "Bash": ("command", "description"),
    "Read": ("file_path",),
    "Write": ("file_path", "content"),
    "Edit": ("file_path", "old_string", "new_string"),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path", "new_source"),
    "Grep": ("pattern", "path", "glob"),
    "Glob": ("pattern", "path"),
    "WebFetch": ("url", "prompt"),
    "WebSearch": ("query",),
    "Task": ("description", "prompt"),
    "Agent": ("description", "prompt"),
}


def _input_extras(name: str, tool_input: Any) -> dict[str, Any]:
    """The tool-input fields the event text does not already show (``_describe_call`` renders the
    rest in full): flags, offsets, modes. Nothing is stored twice, and nothing twice filtered."""
    if not isinstance(tool_input, dict):
        return {}
    if name not in _DESCRIBE_KEYS:
        return {}  # unknown and MCP tools: the text holds the whole input as JSON
    shown = set(_DESCRIBE_KEYS[name]) | {"edits", "todos"}
    return {k: v for k, v in tool_input.items() if k not in shown}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _describe_call(name: str, tool_input: Any) -> str:
    """A readable one-paragraph rendering of a tool call's input, for search and display."""
    if not isinstance(tool_input, dict):
        return ""
    keys = _DESCRIBE_KEYS.get(name)
    if keys:
        parts = [str(tool_input[k]) for k in keys if isinstance(tool_input.get(k), str | int) and tool_input[k]]
        if name == "MultiEdit":
            for edit in _as_list(tool_input.get("edits")):
                if isinstance(edit, dict):
                    parts.extend(str(edit.get(k, "")) for k in ("old_string", "new_string"))
        text = "\n".join(parts)
    elif name == "TodoWrite":
        todos = _as_list(tool_input.get("todos"))
        text = "\n".join(f"[{t.get('status', '')}] {t.get('content', '')}" for t in todos if isinstance(t, dict))
    else:
        text = json.dumps(tool_input, ensure_ascii=False, sort_keys=True, default=str)
    return text
