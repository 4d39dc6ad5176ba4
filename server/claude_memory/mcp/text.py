"""What the MCP tools answer: markdown for the model plus bounded structured content, built from the memory
service's JSON. Pure (no protocol, no I/O), so every rule here is tested without an MCP client.

Every answer is bounded: its text stays within :data:`MAX_CHARS` characters. Long event texts are clipped
(fairly: short texts are shown whole and the rest share what is left) and say so; timeline lines past the
bound are left out with a note. Event ids are given as strings in structured content, because they use 63
bits and a JavaScript client would round them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from claude_memory.core.disclosure import clip
from claude_memory.core.why import why_markdown

MAX_CHARS: Final = 20_000  # the text of one tool answer
MAX_RESULTS: Final = 20  # search hits
MAX_IDS: Final = 20  # ids per timeline / get_observations / forget call
TOOL_INPUT_CHARS: Final = 400  # a tool call's input facts, as one JSON line
MIN_SHARE: Final = 200  # no event text is clipped below this (the bound then drops whole events)

_BACKTICKS: Final = re.compile(r"`+")


@dataclass(frozen=True, slots=True)
class ToolText:
    """One tool answer: ``text`` (markdown, at most MAX_CHARS) and ``data`` (its structured content)."""

    text: str
    data: dict[str, Any]


# ---------------------------------------------------------------------- small pieces


def when(timestamp: str | None) -> str:
    """``2026-01-31T14:02:03.5Z`` -> ``2026-01-31 14:02`` (UTC); ``?`` when unknown."""
    return timestamp[:16].replace("T", " ") if timestamp else "?"


def ref(item: dict[str, Any]) -> str:
    """How an event is cited: ``[mem:AbC123]``, or ``[id 123]`` for an event without a citation."""
    citation = item.get("citation")
    return f"[{citation}]" if citation else f"[id {item.get('id')}]"


def fence(text: str, lang: str = "text") -> str:
    """``text`` in a fenced block whose fence is longer than any run of backticks inside it."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{lang}\n{text.rstrip(chr(10))}\n{marks}\n"


def one_line(text: str, width: int) -> str:
    return clip(" ".join(text.split()), width)


def share(lengths: Sequence[int], budget: int) -> list[int]:
    """How many characters each of several texts may show within ``budget`` in all: texts shorter than an
    equal share are shown whole and what they leave is shared by the others (water filling)."""
    allowance = [0] * len(lengths)
    left = max(0, budget)
    remaining = len(lengths)
    for i in sorted(range(len(lengths)), key=lambda k: lengths[k]):
        allowance[i] = min(lengths[i], left // remaining)
        left -= allowance[i]
        remaining -= 1
    return allowance


def clip_text(text: str, allowance: int) -> tuple[str, bool]:
    """``text`` cut to at most ``allowance`` characters (on a word boundary, ending in "…"), and whether
    it was cut."""
    if len(text) <= allowance:
        return text, False
    return clip(text, max(1, allowance)), True


def _id(item: dict[str, Any]) -> str | None:
    value = item.get("id")
    return None if value is None else str(value)


# ---------------------------------------------------------------------- search (layer 1)


def search(data: dict[str, Any], *, query: str, scope: str | None) -> ToolText:
    """The index answer of the service (``{"results": [...], "meta": {...}}``) as one line per hit.
    ``scope`` is the project searched, None for all projects."""
    results = list(data.get("results", []))[:MAX_RESULTS]
    meta = data.get("meta", {})
    where = f"project {scope}" if scope else "all projects"
    head = f'## Memory search: "{one_line(query, 80)}"\n'
    if not results:
        hint = " Try other words, mode=keyword for exact terms, or all_projects=true." if scope else ""
        hint = hint or " Try other words, or mode=keyword for exact terms."
        text = f"{head}No memories match in {where}.{hint}\n"
        return ToolText(text, {"query": query, "scope": scope, "results": [], "meta": _search_meta(meta)})
    lines = [
        head,
        f"{len(results)} hits in {where} · mode {meta.get('mode', '?')} · confidence {meta.get('confidence', '?')}\n",
    ]
    if meta.get("confidence") == "none":
        wider = "all_projects=true, " if scope else ""
        lines.append(f"These are weak matches: nothing closer was found. Try {wider}other words or mode=keyword.\n")
    lines.append("\n")
    shown: list[dict[str, Any]] = []
    for rank, hit in enumerate(results, 1):
        place = f" · {hit.get('project') or '?'}" if scope is None else ""
        line = (
            f"{rank}. {ref(hit)} {hit.get('type')} · {when(hit.get('timestamp'))} · "
            f"session {str(hit.get('session_id', ''))[:8]}{place} · score {float(hit.get('score', 0)):.3f} "
            f"({hit.get('confidence', '?')})\n   {one_line(str(hit.get('summary', '')), 200)}\n"
        )
        if sum(map(len, lines)) + len(line) > MAX_CHARS - 400:
            break
        lines.append(line)
        shown.append(
            {
                "rank": rank,
                "citation": hit.get("citation"),
                "id": _id(hit),
                "summary": hit.get("summary"),
                "score": hit.get("score"),
                "confidence": hit.get("confidence"),
                "type": hit.get("type"),
                "timestamp": hit.get("timestamp"),
                "session_id": hit.get("session_id"),
                "project": hit.get("project"),
            }
        )
    lines.append(
        "\nNext: `timeline` with the citations of promising hits, then `get_observations` for the few you "
        "need in full. Cite memories as [mem:XXXXXX].\n"
    )
    return ToolText("".join(lines), {"query": query, "scope": scope, "results": shown, "meta": _search_meta(meta)})


def _search_meta(meta: dict[str, Any]) -> dict[str, Any]:
    keep = ("mode", "requested_mode", "count", "confidence", "limit", "took_ms", "filters")
    return {key: meta[key] for key in keep if key in meta}


# ---------------------------------------------------------------------- timeline (layer 2)


def timeline(data: dict[str, Any]) -> ToolText:
    """The service's timeline (``windows`` of session events around the targets, ``missing`` refs)."""
    missing = [str(m) for m in data.get("missing", [])]
    lines = ["## Timeline\n"]
    windows: list[dict[str, Any]] = []
    omitted = 0
    budget = MAX_CHARS - 600
    for window in data.get("windows", []):
        events = list(window.get("events", []))
        head = f"\n### Session {window.get('session_id')} · {window.get('project') or '?'}\n"
        if sum(map(len, lines)) + len(head) > budget:
            omitted += len(events)
            continue
        lines.append(head)
        kept: list[dict[str, Any]] = []
        for event in events:
            mark = "▶ " if event.get("is_target") else ""
            text = f"{ref(event)} {when(event.get('timestamp'))} {event.get('type')} · {event.get('preview', '')}"
            line = f"- **{mark}{text}**\n" if event.get("is_target") else f"- {text}\n"
            if sum(map(len, lines)) + len(line) > budget:
                omitted += 1
                continue
            lines.append(line)
            kept.append({**event, "id": _id(event)})
        windows.append({"session_id": window.get("session_id"), "project": window.get("project"), "events": kept})
    if omitted:
        lines.append(
            f"\n[{omitted} more events not shown to keep this answer under {MAX_CHARS:,} characters: ask for "
            "fewer ids or smaller before/after.]\n"
        )
    if missing:
        lines.append(f"\nNot found (forgotten, or never stored): {', '.join(missing)}.\n")
    lines.append("\nNext: `get_observations` with the citations you need in full.\n")
    targets = [str(t) for t in data.get("targets", [])]
    return ToolText(
        "".join(lines), {"windows": windows, "targets": targets, "missing": missing, "omitted_events": omitted}
    )


# ---------------------------------------------------------------------- details (layer 3)


def _detail_head(item: dict[str, Any]) -> str:
    src = item.get("source") or {}
    parts = [
        f"## {ref(item)} {item.get('type')} · {when(item.get('timestamp'))}\n",
        f"Session {item.get('session_id')} · project {item.get('project') or '?'}",
    ]
    if item.get("agent_id"):
        parts.append(f" · subagent {item['agent_id']}")
    parts.append(f"\nSource: {src.get('path')}:{src.get('line_start')}-{src.get('line_end')}\n")
    if item.get("citation_uses"):
        sessions, level = item.get("sessions_used", 0), item.get("level", 0)
        parts.append(f"Used {item['citation_uses']} times in {sessions} sessions · level L{level}\n")
    if item.get("files"):
        parts.append(f"Files: {', '.join(str(f) for f in item['files'])}\n")
    for tool in item.get("tools") or []:
        facts = tool.get("input") or {}
        shown = f" · input {clip(json.dumps(facts, ensure_ascii=False, sort_keys=True), TOOL_INPUT_CHARS)}"
        parts.append(f"Tool: {tool.get('name')} · {tool.get('status')}{shown if facts else ''}\n")
    return "".join(parts)


def details(data: dict[str, Any]) -> ToolText:
    """The service's details (``{"details": [...], "missing": [...]}``): each event's full text, clipped
    fairly so that all of them fit within MAX_CHARS."""
    items = list(data.get("details", []))[:MAX_IDS]
    missing = [str(m) for m in data.get("missing", [])]
    heads = [_detail_head(item) for item in items]
    tail = ""
    if missing:
        tail += f"\nNot found (forgotten, or never stored): {', '.join(missing)}.\n"
    tail += "\nCite what you use as [mem:XXXXXX].\n"
    notes = 160 * len(items)  # a clip note, the fences and separators per event
    room = MAX_CHARS - sum(map(len, heads)) - len(tail) - notes
    texts = [str(item.get("text", "")) for item in items]
    allowances = share([len(t) for t in texts], max(room, 0))
    parts: list[str] = []
    observations: list[dict[str, Any]] = []
    for item, head, text, allowance in zip(items, heads, texts, allowances, strict=True):
        shown, cut = clip_text(text, max(allowance, min(MIN_SHARE, len(text))))
        block = head + fence(shown)
        meta = item.get("metadata") or {}
        if cut:
            block += f"[clipped: the first {len(shown):,} of {len(text):,} characters are shown.]\n"
        if meta.get("text_truncated"):
            chars = meta.get("text_chars")
            had = f" (the tool output had {chars:,} characters)" if isinstance(chars, int) else ""
            block += f"[The stored text was already clipped at import{had}.]\n"
        block += "\n---\n"
        if sum(map(len, parts)) + len(block) + len(tail) > MAX_CHARS:
            missing_room = f"\n[{len(items) - len(observations)} more events not shown: ask for fewer ids.]\n"
            parts.append(missing_room)
            break
        parts.append(block)
        observations.append(
            {
                "citation": item.get("citation"),
                "id": _id(item),
                "type": item.get("type"),
                "timestamp": item.get("timestamp"),
                "session_id": item.get("session_id"),
                "project": item.get("project"),
                "agent_id": item.get("agent_id"),
                "tool_name": item.get("tool_name"),
                "files": list(item.get("files") or []),
                "text": shown,
                "text_chars": len(text),
                "clipped": cut,
                "source": item.get("source"),
            }
        )
    return ToolText("".join(parts) + tail, {"observations": observations, "missing": missing})


# ---------------------------------------------------------------------- forget, stats


def forget(result: dict[str, Any], refs: Sequence[str], *, confirmed: bool) -> ToolText:
    """The answer of the service's forget (``matching``, ``forgotten``) for ``refs``."""
    cited = ", ".join(refs)
    matching = int(result.get("matching", 0))
    forgotten = int(result.get("forgotten", 0))
    data = {"refs": list(refs), "matching": matching, "forgotten": forgotten, "confirmed": confirmed}
    if not confirmed:
        text = (
            f"{matching} {_memories(matching)} would be forgotten ({cited}). Nothing was removed: call `forget` "
            "again with the same ids and confirm=true, once the user has agreed, to remove them for good.\n"
        )
        return ToolText(text, data)
    text = (
        f"Forgot {forgotten} {_memories(forgotten)} for good ({cited}): they are gone from the store and "
        "the search index.\n"
    )
    return ToolText(text, data)


def _memories(count: int) -> str:
    return "memory" if count == 1 else "memories"


def stats(data: dict[str, Any]) -> ToolText:
    """The service's store statistics as a short list."""
    by_type = data.get("events_by_type") or {}
    kinds = ", ".join(f"{kind} {count}" for kind, count in by_type.items()) or "none"
    size = int(data.get("store_bytes") or 0) / 1e6
    text = (
        "## Memory statistics\n"
        f"- Events: {data.get('events', 0)} in {data.get('sessions', 0)} sessions across "
        f"{data.get('projects', 0)} projects\n"
        f"- By type: {kinds}\n"
        f"- Span: {data.get('first_event') or '-'} to {data.get('last_event') or '-'}\n"
        f"- Forgotten: {data.get('forgotten_events', 0)} · with masked secrets: "
        f"{data.get('events_with_masked_secrets', 0)} · with private sections removed: "
        f"{data.get('events_with_private_sections', 0)}\n"
        f"- Store: {data.get('data_dir')} ({size:.1f} MB, schema {data.get('schema_version', '?')})\n"
    )
    return ToolText(clip(text, MAX_CHARS), dict(data))


def projects(rows: list[dict[str, Any]]) -> ToolText:
    """The projects remembered, most recently active first."""
    if not rows:
        return ToolText("No projects are remembered yet.", {"projects": []})
    lines = [
        f"- {row['project']}: {row['events']} events in {row['sessions']} sessions, last {when(row.get('last_ts'))}"
        for row in rows
    ]
    return ToolText(clip("## Projects\n" + "\n".join(lines) + "\n", MAX_CHARS), {"projects": rows})


def why(data: dict[str, Any], start: int, end: int) -> ToolText:
    """Who wrote lines ``start``..``end`` of a file, and why (:func:`claude_memory.core.why.why_markdown`)."""
    text = why_markdown(data, start, end)
    return ToolText(clip(text, MAX_CHARS), {"path": data["path"], "ranges": data["ranges"], "edits": data["edits"]})


def _task_line(t: dict[str, Any]) -> str:
    blocked = "; ".join(b["title"] for b in t["blockers"])
    maybe = "; ".join(b["title"] for b in t["blocker_suggestions"])
    line = f"- {t['status']}: {t['title']} (id {t['id']})"
    if blocked:
        line += f" — blocked by: {blocked}"
    if maybe:
        line += f" — maybe blocked by: {maybe}"
    return line + "\n"


def tasks(rows: list[dict[str, Any]]) -> ToolText:
    """Tasks, one line each."""
    if not rows:
        return ToolText("No tasks with that status are remembered for this scope.", {"tasks": []})
    return ToolText(clip("## Tasks\n" + "".join(_task_line(t) for t in rows), MAX_CHARS), {"tasks": rows})


def task(data: dict[str, Any]) -> ToolText:
    """One task with its history."""
    lines = [f"## {data['title']}\n", f"Status: {data['status']} · id {data['id']} · project {data['project']}\n"]
    if data["description"]:
        lines.append(f"\n{data['description']}\n")
    lines += [_task_line(data)] if data["blockers"] or data["blocker_suggestions"] else []
    if data["suggested_same"]:
        lines.append(f"Maybe the same task as: {', '.join(data['suggested_same'])}\n")
    lines.append("\nHistory:\n")
    for h in data["history"]:
        what = h.get("to") or h.get("initial_status") or h.get("mode") or ""
        why = f" ({h['reason']})" if h.get("reason") else ""
        cite = f" [{h['citation']}]" if h.get("citation") else ""
        lines.append(f"- {when(h['timestamp'])} {h['type']} {what}{why}{cite}\n")
    return ToolText(clip("".join(lines), MAX_CHARS), dict(data))


def insights(data: dict[str, Any]) -> ToolText:
    """The user's standing preferences (and repeated topics), one line each with its citations."""
    prefs = list(data.get("preferences", []))
    topics = list(data.get("topics", []))
    if not prefs and not topics:
        return ToolText("No preferences or repeated topics are remembered for this scope.", dict(data))
    lines = []
    if prefs:
        lines.append("## The user's preferences and rules (from earlier sessions)\n")
        for p in prefs:
            cites = " ".join(f"[{e['citation']}]" for e in p["evidence"][-3:] if e.get("citation"))
            scope = "" if p.get("scope") else " (every project)"
            lines.append(f"- {clip(p['text'], 200)}{scope} · stated {p['count']}× {cites}\n")
    if topics:
        lines.append("\n## Topics the user keeps asking about\n")
        lines += [f"- {clip(t['key'], 100)} · {t['count']}×\n" for t in topics[:10]]
    return ToolText(clip("".join(lines), MAX_CHARS), dict(data))
