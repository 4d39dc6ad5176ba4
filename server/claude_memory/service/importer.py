"""Import Claude Code transcripts into the event store: idempotent, resumable, privacy-filtered.

Per file, a checkpoint records (device, inode, hash of the first bytes, size, byte offset, line). A run
reads only bytes after the checkpoint; a file that shrank or was replaced is read again from the start
(dedupe keys make that safe). Events and the checkpoints that cover them are committed in the same
transaction, and a checkpoint never moves past a unit the parser still holds open, so a process killed
at any moment resumes to exactly the store a single clean run produces.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_memory.core.clip import clip_event
from claude_memory.core.events import ParsedEvent
from claude_memory.core.lines import iter_lines
from claude_memory.core.privacy import PrivacyFilter, PrivacyReport
from claude_memory.core.transcript import LineIssue, TranscriptParser
from claude_memory.service.discovery import TranscriptFile
from claude_memory.service.projects import ProjectResolver
from claude_memory.store.checkpoints import Checkpoint, load_checkpoints
from claude_memory.store.writer import EventWriter, SessionInfo, SubagentInfo

HEAD_BYTES = 1024
MAX_REPORTED_ISSUES = 200
PROGRESS_STEP = 1 << 20

ProgressFn = Callable[[int], None]  # called with the number of bytes just processed


@dataclass
class ImportReport:
    files_found: int = 0
    files_read: int = 0
    files_unchanged: int = 0
    files_restarted: int = 0
    files_unreadable: int = 0
    files_skipped: dict[str, int] = field(default_factory=dict)
    lines_read: int = 0
    events_parsed: int = 0
    events_new: int = 0
    new_by_type: Counter[str] = field(default_factory=Counter)
    lines_skipped: Counter[str] = field(default_factory=Counter)  # reason -> count
    issues: list[LineIssue] = field(default_factory=list)  # first MAX_REPORTED_ISSUES, with line numbers
    text_dropped: Counter[str] = field(default_factory=Counter)
    unknown_line_types: Counter[str] = field(default_factory=Counter)
    ignored_line_types: Counter[str] = field(default_factory=Counter)  # known bookkeeping lines
    privacy: PrivacyReport = field(default_factory=PrivacyReport)
    notes: list[str] = field(default_factory=list)  # one plain sentence each
    seconds: float = 0.0

    @property
    def duplicates(self) -> int:
        return self.events_parsed - self.events_new

    def merge(self, other: ImportReport) -> None:
        """Add the counts of another run (the service imports a history in parts); ``seconds`` is left
        to the caller, who knows the wall time of the whole."""
        self.files_found += other.files_found
        self.files_read += other.files_read
        self.files_unchanged += other.files_unchanged
        self.files_restarted += other.files_restarted
        self.files_unreadable += other.files_unreadable
        for reason, count in other.files_skipped.items():
            self.files_skipped[reason] = self.files_skipped.get(reason, 0) + count
        self.lines_read += other.lines_read
        self.events_parsed += other.events_parsed
        self.events_new += other.events_new
        self.new_by_type.update(other.new_by_type)
        self.lines_skipped.update(other.lines_skipped)
        self.issues.extend(other.issues[: max(0, MAX_REPORTED_ISSUES - len(self.issues))])
        self.text_dropped.update(other.text_dropped)
        self.unknown_line_types.update(other.unknown_line_types)
        self.ignored_line_types.update(other.ignored_line_types)
        self.privacy.merge(other.privacy)
        self.notes.extend(other.notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": {
                "found": self.files_found,
                "read": self.files_read,
                "unchanged": self.files_unchanged,
                "restarted": self.files_restarted,
                "unreadable": self.files_unreadable,
                "skipped": dict(self.files_skipped),
            },
            "lines_read": self.lines_read,
            "events": {
                "parsed": self.events_parsed,
                "new": self.events_new,
                "duplicates": self.duplicates,
                "new_by_type": dict(sorted(self.new_by_type.items())),
            },
            "skipped_lines": {
                "total": sum(self.lines_skipped.values()),
                "by_reason": dict(self.lines_skipped),
                "first": [
                    {"path": i.path, "line": i.line_no, "byte_offset": i.byte_offset, "reason": i.reason}
                    for i in self.issues
                ],
            },
            "dropped_text": dict(self.text_dropped),
            "unknown_line_types": dict(self.unknown_line_types),
            "ignored_line_types": dict(sorted(self.ignored_line_types.items())),
            "privacy": {
                "secrets_masked": self.privacy.secrets_masked,
                "secrets_by_kind": dict(sorted(self.privacy.kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
                "private_sections_removed": self.privacy.private_sections,
                "unclosed_private_tags": self.privacy.unclosed_private_tags,
            },
            "notes": self.notes,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True, slots=True)
class ImportOptions:
    batch_events: int = 10_000  # measured best of 2,500 / 5,000 / 10,000 / 20,000 at 100k events
    settle_seconds: float = 60.0  # a file untouched this long is finished: open units are flushed
    max_line_bytes: int = 16 << 20
    max_tool_text_chars: int = 20_000  # a tool event's text is cut here (after privacy filtering)
    # A tool call with no result this long after the file last changed is stored without one; closing
    # it sooner would throw a late result away (subagents and questions to the user can take hours).
    unanswered_tool_seconds: float = 24 * 3600


def _head_hash(path: Path, length: int) -> str:
    with path.open("rb") as fh:
        return hashlib.sha256(fh.read(length)).hexdigest()


class Importer:
    def __init__(
        self,
        writer: EventWriter,
        privacy: PrivacyFilter,
        options: ImportOptions | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.writer = writer
        self.privacy = privacy
        self.options = options or ImportOptions()
        self.clock = clock
        self.projects = ProjectResolver()
        self._events: list[ParsedEvent] = []
        self._checkpoints: dict[str, Checkpoint] = {}
        self._sessions: dict[str, SessionInfo] = {}
        self._subagents: list[SubagentInfo] = []
        self._known: dict[str, Checkpoint] = {}
        self._background: _BackgroundWriter | None = None

    # ------------------------------------------------------------------ planning

    def pending_bytes(self, files: list[TranscriptFile]) -> int:
        """Bytes a run would read (for a progress bar)."""
        known = load_checkpoints(self.writer.con)
        total = 0
        for f in files:
            try:
                size = f.path.stat().st_size
            except OSError:
                continue
            cp = known.get(str(f.path))
            total += size - cp.byte_offset if cp and cp.byte_offset <= size else size
        return total

    def changed(self, files: list[TranscriptFile]) -> list[TranscriptFile]:
        """The files an import would read something from: new, grown past their checkpoint, or replaced."""
        known = load_checkpoints(self.writer.con)
        out: list[TranscriptFile] = []
        for f in files:
            try:
                st = f.path.stat()
            except OSError:
                continue
            cp = known.get(str(f.path))
            if cp is None or (cp.device, cp.inode) != (st.st_dev, st.st_ino) or st.st_size != cp.byte_offset:
                out.append(f)
        return out

    # ------------------------------------------------------------------ running

    def run(self, files: list[TranscriptFile], progress: ProgressFn | None = None) -> ImportReport:
        """Import ``files``. Parsing runs on this thread while a writer thread stores the previous
        batch (DuckDB releases the GIL), so the two overlap; only the writer thread touches the
        connection until the run ends."""
        report = ImportReport(files_found=len(files))
        started = time.perf_counter()
        orphans = self.writer.drop_keyword_orphans()
        if orphans:
            report.notes.append(
                f"Removed {orphans} keyword postings an interrupted write had left without their events."
            )
        self._known = load_checkpoints(self.writer.con)
        self._background = _BackgroundWriter(self.writer)
        try:
            for f in files:
                self._import_file(f, report, progress)
            self._flush()
        finally:
            new_by_type = self._background.close()
            self._background = None
        report.new_by_type.update(new_by_type)
        report.events_new = sum(new_by_type.values())
        self.writer.refresh_projects()
        self.writer.merge_keyword_index()
        report.seconds = time.perf_counter() - started
        return report

    def _import_file(self, f: TranscriptFile, report: ImportReport, progress: ProgressFn | None) -> None:
        """Read one file; a file that cannot be read is reported and the run goes on."""
        try:
            self._read_file(f, report, progress)
        except OSError as exc:
            report.files_unreadable += 1
            report.notes.append(f"Could not read {f.path}: {exc.strerror or exc}.")

    def _read_file(self, f: TranscriptFile, report: ImportReport, progress: ProgressFn | None) -> None:
        path = str(f.path)
        st = f.path.stat()
        head = _head_hash(f.path, min(st.st_size, HEAD_BYTES))
        cp = self._known.get(path)
        start_offset, start_line = 0, 1
        if cp is not None:
            same_file = (cp.device, cp.inode) == (st.st_dev, st.st_ino) and st.st_size >= cp.byte_offset
            checked = min(cp.size, HEAD_BYTES)
            now_head = head if checked == min(st.st_size, HEAD_BYTES) else _head_hash(f.path, checked)
            if same_file and cp.size and now_head != cp.head_hash:
                same_file = False
            if not same_file:
                report.files_restarted += 1
                report.notes.append(f"{path} was truncated or replaced since the last import; read it again.")
            elif st.st_size == cp.byte_offset:
                report.files_unchanged += 1
                return
            else:
                start_offset, start_line = cp.byte_offset, cp.line_no
        report.files_read += 1
        idle = self.clock() - st.st_mtime
        parser = TranscriptParser(path, session_hint=f.session_id, agent_id=f.agent_id)
        parser.start_at(start_offset, start_line)
        if f.agent_id:
            agent_type, description = self._clean(f.agent_type, report), self._clean(f.description, report)
            self._subagents.append(SubagentInfo(f.session_id, f.agent_id, agent_type, description, path))
        unreported = 0  # bytes read but not yet passed to the progress callback
        with f.path.open("rb") as fh:
            lines = iter_lines(
                fh, start_offset=start_offset, start_line=start_line, max_line_bytes=self.options.max_line_bytes,
                end_offset=st.st_size,
            )  # fmt: skip
            for raw in lines:
                if not raw.terminated:
                    # Being written, or cut off by a crash: never fed and never checkpointed past, so it is
                    # read whole once finished (a resumed import must see what a clean one sees).
                    if idle >= self.options.settle_seconds:
                        parser.issues.append(
                            LineIssue(path, raw.line_no, raw.offset, "last line has no newline yet; read it later")
                        )
                    break
                self._take(parser.feed(raw), report)
                unreported += raw.end - raw.offset
                if progress and unreported >= PROGRESS_STEP:
                    progress(unreported)
                    unreported = 0
                if len(self._events) >= self.options.batch_events:
                    self._stage_file(f, st, head, parser, report)
                    self._flush()
        if progress and unreported:
            progress(unreported)
        if idle >= self.options.settle_seconds:
            # Finished for now: the open message is complete. A tool call still waiting for its result is
            # kept open much longer (subagents, questions to the user, long commands can take hours).
            close_tools = idle >= self.options.unanswered_tool_seconds
            self._take(parser.finish(close_tool_calls=close_tools), report)
        self._stage_file(f, st, head, parser, report)
        report.lines_read += parser.stats.lines
        for issue in parser.issues:
            report.lines_skipped[issue.reason] += 1
            if len(report.issues) < MAX_REPORTED_ISSUES:
                report.issues.append(issue)
        report.text_dropped.update(parser.stats.dropped)
        report.ignored_line_types.update(parser.stats.ignored_by_type)
        report.unknown_line_types.update(parser.stats.unknown_types)
        for name, count in parser.stats.unknown_types.items():
            report.lines_skipped[f"unknown line type {name}"] += count

    def _clean(self, text: str | None, report: ImportReport) -> str | None:
        """A privacy-filtered copy of a string stored outside an event (titles, descriptions, paths)."""
        if text is None:
            return None
        cleaned, counts = self.privacy.filter(text)
        report.privacy.merge(counts)
        return cleaned

    def _take(self, events: list[ParsedEvent], report: ImportReport) -> None:
        """Privacy-filter new events (before anything can be written) and buffer them."""
        for event in events:
            report.privacy.merge(prepare_event(event, self.privacy, self.projects, self.options.max_tool_text_chars))
            self._events.append(event)
        report.events_parsed += len(events)

    def _stage_file(
        self, f: TranscriptFile, st: os.stat_result, head: str, parser: TranscriptParser, report: ImportReport
    ) -> None:
        """Record the file's checkpoint and session facts for the next flush."""
        offset, line_no = parser.safe_offset()
        path = str(f.path)
        self._checkpoints[path] = Checkpoint(path, st.st_dev, st.st_ino, head, st.st_size, offset, line_no)
        for session_id, facts in parser.session_facts.items():
            cwd = self._clean(facts.get("cwd"), report)
            info = SessionInfo(
                session_id,
                self.projects(cwd) if cwd else None,
                cwd,
                path,
                title=self._clean(parser.titles.get(session_id), report),
                git_branch=self._clean(facts.get("gitBranch"), report),
                cc_version=facts.get("version"),
            )
            if f.agent_id is not None:
                info.transcript = None  # a subagent file is not the session's transcript
            self._sessions[session_id] = info

    def _flush(self) -> None:
        if not (self._events or self._checkpoints):
            return
        for event in self._events:
            if event.project is None and event.session_id in self._sessions:
                event.project = self._sessions[event.session_id].project
        assert self._background is not None, "flush outside run()"
        self._background.submit(
            _Batch(self._events, list(self._checkpoints.values()), list(self._sessions.values()), self._subagents)
        )
        self._events = []
        self._checkpoints = {}
        self._sessions = {}
        self._subagents = []


def prepare_event(
    event: ParsedEvent, privacy_filter: PrivacyFilter, projects: Callable[[str], str], max_tool_chars: int
) -> PrivacyReport:
    """Make a parsed event fit to store, before anything can be written: private sections removed and
    secrets masked in every string, then clipped, then its project resolved. Returns what was filtered."""
    privacy = PrivacyReport()
    event.text = privacy_filter.filter_value(event.text, privacy)  # type: ignore[assignment]
    event.metadata = privacy_filter.filter_value(event.metadata, privacy)  # type: ignore[assignment]
    event.files = privacy_filter.filter_value(event.files, privacy)  # type: ignore[assignment]
    event.cwd = privacy_filter.filter_value(event.cwd, privacy)  # type: ignore[assignment]
    event.git_branch = privacy_filter.filter_value(event.git_branch, privacy)  # type: ignore[assignment]
    for hunk in event.edits:  # the inserted code: a secret Claude wrote into a file is masked here too
        hunk.text = privacy_filter.filter_value(hunk.text, privacy)  # type: ignore[assignment]
        hunk.removed = privacy_filter.filter_value(hunk.removed, privacy)  # type: ignore[assignment]
        hunk.file = privacy_filter.filter_value(hunk.file, privacy)  # type: ignore[assignment]
    if privacy.private_sections or privacy.secrets_masked or privacy.unclosed_private_tags:
        event.metadata["privacy"] = privacy.as_metadata()
    clip_event(event, max_tool_chars)
    if event.cwd:
        event.project = projects(event.cwd)
    return privacy


@dataclass(slots=True)
class _Batch:
    events: list[ParsedEvent]
    checkpoints: list[Checkpoint]
    sessions: list[SessionInfo]
    subagents: list[SubagentInfo]


class _BackgroundWriter:
    """One thread that stores batches in order. A failure stops further writes and is raised to the
    importer at its next submit or at close; batches already committed stay committed."""

    def __init__(self, writer: EventWriter) -> None:
        self._writer = writer
        self._queue: queue.Queue[_Batch | None] = queue.Queue(maxsize=2)
        self._new: Counter[str] = Counter()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="claude-memory-writer", daemon=True)
        self._thread.start()

    def submit(self, batch: _Batch) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(batch)

    def close(self) -> Counter[str]:
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._new

    def _loop(self) -> None:
        while (batch := self._queue.get()) is not None:
            if self._error is not None:
                continue  # drain without writing after a failure
            try:
                self._new.update(
                    self._writer.append(
                        batch.events,
                        checkpoints=batch.checkpoints,
                        sessions=batch.sessions,
                        subagents=batch.subagents,
                    )
                )
            except BaseException as exc:
                self._error = exc
