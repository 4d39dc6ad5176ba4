"""The memory service's API: one object per data directory, used by every face (CLI today).

It owns the DuckDB connection (the only one: DuckDB lets one process write, and while it does no other
process can even read) and routes all writes through one :class:`EventWriter`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from claude_memory.config import load_settings
from claude_memory.core import citations
from claude_memory.core.disclosure import (
    DEFAULT_BUDGET,
    DEFAULT_CONTEXT,
    DEFAULT_WINDOW,
    Details,
    IndexEntry,
    SearchIndex,
    SmartSearch,
    Timeline,
    pack,
)
from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.core.privacy import PrivacyFilter
from claude_memory.core.tokens import QueryTokenizer
from claude_memory.service import disclosure
from claude_memory.service.disclosure import LayerCache
from claude_memory.service.discovery import Discovery, TranscriptFile, discover
from claude_memory.service.embedding import EmbeddingWorker, queue_status
from claude_memory.service.endless import Endless
from claude_memory.service.graduation import Graduation
from claude_memory.service.importer import Importer, ImportOptions, ImportReport, ProgressFn
from claude_memory.service.insights import Insights
from claude_memory.service.model_switch import ModelSwitch
from claude_memory.service.projects import normalise_project_arg
from claude_memory.service.provenance import Provenance
from claude_memory.service.search import Retrieval, SearchHit, level, search
from claude_memory.service.tasks import TaskProjector
from claude_memory.store import db, edits, files, forget, health, learning, ledger, model_files, queries
from claude_memory.store.embedder import DEFAULT_MODEL, Embedder
from claude_memory.store.eventmap import EventMap
from claude_memory.store.heap import release_freed_memory
from claude_memory.store.learning import Use
from claude_memory.store.ledger import ForgetLedger
from claude_memory.store.postings import PostingsIndex, idf
from claude_memory.store.queries import StoredEvent
from claude_memory.store.vector_index import VectorIndex
from claude_memory.store.writer import Changes, EventWriter


@dataclass(slots=True)
class ImportPlan:
    importer: Importer
    found: Discovery

    def pending_bytes(self) -> int:
        return self.importer.pending_bytes(self.found.files)

    def run(self, progress: ProgressFn | None = None) -> ImportReport:
        report = self.importer.run(self.found.files, progress)
        report.files_skipped = dict(self.found.skipped)
        return report


T = TypeVar("T")
REBUILD_INDEX_AFTER_FORGET = 50_000  # vectors; ~15 s to rebuild on 2 cores. Larger: reindex by hand.


class Memory:
    def __init__(self, data_dir: Path, *, read_only: bool = False) -> None:
        self.data_dir = data_dir
        self.settings, warning = load_settings(data_dir)
        self.warnings: list[str] = [warning] if warning else []  # one plain sentence each, for the user
        self.privacy = PrivacyFilter(self.settings.privacy.settings())
        if self.privacy.invalid_patterns:
            patterns = ", ".join(repr(p) for p in self.privacy.invalid_patterns)
            self.warnings.append(f"Ignoring custom privacy patterns that are not valid regular expressions: {patterns}")
        self.con = db.connect(data_dir, read_only=read_only)
        self._deferred = False  # checkpoints left to checkpoint() (defer_checkpoints)
        self._memory_limit = db.memory_limit(self.con)  # DuckDB's, put back after its cache is trimmed
        self.changes = Changes()  # this process's writes: search re-reads the store only after one
        self.ledger = ForgetLedger(data_dir)
        if not read_only:
            ledger.backfill(self.con, self.ledger)
        self.writer = EventWriter(self.con, self.changes, self.ledger)
        self.tokenizer = QueryTokenizer()
        self.read_only = read_only
        self.embedder = self._make_embedder()
        self._model_checked = False  # the loaded model was compared with the store's (model_ready)
        self._model_conflict: str | None = None  # why the loaded model may not be used with the store's vectors
        self._index: VectorIndex | None = None
        self._events = EventMap()  # ranking's in-memory view of the store, refreshed before each search
        self._postings = PostingsIndex()  # BM25 postings in memory (~23 MB at 100k events), refreshed likewise
        self.layer_cache = LayerCache()  # progressive-disclosure results, valid for one store generation
        self._pool: ThreadPoolExecutor | None = None  # embeds search queries beside BM25
        self.switch = ModelSwitch(self)  # a change of embedding model in progress (claude-memory model use)
        self.provenance = Provenance(self)  # which conversation wrote which line (blame)
        self.tasks = TaskProjector(self)  # tasks that survive sessions, folded from the task tool calls
        self.graduation = Graduation(self)  # levels L0 -> L4 from the access metrics
        self.insights = Insights(self)  # preferences and repeated topics from the prompts
        self.endless = Endless(self)  # endless mode: working set, consolidation, continuity
        if not read_only and edits.backfill_pending(self.con):
            self.provenance.backfill()  # once, for editing calls stored before edit records existed

    def _make_embedder(self) -> Embedder:
        """The embedding model as the store recorded it (its name and folder), the settings and the variables."""
        recorded = queries.recorded_model(self.con)
        return Embedder(
            self.settings.embedding_model_path,
            str(recorded["name"]) if recorded else DEFAULT_MODEL,
            data_dir=self.data_dir,
            recorded=Path(recorded["path"]) if recorded and recorded["path"] else None,
            offline=self.settings.is_offline,
            int8=self.settings.embedding_int8,
        )

    def release_memory(self, *, busy: bool = False) -> bool:
        """Hand memory this process no longer needs back to the system: the task board held for the next task call
        (stored), DuckDB's cached blocks past a bound and the freed heap (after loads, imports, a rebuilt index). A few
        milliseconds; only where no other thread queries the store (the service's worker when quiet). ``busy``
        (between requests): DuckDB's part only, and only once it holds more than its bound. True if DuckDB's cache
        was trimmed."""
        if busy:
            return db.release_cache(self.con, self._memory_limit)
        self.tasks.release()
        trimmed = db.release_cache(self.con, self._memory_limit)
        release_freed_memory()
        return trimmed

    def bounded(self, work: Callable[[], T]) -> T:
        """``work()`` (a read over much of the store) keeping no more of DuckDB's cache than its bound as it goes
        (:func:`claude_memory.store.db.bounded`, at least ``db.READ_FLOOR``). Only where no other thread queries the
        store."""
        return db.bounded(self.con, self._memory_limit, work, least=db.READ_FLOOR)

    def defer_checkpoints(self) -> None:
        """Leave checkpoints to :meth:`checkpoint` (a service's quiet moments, and :meth:`close`) below
        ``db.AUTO_CHECKPOINT``, rather than to whichever commit takes DuckDB's log past 16 MB."""
        if not self.read_only:
            db.defer_checkpoints(self.con)
            self._deferred = True

    def checkpoint(self, *, least: int = db.QUIET_CHECKPOINT, quietly: bool = False) -> bool:
        """Write DuckDB's log into the store's file once it holds ``least`` bytes, with DuckDB's memory bounded
        (:func:`claude_memory.store.db.checkpoint`, ``quietly`` as there); True if it did. Only where no other thread
        queries the store."""
        if self.read_only or db.log_bytes(self.data_dir) < least:
            return False
        db.checkpoint(self.con, self._memory_limit, quietly=quietly)
        return True

    def warm_up(self) -> None:
        """Load what a search needs, one part at a time, handing back each load's leftovers before the next: the model,
        the vector index, then the event map and the postings through a search. A first search loads them side by
        side (the query is embedded on a thread while the postings load), and their peaks would add up."""
        if self.model_ready():
            self.embedder.embed(["warm up"])
            release_freed_memory()
            self.vector_index()
            release_freed_memory()
        self.search("warm up", EventFilters(), 1)
        release_freed_memory()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        if self._deferred:
            self.checkpoint(least=1, quietly=True)  # (closing would, unbounded)
        self.con.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ import

    def plan_import(self, claude_home: Path, project: str | None = None, *, settle_seconds: float = 60.0) -> ImportPlan:
        """What an import would read (for a progress bar), ready to run."""
        options = self._import_options(settle_seconds)
        found = discover(claude_home, normalise_project_arg(project) if project else None)
        return ImportPlan(Importer(self.writer, self.privacy, options), found)

    def import_history(
        self,
        claude_home: Path,
        project: str | None = None,
        progress: ProgressFn | None = None,
        *,
        settle_seconds: float = 60.0,
    ) -> ImportReport:
        return self.plan_import(claude_home, project, settle_seconds=settle_seconds).run(progress)

    def changed_transcripts(self, files: list[TranscriptFile]) -> list[TranscriptFile]:
        """The transcripts with something new since their checkpoint."""
        return Importer(self.writer, self.privacy, ImportOptions()).changed(files)

    def import_files(self, files: list[TranscriptFile], *, settle_seconds: float) -> ImportReport:
        """Import these transcripts (the service's live capture: one file at a time, as it grows)."""
        return Importer(self.writer, self.privacy, self._import_options(settle_seconds)).run(files)

    def _import_options(self, settle_seconds: float) -> ImportOptions:
        return ImportOptions(
            settle_seconds=settle_seconds,
            max_line_bytes=self.settings.max_line_mb << 20,
            max_tool_text_chars=self.settings.max_tool_output_chars,
        )

    # ------------------------------------------------------------------ queries

    def search(
        self, query: str, filters: EventFilters, limit: int, mode: str = "hybrid", as_of: datetime | None = None
    ) -> tuple[list[SearchHit], dict[str, Any]]:
        """Ranked hits and what the search did (``meta``). Relative dates in the query count from ``as_of`` (the time
        the question is asked), else from now."""
        retrieval = self._retrieval()
        if mode != "keyword":
            if self.model_ready():
                retrieval.embedder, retrieval.index = self.embedder, self.vector_index()
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")
                retrieval.pool = self._pool
            else:
                retrieval.unavailable = self.embedder.reason
        return search(self.con, retrieval, query, filters, limit, mode, as_of=as_of)

    def level_search(self) -> bool:
        """Bring search's in-memory views level with the store now, as the next search would (the service's quiet
        moments, so that a prompt after a turn's captures does not wait for it); True if they were behind. Nothing
        before this process's first search."""
        if self._events.generation is None:
            return False
        return level(self.con, self._retrieval())

    def _retrieval(self) -> Retrieval:
        return Retrieval(self.tokenizer, events=self._events, postings=self._postings, changes=self.changes.count)

    def rarest_idf(self) -> float:
        """The idf of a word found in one event only, in the postings the last search used (0 before any):
        what an absolute BM25 score is measured against (core.injection.relevant)."""
        return idf(self._postings.documents, 1)

    # ------------------------------------------------------------------ embeddings

    def model_ready(self) -> bool:
        """Whether the embedding model is loaded and is the one the store's vectors were made with. The first time
        it is, in a store opened for writing, it is recorded with the store (when it differs from the one recorded
        and the store holds no vectors yet), so that every later process finds it. A different model while the
        store holds vectors is refused (its queries would be compared with another model's vectors): semantic
        search stays off, and ``reason`` says to switch with ``model use``."""
        if not self.embedder.available:
            return False
        if not self._model_checked:
            self._model_checked = True
            embedder, known = self.embedder, queries.recorded_model(self.con)
            path = str(embedder.model_path) if embedder.model_path else None
            if known is not None and known["model_id"] != embedder.model_id and queries.has_vectors(self.con):
                self._model_conflict = (
                    f"The store's vectors were made with {known['model_id']}, not with the model loaded here "
                    f"({embedder.model_id}, from {path or embedder.source}); to change models, unset the variable "
                    "or setting that names it and run 'claude-memory model use' with it. Keyword search still works."
                )
            elif not self.read_only and (
                known is None or (known["model_id"], known["path"]) != (embedder.model_id, path)
            ):
                fingerprint = (
                    model_files.fingerprint(embedder.model_path, embedder.model_name) if embedder.model_path else None
                )
                self.writer.record_model(embedder.model_name, embedder.model_id, embedder.source or "cache", path,
                                         fingerprint)  # fmt: skip
        if self._model_conflict is not None:
            self.embedder.reason = self._model_conflict
            return False
        return True

    def model_status(self) -> dict[str, Any]:
        """The model in use or why there is none, where it was found, and what the store recorded."""
        available, embedder = self.model_ready(), self.embedder
        try:
            managed = model_files.installed(self.data_dir, embedder.model_name)
        except ValueError:
            managed = None
        return {
            "name": embedder.model_name,
            "model_id": embedder.model_id,
            "available": available,
            "source": embedder.source,
            "path": str(embedder.model_path) if embedder.model_path else None,
            "int8": embedder.quantized,
            "reason": embedder.reason,
            "offline": embedder.offline,
            "fetchable": embedder.fetchable,
            "recorded": queries.recorded_model(self.con),
            "switch": self.switch.status(),
            "managed": str(managed) if managed else None,
        }

    def model_changed(self) -> None:
        """A model was downloaded or removed: look for it again, and open the index under its id."""
        self.embedder.reset()
        self._model_checked, self._model_conflict = False, None
        if self._index is not None:
            self._index.save()
        self._index = None

    def model_switched(self, index: VectorIndex) -> None:
        """A model switch finished (:mod:`claude_memory.service.model_switch`): the store's vectors are the new
        model's, ``index`` holds them; the model is loaded as any later process will find it."""
        self.embedder = self._make_embedder()
        self._model_checked, self._model_conflict = False, None
        self._index = index if self.embedder.available and self.embedder.model_id == index.model_id else None
        self._events = EventMap()  # every label changed
        self.layer_cache.clear()

    def vector_index(self) -> VectorIndex:
        """The hnswlib index, loaded (and brought level with the store) on first use."""
        if self._index is None:
            self._index = VectorIndex(self.data_dir, self.embedder.model_id)
            self._index.load(self.con)
        return self._index

    def embed_pending(self, progress: Callable[[int], None] | None = None) -> int:
        """Embed every queued event now (import waits on this); 0 when no model is available."""
        if not self.model_ready():
            return 0
        done = EmbeddingWorker(self.writer, self.embedder, self.vector_index()).run(progress)
        self.vector_index().refit_if_due(self.writer.con)  # (a service refits on a thread of its own: IdleWork)
        return done

    def warnings_for_semantics(self) -> list[str]:
        """A sentence for the import report when semantic search is off."""
        return [] if self.model_ready() else [self.embedder.reason or "Semantic search is off."]

    def embedding_status(self) -> dict[str, Any]:
        available = self.model_ready()
        # (without a model this process may use, the index is not opened: opening it under another model's id would
        # rebuild it from the store and save it under that id, for the next process to rebuild again)
        queue = queue_status(self.writer.con, self.vector_index() if available else None)
        return {
            "model": self.embedder.model_id,
            "available": available,
            "reason": self.embedder.reason,
            "source": self.embedder.source,
            "path": str(self.embedder.model_path) if self.embedder.model_path else None,
            **queue.to_json(),
        }

    def reindex(self) -> int:
        """Rebuild the vector index from the store; returns how many vectors it holds."""
        return self.vector_index().rebuild(self.con)

    def history(self, filters: EventFilters, limit: int) -> list[StoredEvent]:
        return queries.history(self.con, filters, limit)

    def sessions(self, project: str | None, limit: int, before: datetime | None = None) -> list[dict[str, Any]]:
        return queries.sessions(self.con, project, limit, before)

    def activity(self, days: int, project: str | None) -> dict[str, Any]:
        return queries.activity(self.con, days, project)

    def arrived(self, after_seq: int | None, limit: int) -> tuple[int, list[StoredEvent]]:
        return queries.changes(self.con, after_seq, limit)

    def verify(self) -> dict[str, Any]:
        """A checksum-level read of the whole store and its schema version (:func:`store.health.verify`)."""
        return health.verify(self.con, self.data_dir / db.DB_FILE)

    def stats(self) -> dict[str, Any]:
        # the privacy counts read every event's metadata (40 ms at 100k): kept until the store changes
        data = queries.stats(self.con, self.cached("privacy", None, lambda: queries.privacy_counts(self.con)))
        data["schema_version"] = db.schema_version(self.con)
        data["data_dir"] = str(self.data_dir)
        db_file = self.data_dir / db.DB_FILE
        data["store_bytes"] = db_file.stat().st_size if db_file.exists() else 0
        data["graduation"] = self.graduation.stats()
        return data

    def resolve(self, ref: str) -> StoredEvent | None:
        """An event by citation (``mem:AbC123``, ``[mem:AbC123]``, ``AbC123``) or numeric id."""
        ref = ref.strip()
        citation = citations.parse(ref)
        found = queries.event_by_citation(self.con, citation) if citation else None
        if found is None and ref.isdigit():  # six digits can be either: a citation first, then an id
            found = queries.events_by_ids(self.con, [int(ref)]).get(int(ref))
        return found

    def projects(self, limit: int) -> list[dict[str, Any]]:
        return queries.projects(self.con, limit)

    def file_history(
        self, path: str, *, symbol: str | None, project: str | None, limit: int, known_generation: str | None
    ) -> dict[str, Any]:
        """Events that touched a file or mention a symbol, newest first; cached for the store generation, and
        answered with ``unchanged`` (no events) when the caller already holds this generation's answer."""
        current = queries.generation(self.con)
        generation = "-".join(str(part) for part in current)
        path = os.path.normpath(path)
        symbol = (symbol or "").strip() or None
        head = {"path": path, "symbol": symbol, "project": project, "generation": generation}
        if known_generation == generation:
            return {**head, "unchanged": True}

        def compute() -> dict[str, Any]:
            terms = self.tokenizer.terms(symbol) if symbol else []
            found = files.file_history(self.con, path, symbol=symbol, terms=terms, project=project, limit=limit)
            return {
                "file_events": found.file_events,
                "symbol_projects": list(found.projects) if symbol else [],
                "events": [e.to_json() for e in found.events],
            }

        body = self.layer_cache.get(current, "file_history", (path, symbol, project, limit), compute)
        return {**head, "unchanged": False, **body}

    def file_summary(self, paths: list[str]) -> dict[str, Any]:
        """``{path: {count, last_ts}}``: how many events touched each file, and when last."""
        by_path = files.file_summary(self.con, [os.path.normpath(path) for path in paths])
        out: dict[str, Any] = {}
        for path in paths:
            count, last = by_path.get(os.path.normpath(path), (0, None))
            out[path] = {"count": count, "last_ts": db.from_store_time(last)}
        return out

    # ------------------------------------------------------------------ progressive disclosure

    def cached(self, layer: str, key: Hashable, compute: Callable[[], T], generation: Hashable = None) -> T:
        """``compute()``, or its result from the cache if the store has not changed since."""
        current = generation if generation is not None else queries.generation(self.con)
        return self.layer_cache.get(current, layer, key, compute)

    def index(
        self, query: str, filters: EventFilters, limit: int = 10, mode: str = "hybrid", as_of: datetime | None = None
    ) -> SearchIndex:
        """Layer 1: one entry per hit (citation, one-line summary, score, confidence, type, time, session,
        project) and the layer's token estimate. Cached until the store changes (or, for relative dates counted
        from now, the day does)."""
        asked = as_of or datetime.now(UTC).date()
        return self.cached(
            "index",
            (query, filters, limit, mode, asked),
            lambda: disclosure.search_index(*self.search(query, filters, limit, mode, as_of)),
        )

    def timeline(self, refs: Sequence[str], *, before: int = DEFAULT_WINDOW, after: int = DEFAULT_WINDOW) -> Timeline:
        """Layer 2: ``before`` and ``after`` session events around each referenced event (citations or
        ids), in session order, targets marked, overlapping windows merged. References that resolve to
        nothing are listed in ``missing``. Cached until the store changes."""
        wanted = tuple(ref.strip() for ref in refs)

        def compute() -> Timeline:
            found: list[StoredEvent] = []
            missing: list[str] = []
            for ref in wanted:
                event = self.resolve(ref)
                if event is None:
                    missing.append(ref)
                else:
                    found.append(event)
            return disclosure.timeline(self.con, found, missing, before, after)

        return self.cached("timeline", (wanted, before, after), compute)

    def details(self, ref: str, *, context: int = DEFAULT_CONTEXT, via: str = "cli") -> Details | None:
        """Layer 3: one event in full (text, files, tool facts, source pointer, token estimate) with
        ``context`` neighbour previews each side; None if no such event. Counts a use of its citation
        (``via`` names the face). The event part is cached until the store changes; the use count is not."""

        def compute() -> Details | None:
            event = self.resolve(ref)
            return disclosure.details(self.con, event, context) if event is not None else None

        found = self.cached("details", (ref.strip(), context), compute)
        return self._count_use(found, via) if found is not None else None

    def smart_search(
        self,
        query: str,
        filters: EventFilters,
        limit: int = 10,
        mode: str = "hybrid",
        *,
        budget: int = DEFAULT_BUDGET,
        via: str = "cli",
        as_of: datetime | None = None,
    ) -> SmartSearch:
        """Layer 1 for the query, expanded within ``budget`` tokens by the rules of
        :func:`claude_memory.core.disclosure.pack`: high-confidence hits get details (layer 3, counted as a
        use of their citations), then suggested ones (and high ones whose details did not fit) a timeline
        window (layer 2, ±3 events); the rest stay index lines, and hits past the budget are left out."""
        found = self.index(query, filters, limit, mode, as_of)
        generation = queries.generation(self.con)  # once: nothing below writes events

        def details_of(entry: IndexEntry) -> Details | None:
            key = (entry.id, DEFAULT_CONTEXT)  # an int: never confused with a reference typed by a user
            return self.cached("details", key, lambda: self._details_by_id(entry.id), generation)

        def timeline_of(entry: IndexEntry) -> Timeline:
            key = ((entry.id,), DEFAULT_WINDOW, DEFAULT_WINDOW)
            return self.cached("timeline", key, lambda: self._timeline_by_id(entry.id), generation)

        packing = pack(found.entries, budget, details_of, timeline_of)
        used = tuple(self._count_use(d, via) for d in packing.details)
        return SmartSearch(replace(packing, details=used), dict(found.meta))

    def _details_by_id(self, event_id: int) -> Details | None:
        event = queries.events_by_ids(self.con, [event_id]).get(event_id)
        return disclosure.details(self.con, event, DEFAULT_CONTEXT) if event is not None else None

    def _timeline_by_id(self, event_id: int) -> Timeline:
        events = list(queries.events_by_ids(self.con, [event_id]).values())
        return disclosure.timeline(self.con, events, (), DEFAULT_WINDOW, DEFAULT_WINDOW)

    def _count_use(self, found: Details, via: str) -> Details:
        citation = citations.parse(found.citation) if found.citation else None
        if citation is None:
            return found
        self.writer.record_uses([Use(citation, via, None, 1.0)])  # asked for by name: a full match
        used = learning.access(self.con, citation)
        level = learning.levels(self.con, [found.id]).get(found.id, 0)
        last = db.from_store_time(used.last)
        return replace(found, citation_uses=used.count, sessions_used=used.sessions, last_used=last, level=level)

    # ------------------------------------------------------------------ forget

    def count_matching(self, selector: ForgetSelector) -> int:
        return forget.count_matching(self.con, selector)

    def forget(self, selector: ForgetSelector) -> int:
        """Delete the selected events everywhere, then rewrite the database file so that no copy of
        their text survives in freed blocks."""
        # The index is loaded before the delete: loaded after it, the labels DuckDB no longer has look like those of a
        # crash between a forget and the index update, and the whole index is built again (11 min at a million events).
        index = self.vector_index()
        count, labels = self.writer.forget(selector)
        if count:
            self.writer.refresh_projects()
            self.switch.forget(labels)
            index.remove(labels)
            if labels and index.live_count <= REBUILD_INDEX_AFTER_FORGET:
                index.rebuild(self.con)  # hnswlib keeps a deleted vector's bytes: rebuilding drops them
            else:
                index.save()  # marked deleted at once; `claude-memory reindex` drops the bytes
            self.con = db.rewrite(self.con, self.data_dir)
            self.writer = EventWriter(self.con, self.changes, self.ledger)
            self.layer_cache.clear()  # the generation changed too; this also frees the memory at once
            if not self.read_only:  # what was derived from them goes now, before any hook reads it (hooks never fold)
                self.tasks.refresh()  # (folded again from the start if the forget dropped the board: store.tasks)
                self.insights.forgotten()
        return count
