"""The memory service: the one process that owns a data directory's store (``claude-memory serve``).

Threads: the socket server (one thread per connection, parsing and answering requests), the worker (the
only one that touches the store; see :mod:`claude_memory.service.worker`), the transcript watcher and its
debouncer, and the main thread, which waits for a stop signal and runs the periodic scan. The API is
documented in ``docs/service-api.md``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import resource
import signal
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_memory import __version__, wire
from claude_memory.core import locations
from claude_memory.core.injection import hook_output
from claude_memory.core.paths import RuntimePaths, ensure_private_dir, socket_dir
from claude_memory.service import model_switch
from claude_memory.service.capture import Capture, HookPayload
from claude_memory.service.contract import NoProgress, Priority
from claude_memory.service.discovery import TranscriptFile, discover, transcript_file
from claude_memory.service.dispatch import lookup, op_error
from claude_memory.service.idle import IdleWork
from claude_memory.service.importer import ImportReport
from claude_memory.service.lock import OwnerLock
from claude_memory.service.memory import Memory
from claude_memory.service.model_fetch import ModelFetcher, remove_model
from claude_memory.service.operations import registry
from claude_memory.service.operations.lifecycle import identity
from claude_memory.service.recall import ContextParams, Recaller, uses
from claude_memory.service.spool import drain
from claude_memory.service.watcher import DEBOUNCE_SECONDS, Debouncer, TranscriptWatcher
from claude_memory.service.worker import BACKGROUND, INTERACTIVE, LONG, URGENT, ServiceStopping, Worker
from claude_memory.store.db import StoreBusyError, StoreDamagedError
from claude_memory.store.embedder import DEFAULT_MODEL
from claude_memory.store.learning import Use
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from claude_memory.wire import Progress

log = logging.getLogger("claude_memory.service")

IMPORT_PART_BYTES = 4 << 20  # transcript bytes per import task (~0.5 s of work): requests run in between
OPEN_RETRY_SECONDS = 60.0  # a CLI run may hold the store for a moment when the service starts
EMBED_POLL = 2.0  # seconds between looks at the embedding queue while a client waits for it (embed_wait)
EMBED_STALL = 120.0  # stop waiting for embeddings when the queue has not moved for this long


@dataclass
class ServiceOptions:
    data_dir: Path
    claude_home: Path
    watch: bool = True
    scan_interval: float = 30.0
    live_settle: float = 2.0


class MemoryService:
    """The daemon, and the :class:`~claude_memory.service.contract.Engine` its operations run against."""

    def __init__(self, options: ServiceOptions) -> None:
        self.options = options
        self.paths = RuntimePaths(options.data_dir)
        self.lock = OwnerLock(self.paths.lock)
        self.started_at = datetime.now(UTC)
        self.stopping = threading.Event()
        self._memory: Memory | None = None
        self.operations = registry()
        self.worker = Worker(idle=lambda: self.idle.step())
        self.idle = IdleWork(lambda: self._memory, self.worker, self._record_uses, self.stop, self.stopping)
        self._delivery = threading.local()  # per connection thread: the uses of a hook answer not yet written
        self.fetcher = ModelFetcher(options.data_dir, DEFAULT_MODEL, self._model_arrived)
        self.idle.fetch_model = self.fetcher.start
        self.watcher = TranscriptWatcher(options.claude_home / "projects", self._changed)
        self.debouncer = Debouncer(self._ingest_paths, DEBOUNCE_SECONDS, options.live_settle)
        self._server: _SocketServer | None = None
        self._drain_queued = threading.Event()
        self.counters: dict[str, int] = {"requests": 0, "captures": 0, "files_ingested": 0, "events_ingested": 0}
        self.damaged: str | None = None  # set when the store turned out damaged while serving (status says so)

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            raise ServiceStopping()
        return self._memory

    # ------------------------------------------------------------------ lifecycle

    def run(self, ready: Callable[[], None] | None = None) -> None:
        """Serve until stopped (signal, ``shutdown`` request). Raises LockHeld if another service owns
        the directory, StoreError if the store cannot be opened."""
        self.lock.acquire()
        try:
            self._memory = self._open_memory()
            self.capturer, self.recaller = Capture(self._memory, self.options.claude_home), Recaller(self._memory)
            self.worker.start()
            for refused in socket_dir()[1] if self.paths.socket.parent != self.paths.data_dir else ():
                log.warning("%s belongs to another user or is not private; the socket is in %s instead.", refused,
                            self.paths.socket.parent)  # fmt: skip
            self._server = _SocketServer(self.paths.socket, self)
            threading.Thread(target=self._server.serve_forever, name="memory-socket", daemon=True).start()
            log.info("Memory service %s serving %s (pid %d).", __version__, self.paths.data_dir, os.getpid())
            if self.options.watch:
                self.debouncer.start()
            self.worker.submit(self._warm_up, BACKGROUND)
            self.request_drain()
            self._scan()
            if ready is not None:
                ready()
            while not self.stopping.wait(self._next_scan()):
                if not self.paths.lock.exists():
                    log.warning("The data directory %s is gone; stopping.", self.paths.data_dir)
                    break
                self.request_drain()
                self._scan()
        finally:
            self._shutdown()

    def _next_scan(self) -> float:
        """Seconds to the next scan: soon while Claude Code's projects directory is not there to watch."""
        waiting = self.options.watch and not self.watcher.running and not self.watcher.failed
        return min(self.options.scan_interval, 2.0) if waiting else self.options.scan_interval

    def stop(self) -> None:
        self.stopping.set()

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: self.stop())

    def _open_memory(self) -> Memory:
        """The store, waiting a while for a process that holds it. A damaged store is recorded, so that no
        client starts another service for it (each would fail the same way) until it is repaired."""
        deadline = time.monotonic() + OPEN_RETRY_SECONDS
        data_dir = str(self.paths.data_dir)
        while True:
            try:
                memory = Memory(self.paths.data_dir)
            except StoreBusyError:
                if time.monotonic() > deadline or self.stopping.is_set():
                    raise
                time.sleep(0.5)
            except StoreDamagedError as exc:
                locations.record_damaged(data_dir, str(exc))
                raise
            else:
                locations.clear_damaged(data_dir)
                memory.defer_checkpoints()  # (to the idle step's quiet moments: IdleWork)
                memory.tasks.background = True  # (a fold of the task calls from the start too)
                self.fetcher.name = memory.embedder.model_name  # the store's model (it may not be the default)
                return memory

    def _shutdown(self) -> None:
        log.info("Memory service stopping.")
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            with contextlib.suppress(OSError):
                self.paths.socket.unlink()
        self.watcher.stop()
        self.debouncer.stop()
        if self._memory is not None:
            memory = self._memory
            with contextlib.suppress(Exception):  # before any queued work: the index is saved even with a backlog
                self.worker.submit(lambda: self.idle.save_index(force=True), URGENT).result(timeout=60)
            with contextlib.suppress(Exception):
                self.worker.submit(self.idle.flush_uses, URGENT).result(timeout=60)
            if self.worker.stop():
                memory.close()
            else:  # the worker still uses the connection: let the process exit close it
                log.warning("The worker did not finish its task in time; exiting without closing the store.")
        if self._server is not None:
            self._server.hang_up()
        self.lock.release()
        log.info("Memory service stopped.")

    # ------------------------------------------------------------------ background work

    def _warm_up(self) -> None:
        """Load the model and the index now, so that the first prompt does not wait for them (~1 s)."""
        self.memory.warm_up()

    def _changed(self, path: Path) -> None:
        self.debouncer.touch(path)

    def _ingest_paths(self, paths: list[Path]) -> None:
        files = [f for f in (transcript_file(p) for p in paths if p.is_file()) if f is not None]
        if files:
            self.worker.submit(lambda: self._ingest(files), BACKGROUND)

    def _ingest(self, files: list[Any]) -> int:
        report = self.memory.import_files(files, settle_seconds=self.options.live_settle)
        self.counters["files_ingested"] += report.files_read
        self.counters["events_ingested"] += report.events_new
        if report.events_new > 0:
            self.idle.events_added()
        if report.events_new:
            log.info("Ingested %d new events from %d transcripts.", report.events_new, report.files_read)
        return report.events_new

    def _scan(self) -> None:
        """Catch up with every transcript (after downtime, or anything the watch missed), one task per
        file so requests get their turn in between."""
        if self.options.watch and not self.watcher.running:
            self.watcher.start()
        self.worker.submit(self._scan_now, BACKGROUND)

    def _scan_now(self) -> int:
        changed = self.memory.changed_transcripts(discover(self.options.claude_home).files)
        for f in changed:
            self.worker.submit(functools.partial(self._ingest, [f]), BACKGROUND)
        return len(changed)

    def request_drain(self) -> None:
        """Apply the hook spool soon (at most one drain is queued at a time)."""
        if self._drain_queued.is_set():
            return
        self._drain_queued.set()
        self.worker.submit(self._drain, BACKGROUND)

    def _drain(self) -> dict[str, int]:
        self._drain_queued.clear()
        report = drain(self.paths, self._apply_capture)
        if report.applied or report.rejected:
            log.info("Applied %d hook captures (%d lines rejected).", report.applied, report.rejected)
        return {"applied": report.applied, "rejected": report.rejected}

    def _apply_capture(self, payload: HookPayload) -> dict[str, Any]:
        result = self.capturer.apply(payload)
        self.counters["captures"] += 1
        self.counters["events_ingested"] += int(result["new_events"])
        if int(result["new_events"]) > 0:
            self.idle.events_added()
        return result

    def _record_uses(self, found: list[Use]) -> None:
        self.recaller.record_uses(found)

    # ------------------------------------------------------------------ requests

    def handle(self, request: Any, emit: Callable[[bytes], None] | None = None) -> dict[str, Any]:
        """One request object in, one response object out (never raises). ``emit`` writes a line to the
        client before the answer: progress reports, when the request asked for them."""
        req_id = request.get("id") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ValueError("A request is a JSON object with a string 'method'.")
            params = request.get("params") or {}
            if not isinstance(params, dict):
                raise ValueError("'params' must be a JSON object.")
            self.counters["requests"] += 1
            self.idle.saw_request()
            op = lookup(self.operations, request["method"], in_service=True)
            parsed = op.params.model_validate(params)
            progress: Progress = NoProgress()
            if op.progress and request.get("progress") is True and emit is not None:
                progress = _WireProgress(req_id, emit)
            if op.priority is Priority.CONNECTION:  # no store, or it queues its own parts
                result = op.run(self, parsed, progress)
            else:
                result = self._call(lambda: op.run(self, parsed, progress), op.priority)
            return {"id": req_id, "result": result}
        except Exception as exc:
            error = op_error(exc, self._internal_error(), self.paths.data_dir)
            if error.code == wire.DAMAGED and self.damaged is None:
                self.damaged = str(error)
                log.error("%s", error)
            if error.code in (wire.STORE, wire.INTERNAL):
                log.error("Request failed: %s", error, exc_info=exc)
            return {"id": req_id, "error": error.to_json()}

    def _internal_error(self) -> str:
        return f"The memory service failed; see {self.paths.log_dir / 'service.log'}."

    def _call(self, fn: Callable[[], Any], priority: int) -> Any:
        future: Future[Any] = self.worker.submit(fn, priority)
        return future.result()

    # ------------------------------------------------------------------ the engine's host side

    def host_status(self) -> dict[str, Any]:
        return {
            "service": {
                **identity(self),
                "uptime_seconds": round((datetime.now(UTC) - self.started_at).total_seconds(), 1),
                "queued_tasks": self.worker.pending(),
                "peak_rss_mb": peak_rss_mb(),
                **self.counters,
            },
            "watcher": {
                "root": str(self.watcher.root),
                "running": self.watcher.running,
                "error": self.watcher.error,
            },
            "spool": wire.spool_state(self.paths),
            "warnings": [*self.memory.warnings, *([self.damaged] if self.damaged else [])],
        }

    def hook(self, event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The hook client's one request: the hook output for a context event (None when there is
        nothing to inject); a capture is spooled here, in the connection's thread, so that it is kept
        even while the worker is busy, and applied by the worker soon after."""
        fields = {**payload, "hook_event_name": event}
        parsed = HookPayload.model_validate(fields)  # a payload the service could not use is refused now
        if event in wire.CONTEXT_EVENTS:  # what it injects counts as used once the answer reached the hook
            return hook_output(
                event, self._context(ContextParams(payload=parsed), on_delivery=True)["additional_context"]
            )
        wire.spool_capture(self.paths, fields)
        self.request_drain()
        return None

    def context(self, payload: dict[str, Any], budget: int, *, counted: bool = True) -> dict[str, Any]:
        return self._context(ContextParams(payload=HookPayload.model_validate(payload), budget=budget), counted=counted)

    def _context(self, params: ContextParams, *, on_delivery: bool = False, counted: bool = True) -> dict[str, Any]:
        started = time.perf_counter()
        answer: dict[str, Any] = self._call(lambda: self.recaller.context(params), INTERACTIVE)
        used = uses(answer, params.payload.session_id)
        if on_delivery:
            self._delivery.uses = used  # counted by delivered(), once the answer is written
        elif counted:
            self.idle.count_uses(used)
        log.info(
            "%s context: %d characters, %d citations, %.0f ms%s",
            params.payload.hook_event_name,
            len(answer["additional_context"]),
            len(answer["citations"]),
            (time.perf_counter() - started) * 1000,
            f" ({answer['reason']})" if answer.get("reason") else "",
        )
        return answer

    def delivered(self, written: bool) -> None:
        """The connection's thread wrote its answer (or failed to: the hook had given up waiting): what that answer
        injected counts as used only if it arrived. 50 hooks at once count exactly what they were given."""
        found, self._delivery.uses = getattr(self._delivery, "uses", None), None
        if written and found:
            self.idle.count_uses(found)

    def capture(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self._apply_capture(HookPayload.model_validate(payload))

    def drain(self) -> None:
        self.request_drain()

    def shutdown(self) -> None:
        self.stop()

    def import_history(
        self, claude_home: str | None, project: str | None, settle_seconds: float | None, progress: Progress
    ) -> dict[str, Any]:
        """Import Claude Code's history (or one project's) in parts of about IMPORT_PART_BYTES, one worker
        task each, so that hooks, searches and live capture are served in between; called in the
        connection's thread, which waits for the parts and adds their reports up. The service imports from
        the Claude home it watches, with its own settle time (it captures live, so a transcript quiet for a
        few seconds is finished for now)."""
        home = self.options.claude_home
        if claude_home is not None and _same_dir(Path(claude_home), home) is False:
            raise ValueError(
                f"The running memory service imports from {home}, not {claude_home}; stop it with "
                "`claude-memory stop` to import from there."
            )
        started = time.perf_counter()
        found = discover(home, project)
        parts = import_parts(found.files, IMPORT_PART_BYTES)
        progress.start("import", sum(size for _, size in parts))
        queued = [
            (self.worker.submit(functools.partial(self._import_part, files), LONG), size) for files, size in parts
        ]
        report = ImportReport(files_skipped=dict(found.skipped))
        for part, size in queued:
            report.merge(part.result())
            progress.advance(size)
        report.seconds = time.perf_counter() - started
        return report.to_json()

    def _import_part(self, files: list[TranscriptFile]) -> ImportReport:
        report = self.memory.import_files(files, settle_seconds=self.options.live_settle)
        self.idle.events_added()
        return report

    def wait_embedded(self, progress: Progress) -> int:
        """The service embeds in the background: wait for its queue to empty (or to stop moving); how many
        events left the queue meanwhile. Waits in the connection's thread, looking every EMBED_POLL."""
        self._await_model(progress)
        state = self._call(self.memory.embedding_status, INTERACTIVE)
        if not state["available"] or not state["pending"]:
            return 0
        pending, embedded, moved = int(state["pending"]), 0, time.monotonic()
        progress.start("embed", pending)
        while pending and time.monotonic() - moved < EMBED_STALL and not self.stopping.is_set():
            time.sleep(EMBED_POLL if embedded else EMBED_POLL / 4)
            now_pending = int(self._call(self.memory.embedding_status, INTERACTIVE)["pending"])
            if now_pending != pending:
                moved = time.monotonic()
            if now_pending < pending:
                embedded += pending - now_pending
                progress.advance(pending - now_pending)
            pending = now_pending
        return embedded

    def semantics_notes(self) -> list[str]:
        notes: list[str] = self._call(self.memory.warnings_for_semantics, INTERACTIVE)
        return self.fetcher.explain(notes)

    # ------------------------------------------------------------------ the embedding model

    def model_download(self) -> dict[str, Any]:
        return self.fetcher.status()

    def fetch_model(self, progress: Progress) -> dict[str, Any]:
        """Download the model now (in the connection's thread, which waits), then take it into use."""
        refusal = self._call(lambda: self.memory.embedder.fetch_refusal(), INTERACTIVE)
        if refusal:
            raise ValueError(refusal)
        self.fetcher.fetch(progress)
        self._call(self._take_model, INTERACTIVE)
        state: dict[str, Any] = self._call(self._model_state, INTERACTIVE)
        return state

    def switch_model(self, requested: str, name: str | None, progress: Progress) -> dict[str, Any]:
        """Resolved here (a download or the int8 copy may take a while), started by the worker; its idle steps do
        the rest while searches go on."""
        target = model_switch.resolve(self.memory, requested, name)
        self._call(lambda: self.memory.switch.start(target), INTERACTIVE)
        state: dict[str, Any] = self._call(self._model_state, INTERACTIVE)
        return state

    def cancel_switch(self) -> dict[str, Any]:
        self._call(self.memory.switch.cancel, INTERACTIVE)
        state: dict[str, Any] = self._call(self._model_state, INTERACTIVE)
        return state

    def _model_state(self) -> dict[str, Any]:
        return {**self.memory.model_status(), "download": self.fetcher.status()}

    def remove_model(self) -> dict[str, Any]:
        return remove_model(self.memory, self.fetcher)

    def _await_model(self, progress: Progress) -> None:
        """Before waiting for embeddings: a missing model is fetched (unless offline, or backing off)."""
        ready, fetchable = self._call(lambda: (self.memory.model_ready(), self.memory.embedder.fetchable), INTERACTIVE)
        if not ready and self.fetcher.ensure(fetchable, progress):
            self._call(self._take_model, INTERACTIVE)

    def _model_arrived(self) -> None:
        """The fetch thread's news: the worker takes the model in, then embeds the backlog."""
        self.worker.submit(self._take_model, BACKGROUND)

    def _take_model(self) -> None:
        memory = self.memory
        if not memory.model_ready():
            memory.model_changed()
            if memory.model_ready():
                log.info("Semantic search is on (%s).", memory.embedder.model_id)
        self.idle.embed_due = True


class _WireProgress:
    """Progress reports of one request, written to its connection before the answer."""

    def __init__(self, req_id: Any, emit: Callable[[bytes], None]) -> None:
        self.req_id = req_id
        self.emit = emit

    def start(self, what: str, total: int) -> None:
        self.emit(wire.progress_line(self.req_id, what, total=total))

    def advance(self, n: int) -> None:
        self.emit(wire.progress_line(self.req_id, "", advance=n))


def peak_rss_mb() -> int:
    """This process's peak resident memory: the kernel's high-water mark of its own pages (``getrusage`` starts a
    child's from its parent's at the fork, so a service started by a large process would report that one's)."""
    with contextlib.suppress(OSError, StopIteration, ValueError), open("/proc/self/status", encoding="ascii") as status:
        return round(int(next(line for line in status if line.startswith("VmHWM:")).split()[1]) / 1024)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _same_dir(a: Path, b: Path) -> bool | None:
    """Whether two paths name the same directory; None when that cannot be told."""
    try:
        return a.expanduser().resolve() == b.expanduser().resolve()
    except OSError:
        return None


def import_parts(files: list[TranscriptFile], part_bytes: int) -> list[tuple[list[TranscriptFile], int]]:
    """``files`` in order, cut into runs of about ``part_bytes`` (a file is never split), each with its size."""
    parts: list[tuple[list[TranscriptFile], int]] = []
    current: list[TranscriptFile] = []
    size = 0
    for f in files:
        try:
            length = f.path.stat().st_size
        except OSError:
            length = 0  # the import reports it unreadable
        if current and size + length > part_bytes:
            parts.append((current, size))
            current, size = [], 0
        current.append(f)
        size += length
    if current:
        parts.append((current, size))
    return parts


class _Handler(socketserver.StreamRequestHandler):
    server: _SocketServer

    def setup(self) -> None:
        super().setup()
        self.server.opened(self.connection)

    def finish(self) -> None:
        self.server.closed(self.connection)
        super().finish()

    def _write(self, line: bytes) -> None:
        self.wfile.write(line)
        self.wfile.flush()

    def handle(self) -> None:
        service = self.server.service
        while True:
            try:
                line = self.rfile.readline(wire.MAX_LINE)
            except OSError:
                return
            if not line:
                return
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except (ValueError, RecursionError):
                error = OpError(wire.BAD_REQUEST, "A request must be one JSON object on one line.")
                response: dict[str, Any] = {"id": None, "error": error.to_json()}
            else:
                response = service.handle(request, self._write)
            try:
                self._write(wire.dumps(response) + b"\n")
            except OSError:
                service.delivered(False)
                return
            service.delivered(True)


class _SocketServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, path: Path, service: MemoryService) -> None:
        self.service = service
        ensure_private_dir(path.parent)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a dead service's socket: we hold the lock, so no live service uses it
        old = os.umask(0o177)
        try:
            super().__init__(str(path), _Handler)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self._open: set[socket.socket] = set()  # client connections, for hang_up
        self._open_lock = threading.Lock()

    def opened(self, connection: socket.socket) -> None:
        with self._open_lock:
            self._open.add(connection)

    def closed(self, connection: socket.socket) -> None:
        with self._open_lock:
            self._open.discard(connection)

    def hang_up(self) -> None:
        """Shut every client connection still open. A client that then sends on one gets an error at once,
        and knows its request never arrived (``client.RequestNotSent``), instead of writing into a connection
        that lingers until this process exits and then reading nothing."""
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
