"""Provenance: which conversation wrote which line of a file (operation ``blame``; the CLI's ``blame``, the MCP
tool ``why``, the language server's line hovers and lenses, the PreToolUse note).

A file as it is now (on disk, or an editor's unsaved buffer) is aligned with the edit records of that file
(:mod:`claude_memory.store.edits`) by :func:`claude_memory.core.blame.blame`; each attributed range names the call,
the prompt that led to it and Claude's words before it. Results are kept per file content and per state of the
file's records, so a hover on an unchanged file costs one small query.

Also here: the one-time backfill of stores made before edit records existed, which reads the editing calls again
from their transcripts (the byte ranges their events cite) and passes them through the same privacy filter.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from claude_memory.core.blame import Attribution, Record, blame, file_lines
from claude_memory.core.disclosure import clip
from claude_memory.core.edits import edit_hunks
from claude_memory.core.privacy import PrivacyReport
from claude_memory.service.projects import ProjectResolver
from claude_memory.service.reread import reread_call
from claude_memory.store import edits
from claude_memory.store.db import from_store_time
from claude_memory.store.queries import StoredEvent, events_by_ids

if TYPE_CHECKING:
    from claude_memory.service.memory import Memory

log = logging.getLogger("claude_memory.service")

CACHED_FILES: Final = 64  # blames kept (each is a few kB)
MAX_FILE_BYTES: Final = 4_000_000  # a larger file is not blamed (one sentence says so)
EXCERPT_CHARS: Final = 300  # of a prompt or an answer in a blame


class Provenance:
    """Blames files against the store's edit records. Use from the thread that owns the store."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._projects = ProjectResolver()  # a folder's project (git root), remembered
        self._cache: OrderedDict[tuple[str, str, tuple[int, int]], dict[str, Any]] = OrderedDict()

    def blame(self, path: str, text: str | None = None) -> dict[str, Any]:
        """Every line range of ``path`` (its ``text`` when given, else the file on disk) with the edit that wrote
        it, or none. ValueError (one sentence) for a file that cannot be read."""
        path = os.path.normpath(path)
        if text is None:
            text = read_text(path)
        con = self._memory.con
        project = self._projects(os.path.dirname(path))
        rel = edits.relative_path(path, project)
        generation = edits.records_generation(con, path, project, rel)
        key = (path, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), generation)
        found = self._cache.get(key)
        if found is not None:
            self._cache.move_to_end(key)
            return found
        records = edits.records_for(con, path, project, rel) if generation[0] else []
        ranges = blame(text, [Record(r.event_id, r.hunks) for r in records]) if records else _unwritten(text)
        result = self._describe(path, text, ranges, records)
        self._cache[key] = result
        while len(self._cache) > CACHED_FILES:
            self._cache.popitem(last=False)
        return result

    def _describe(
        self, path: str, text: str, ranges: list[Attribution], records: list[edits.EditRecord]
    ) -> dict[str, Any]:
        by_id = {r.event_id: r for r in records}
        used = [by_id[i] for i in dict.fromkeys(a.record for a in ranges if a.record is not None)]
        related = events_by_ids(
            self._memory.con, [i for r in used for i in (r.prompt_id, r.answer_id, r.event_id) if i is not None]
        )
        described = {r.event_id: _edit_json(r, related) for r in used}
        lines = sum(a.end - a.start + 1 for a in ranges)
        claude = sum(a.end - a.start + 1 for a in ranges if a.record is not None)
        return {
            "path": path,
            "lines": lines,
            "claude_lines": claude,
            "edit_records": len(records),
            "sessions": len({r.session_id for r in records}),
            "ranges": [
                {
                    "start": a.start,
                    "end": a.end,
                    "edit": a.record,
                    "confidence": round(a.confidence, 3),
                    "method": a.method,
                }
                for a in ranges
            ],
            "edits": list(described.values()),
        }

    # ------------------------------------------------------------------ backfill

    def backfill(self) -> int:
        """Read the editing calls stored before edit records existed again from their transcripts; how many
        calls got records. Calls whose transcript is gone or changed keep none (logged once, in one sentence)."""
        memory = self._memory
        calls = edits.calls_to_backfill(memory.con)
        rows: list[tuple[int, int, str, str | None, int | None, str, str]] = []
        missing = 0
        for call in calls:
            found = reread_call(call.source_path, call.byte_start, call.byte_end, call.tool_use_id)
            if found is None:
                missing += 1
                continue
            tool_input, structured, failed = found
            report = PrivacyReport()
            for n, hunk in enumerate(edit_hunks(call.tool_name, tool_input, structured, failed=failed)):
                text, removed, file = (
                    str(memory.privacy.filter_value(v, report)) for v in (hunk.text, hunk.removed, hunk.file)
                )
                rows.append(
                    (call.event_id, n, file, edits.relative_path(file, call.project), hunk.new_start, text, removed)
                )
        memory.writer.backfill_edits(edits.rows_table(rows))
        if missing:
            log.warning(
                "%d of %d older editing calls could not be read again from their transcripts; their lines are not "
                "attributed.", missing, len(calls),
            )  # fmt: skip
        return len({r[0] for r in rows})


def read_text(path: str) -> str:
    """A file's text for blame; ValueError (one sentence) when it cannot be."""
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{path} is {size:,} bytes; blame reads files up to {MAX_FILE_BYTES:,} bytes.")
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist.") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a folder, not a file.") from None
    except OSError as exc:
        raise ValueError(f"{path} could not be read ({exc.strerror or type(exc).__name__}).") from None


def _unwritten(text: str) -> list[Attribution]:
    count = len(file_lines(text))
    return [Attribution(1, count, None, None, 0.0, None)] if count else []


def _excerpt(event: StoredEvent | None) -> dict[str, Any] | None:
    if event is None:
        return None
    text = clip(" ".join(event.text.split()), EXCERPT_CHARS)
    return {"citation": event.to_json()["citation"], "text": text, "timestamp": from_store_time(event.ts)}


def _edit_json(record: edits.EditRecord, related: dict[int, StoredEvent]) -> dict[str, Any]:
    call = related.get(record.event_id)
    answer = related.get(record.answer_id) if record.answer_id is not None else None
    prompt = related.get(record.prompt_id) if record.prompt_id is not None else None
    return {
        "id": record.event_id,
        "citation": call.to_json()["citation"] if call else None,
        "tool": record.tool_name,
        "tool_use_id": record.tool_use_id,
        "file": record.file,
        "session_id": record.session_id,
        "agent_id": record.agent_id,
        "timestamp": from_store_time(record.ts),
        "model": answer.metadata.get("model") if answer else None,
        "source": call.source() if call else None,
        "prompt": _excerpt(prompt),
        "answer": _excerpt(answer),
    }
