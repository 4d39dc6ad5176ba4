"""What the hovers and lenses say, as pure functions over the service's JSON (no pygls): finding a citation
or a word at a column, and the Markdown of a citation hover, a code hover and a lens title."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from claude_memory.core.citations import IN_TEXT
from claude_memory.core.disclosure import clip, summary

_WORD: Final = re.compile(r"[A-Za-z_$][\w$]*")
_MD_SPECIAL: Final = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")
_EDITS: Final = frozenset({"Edit", "MultiEdit", "NotebookEdit"})
_VERBS: Final[Mapping[str, str]] = {
    "user_prompt": "asked",
    "agent_response": "said",
    "subagent_prompt": "asked a subagent",
    "compact_summary": "summarised",
    "compaction": "compacted",
}


def citation_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The citation (``mem:XXXXXX``) whose text (brackets included) covers ``column``, with its span."""
    for match in IN_TEXT.finditer(line):
        if match.start() <= column <= match.end():
            return f"mem:{match.group(1)}", match.start(), match.end()
    return None


# Words that name no symbol: keywords and literals of common languages (a hover on them shows the file only).
KEYWORDS: Final = frozenset(
    {
        "and", "as", "async", "await", "bool", "break", "case", "catch", "char", "class", "const", "continue",
        "def", "default", "defp", "defmodule", "del", "do", "elif", "else", "end", "enum", "except", "export",
        "extends", "false", "final", "finally", "float", "fn", "for", "from", "func", "function", "go", "if",
        "impl", "import", "in", "int", "interface", "is", "lambda", "let", "loop", "match", "mod", "module", "mut",
        "new", "nil", "none", "not", "null", "or", "package", "pass", "private", "protected", "pub", "public",
        "raise", "return", "self", "static", "str", "string", "struct", "super", "switch", "this", "throw", "true",
        "try", "type", "use", "var", "void", "when", "where", "while", "with", "yield",
    }
)  # fmt: skip
MIN_SYMBOL: Final = 3


def symbol_of(word: str) -> str | None:
    """The word as a symbol to look up, or None for keywords and very short words."""
    if len(word) < MIN_SYMBOL or word.lower() in KEYWORDS:
        return None
    return word


def word_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The identifier covering ``column`` (or ending just before it), with its span."""
    for match in _WORD.finditer(line):
        if match.start() <= column <= match.end():
            return match.group(0), match.start(), match.end()
        if match.start() > column:
            break
    return None


def escape(text: str) -> str:
    """Plain text that Markdown shows as written."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def fence(text: str, lang: str = "text") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def when(timestamp: str | None) -> str:
    """``2026-02-12T21:00:30.169000Z`` -> ``2026-02-12 21:00``."""
    return timestamp[:16].replace("T", " ") if timestamp else "unknown time"


def day(timestamp: str | None) -> str:
    return timestamp[:10] if timestamp else "unknown date"


def citation_hover(details: Mapping[str, Any], max_chars: int) -> str:
    """A memory in a few lines: citation, kind, time, session; its text (clipped); its source."""
    kind = details.get("type", "?")
    if details.get("tool_name"):
        kind = f"{kind} ({details['tool_name']})"
    text = str(details.get("text", ""))
    shown = clip(text, max_chars)
    source = details.get("source") or {}
    where = f"{source.get('path')}:{source.get('line_start')}-{source.get('line_end')}"
    lines = [
        f"**`[{details.get('citation')}]`** · {kind} · {when(details.get('timestamp'))} UTC · "
        f"session `{details.get('session_id')}`",
        "",
        fence(shown),
        "",
        f"Source: `{where}`" + (f" · project `{details['project']}`" if details.get("project") else ""),
    ]
    if details.get("level"):  # (not the use count: showing this hover is a use, so it would never be current)
        lines.append(f"Level L{details['level']}: used in {details.get('sessions_used', 0)} sessions")
    if len(shown) < len(text):
        lines.append(f"\n{len(text):,} characters in full: run claudeMemory.show for the rest.")
    return "\n".join(lines)


def missing_citation(citation: str) -> str:
    return f"No memory `[{citation}]`: forgotten, or never stored here."


def verb(event: Mapping[str, Any]) -> str:
    """What the session did: read, edited, wrote, ran, asked, said..."""
    tool = event.get("tool_name")
    if event.get("type") == "tool_use" and tool:
        if tool == "Read":
            return "read"
        if tool in _EDITS:
            return "edited"
        if tool == "Write":
            return "wrote"
        if tool in ("Grep", "Glob"):
            return "searched"
        if tool == "Bash":
            return "ran"
        return f"used {tool}"
    return _VERBS.get(str(event.get("type")), str(event.get("type")))


def code_hover(path: str, symbol: str | None, history: Mapping[str, Any], limit: int) -> str | None:
    """What past sessions did with a file and said about a symbol, newest first; None when nothing."""
    events: Sequence[Mapping[str, Any]] = history.get("events") or []
    if not events:
        return None
    name = os.path.basename(path) or path
    touched = int(history.get("file_events") or 0)
    head = f"**Memory of `{name}`**"
    if touched:
        head += f" · {touched} event{'s' if touched != 1 else ''} touched this file"
    lines = [head, ""]
    for event in events[:limit]:
        about = "" if path in (event.get("files") or []) else f" (mentions `{symbol}`)"
        lines.append(
            f"- {when(event.get('timestamp'))} · {verb(event)}{about} · `[{event.get('citation')}]` "
            f"{escape(summary(str(event.get('text', ''))))}"
        )
    return "\n".join(lines)


def lens_title(count: int, last_ts: str | None) -> str:
    memories = f"{count} memor{'ies' if count != 1 else 'y'}"
    return f"{memories} · last touched {day(last_ts)}" if last_ts else memories
