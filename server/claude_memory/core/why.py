""" "Why is this code like this?": a blame (operation ``blame``, as JSON) told in words, for the MCP tool ``why``, the
language server's line hovers and its "why" document, and the PreToolUse note. Pure: no I/O, no state.

Every statement cites its memories ([mem:XXXXXX]) and says how the lines were matched: a fuzzy match (lines
changed since Claude wrote them) is labelled as such.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final

from claude_memory.core.disclosure import clip

CONFIDENT: Final = 0.9  # a range matched at least this well is said without hedging (and may be injected)
NOTE_CHARS: Final = 800  # the PreToolUse note's ceiling
PROMPT_CHARS: Final = 240  # of a prompt quoted in a note or a hover

Json = dict[str, Any]


def _day(timestamp: str | None) -> str:
    return (timestamp or "")[:10] or "an unknown day"


def _cite(excerpt: Json | None) -> str:
    return f" [{excerpt['citation']}]" if excerpt and excerpt.get("citation") else ""


def _quote(text: str, width: int) -> str:
    return clip(" ".join(text.split()), width)


def _span(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def overlapping(blame: Json, start: int, end: int) -> list[Json]:
    """The blame's ranges that reach into lines ``start``..``end``, clipped to them."""
    return [
        {**r, "start": max(r["start"], start), "end": min(r["end"], end)}
        for r in blame["ranges"]
        if r["end"] >= start and r["start"] <= end
    ]


def edits_by_id(blame: Json) -> dict[int, Json]:
    return {e["id"]: e for e in blame["edits"]}


def describe_edit(edit: Json, *, prompt_chars: int = PROMPT_CHARS) -> str:
    """One edit in a sentence or two: the call, its day and session, the prompt that asked for it, Claude's words."""
    call = f"{edit['tool']} [{edit['citation']}]" if edit.get("citation") else edit["tool"]
    model = f" ({edit['model']})" if edit.get("model") else ""
    text = f"{call} on {_day(edit.get('timestamp'))} in session {edit['session_id'][:8]}{model}"
    if edit.get("agent_id"):
        text += f", by a subagent ({edit['agent_id'][:8]})"
    prompt = edit.get("prompt")
    if prompt:
        text += f". Asked: “{_quote(prompt['text'], prompt_chars)}”{_cite(prompt)}"
    answer = edit.get("answer")
    if answer:
        text += f". Claude: “{_quote(answer['text'], prompt_chars)}”{_cite(answer)}"
    return text + "."


def match_words(r: Json) -> str:
    if r["method"] == "fuzzy":
        return f"fuzzy match, {r['confidence']:.0%}: changed since"
    if r["method"] == "normalized":
        return "same but for whitespace"
    return "exact"


def why_markdown(blame: Json, start: int, end: int) -> str:
    """Markdown: who wrote lines ``start``..``end`` of the file, range by range, and why."""
    name = os.path.basename(blame["path"])
    ranges = overlapping(blame, start, end)
    edits = edits_by_id(blame)
    head = f"### {name}, {_span(start, end)}\n\n"
    if not any(r["edit"] is not None for r in ranges):
        if not blame["edit_records"]:
            return head + "No Claude Code edit of this file is remembered.\n"
        return head + "Claude did not write these lines (as far as the remembered edits show).\n"
    out = [head]
    for r in ranges:
        if r["edit"] is None:
            out.append(f"- {_span(r['start'], r['end']).capitalize()}: not written by Claude.\n")
            continue
        edit = edits[r["edit"]]
        out.append(f"- {_span(r['start'], r['end']).capitalize()} ({match_words(r)}): {describe_edit(edit)}\n")
    return "".join(out)


def line_hover(blame: Json, line: int) -> str | None:
    """Markdown for a hover on one line Claude wrote (None when it did not)."""
    found = overlapping(blame, line, line)
    if not found or found[0]["edit"] is None:
        return None
    r = next(x for x in blame["ranges"] if x["start"] <= line <= x["end"])
    edit = edits_by_id(blame)[r["edit"]]
    who = f"**Claude wrote {_span(r['start'], r['end'])}** ({match_words(r)})"
    return f"{who}: {describe_edit(edit)}"


def touched_lines(text: str, tool_name: str, tool_input: Any) -> list[tuple[int, int]]:
    """The line ranges of ``text`` an Edit / MultiEdit is about to replace (where its ``old_string`` sits), or the
    whole file for a Write."""
    if not isinstance(tool_input, dict):
        return []
    count = text.count("\n") + (0 if text.endswith("\n") else 1)
    if tool_name == "Write":
        return [(1, count)] if text else []
    edits = tool_input.get("edits") if tool_name == "MultiEdit" else [tool_input]
    found = []
    for edit in edits if isinstance(edits, list) else []:
        old = edit.get("old_string") if isinstance(edit, dict) else None
        if not isinstance(old, str) or not old.strip():
            continue
        at = text.find(old)
        if at >= 0:
            first = text.count("\n", 0, at) + 1
            found.append((first, first + old.count("\n")))
    return found


def before_edit_note(blame: Json, spans: Sequence[tuple[int, int]], session_id: str) -> str:
    """The PreToolUse note: the earlier sessions' prompts behind the lines about to change, when matched with
    confidence ("" when there are none), within :data:`NOTE_CHARS`."""
    edits = edits_by_id(blame)
    chosen: dict[int, list[tuple[int, int]]] = {}
    for start, end in spans:
        for r in overlapping(blame, start, end):
            edit = edits.get(r["edit"]) if r["edit"] is not None else None
            if edit and r["confidence"] >= CONFIDENT and edit["session_id"] != session_id:
                chosen.setdefault(r["edit"], []).append((r["start"], r["end"]))
    if not chosen:
        return ""
    name = os.path.basename(blame["path"])
    parts = [f"Memory of {name}: lines about to change were written by Claude in earlier sessions."]
    for edit_id, where in sorted(chosen.items(), key=lambda kv: kv[1][0]):
        edit = edits[edit_id]
        lines = ", ".join(_span(a, b) for a, b in where[:3])
        prompt = edit.get("prompt")
        asked = f" for “{_quote(prompt['text'], 160)}”{_cite(prompt)}" if prompt else ""
        line = f" {lines.capitalize()}: {edit['tool']} [{edit['citation']}] on {_day(edit.get('timestamp'))}{asked}."
        if len(" ".join(parts)) + len(line) > NOTE_CHARS:
            break
        parts.append(line)
    return "".join(parts) if len(parts) > 1 else ""
