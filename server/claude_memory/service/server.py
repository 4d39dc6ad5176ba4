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
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from claude_memory import __version__
from claude_memory.client import MAX_LINE, PROTOCOL_VERSION, spool_capture
from claude_memory.core.paths import RuntimePaths, ensure_private_dir
from claude_memory.hookclient import CONTEXT_EVENTS
from claude_memory.service import api
from claude_memory.service.capture import Capture, HookPayload
from claude_memory.service.codeversion import CodeVersion
from claude_memory.service.discovery import TranscriptFile, discover, transcript_file
from claude_memory.service.embedding import EmbeddingWorker
from claude_memory.service.importer import ImportReport
from claude_memory.service.lock import OwnerLock
from claude_memory.service.memory import Memory
from claude_memory.service.projects import normalise_project_arg
from claude_memory.service.recall import ContextParams, Recaller
from claude_memory.service.spool import drain, spool_state
from claude_memory.service.watcher import DEBOUNCE_SECONDS, Debouncer, TranscriptWatcher
from claude_memory.service.worker import BACKGROUND, INTERACTIVE, LONG, URGENT, ServiceStopping, Worker
from claude_memory.store.db import StoreBusyError, StoreError
from claude_memory.store.keyword import KeywordFilters

log = logging.getLogger("claude_memory.service")

# Events embedded per idle step: 8 (~0.3 s of model time) while clients are active, so a request waits
# at most about that long; 64 after a quiet second, when nobody is waiting and bigger batches go faster.
EMBED_BATCH = 8
EMBED_BATCH_QUIET = 64
QUIET_SECONDS = 1.0
# The embedding queue is only looked at when events may have been added to it (ingest, captures, import),
# and otherwise every this many seconds (retries after backoff): an idle service does not poll the store.
EMBED_RECHECK_SECONDS = 30.0
IMPORT_PART_BYTES = 4 << 20  # transcript bytes per import task (~0.5 s of work): requests run in between
SAVE_INDEX_EVERY = 30.0  # seconds: the index file is rebuilt from the store if a crash loses it
OPEN_RETRY_SECONDS = 60.0  # a CLI run may hold the store for a moment when the service starts
# A service whose code changed on disk (an upgrade) stops, to be started anew on demand: it looks every this
# many seconds, and stops only when nothing is queued and no request came for as long.
UPGRADE_CHECK_SECONDS = 5.0
UPGRADE_QUIET_SECONDS = 5.0


@dataclass
class ServiceOptions:
    data_dir: Path
    claude_home: Path
    watch: bool = True
    scan_interval: float = 30.0
    live_settle: float = 2.0


class _ImportParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    project: str | None = None


class _HookParams(BaseModel):
    """The hook client's request: the event name and Claude Code's payload, as it came."""

    model_config = ConfigDict(extra="forbid")
    event: str = Field(min_length=1, max_length=100)
    payload: dict[str, Any]


class MemoryService:
    def __init__(self, options: ServiceOptions) -> None:
        self.options = options
        self.paths = RuntimePaths(options.data_dir)
        self.lock = OwnerLock(self.paths.lock)
        self.started_at = datetime.now(UTC)
        self.stopping = threading.Event()
        self.memory: Memory | None = None
        self.worker = Worker(idle=self._idle)
        self.watcher = TranscriptWatcher(options.claude_home / "projects", self._changed)
        self.debouncer = Debouncer(self._ingest_paths, DEBOUNCE_SECONDS, options.live_settle)
        self._server: _SocketServer | None = None
        self._drain_queued = threading.Event()
        self._index_dirty_since: float | None = None
        self._embed_due = True  # events may be waiting for embedding (cleared when the queue is found empty)
        self._embed_checked = 0.0  # monotonic time the queue was last found empty
        # Citations injected by the context hooks, counted as used when the service is quiet: each write is a
        # commit (~5 ms), and the next hook should not start while the service is busy with it.
        self._uses_lock = threading.Lock()
        self._pending_uses: list[str] = []
        self.counters: dict[str, int] = {"requests": 0, "captures": 0, "files_ingested": 0, "events_ingested": 0}
        self.code = CodeVersion()  # this package: its change on disk (an upgrade) stops the service
        self._code_checked = time.monotonic()
        self._last_request = 0.0  # monotonic time of the last request of any kind

    # ------------------------------------------------------------------ lifecycle

    def run(self, ready: Callable[[], None] | None = None) -> None:
        """Serve until stopped (signal, ``shutdown`` request). Raises LockHeld if another service owns
        the directory, StoreError if the store cannot be opened."""
        self.lock.acquire()
        try:
            self.memory = self._open_memory()
            self.capture, self.recaller = Capture(self.memory), Recaller(self.memory)
            self.worker.start()
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
        deadline = time.monotonic() + OPEN_RETRY_SECONDS
        while True:
            try:
                return Memory(self.paths.data_dir)
            except StoreBusyError:
                if time.monotonic() > deadline or self.stopping.is_set():
                    raise
                time.sleep(0.5)

    def _shutdown(self) -> None:
        log.info("Memory service stopping.")
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            with contextlib.suppress(OSError):
                self.paths.socket.unlink()
        self.watcher.stop()
        self.debouncer.stop()
        if self.memory is not None:
            memory = self.memory
            with contextlib.suppress(Exception):  # before any queued work: the index is saved even with a backlog
                self.worker.submit(lambda: self._save_index(force=True), URGENT).result(timeout=60)
            with contextlib.suppress(Exception):
                self.worker.submit(self._flush_uses, URGENT).result(timeout=60)
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
        assert self.memory is not None
        self.memory.search("warm up", KeywordFilters(), 1)

    def _changed(self, path: Path) -> None:
        self.debouncer.touch(path)

    def _ingest_paths(self, paths: list[Path]) -> None:
        files = [f for f in (transcript_file(p) for p in paths if p.is_file()) if f is not None]
        if files:
            self.worker.submit(lambda: self._ingest(files), BACKGROUND)

    def _ingest(self, files: list[Any]) -> int:
        assert self.memory is not None
        report = self.memory.import_files(files, settle_seconds=self.options.live_settle)
        self.counters["files_ingested"] += report.files_read
        self.counters["events_ingested"] += report.events_new
        self._embed_due = self._embed_due or report.events_new > 0
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
        assert self.memory is not None
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
        result = self.capture.apply(payload)
        self.counters["captures"] += 1
        self.counters["events_ingested"] += int(result["new_events"])
        self._embed_due = self._embed_due or int(result["new_events"]) > 0
        return result

    def _stop_if_upgraded(self) -> None:
        """Stop (and so let the next request start the new code) once this package changed on disk, when
        nothing is queued and no request came for a while."""
        now = time.monotonic()
        if now - self._code_checked < UPGRADE_CHECK_SECONDS or self.stopping.is_set():
            return
        self._code_checked = now
        if now - self._last_request < UPGRADE_QUIET_SECONDS or self.worker.pending():
            return
        if self.code.changed():
            log.info(
                "The claude-memory code in %s changed on disk; stopping, so that the next request starts the new "
                "version.",
                self.code.root,
            )
            self.stop()

    def _idle(self) -> bool:
        """Embed one small batch; save the index now and then. True if there was work."""
        self._stop_if_upgraded()
        memory = self.memory
        if memory is None or not memory.embedder.available:
            return False
        now = time.monotonic()
        quiet = now - self.worker.last_request > QUIET_SECONDS
        if quiet:
            self._flush_uses()
        if not self._embed_due and now - self._embed_checked < EMBED_RECHECK_SECONDS:
            return False
        batch = EMBED_BATCH_QUIET if quiet else EMBED_BATCH
        index = memory.vector_index()
        done = EmbeddingWorker(memory.writer, memory.embedder, index).run(batch=batch, max_batches=1, save=False)
        if done:
            self._index_dirty_since = self._index_dirty_since or time.monotonic()
            if time.monotonic() - self._index_dirty_since > SAVE_INDEX_EVERY:
                self._save_index(force=True)
            return True
        self._embed_due, self._embed_checked = False, time.monotonic()
        self._save_index()
        return False

    def _flush_uses(self) -> None:
        with self._uses_lock:
            uses, self._pending_uses = self._pending_uses, []
        if uses:
            self.recaller.record_uses(uses)

    def _save_index(self, *, force: bool = False) -> None:
        if self.memory is None or (self._index_dirty_since is None and not force):
            return
        if self._index_dirty_since is not None:
            self.memory.vector_index().save()
        self._index_dirty_since = None

    # ------------------------------------------------------------------ requests

    def handle(self, request: Any) -> dict[str, Any]:
        """One request object in, one response object out (never raises)."""
        req_id = request.get("id") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ValueError("A request is a JSON object with a string 'method'.")
            params = request.get("params") or {}
            if not isinstance(params, dict):
                raise ValueError("'params' must be a JSON object.")
            self.counters["requests"] += 1
            self._last_request = time.monotonic()
            return {"id": req_id, "result": self._dispatch(request["method"], params)}
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err.get("loc", ()))
            return _error(req_id, "bad_request", f"Invalid parameter {where or 'params'}: {err['msg']}.")
        except api.NotFound as exc:
            return _error(req_id, "not_found", str(exc))
        except ValueError as exc:
            return _error(req_id, "bad_request", str(exc))
        except ServiceStopping as exc:
            return _error(req_id, "unavailable", str(exc))
        except (StoreError, duckdb.Error) as exc:
            log.exception("Store error")
            first = str(exc).splitlines()[0].rstrip(".") if str(exc) else type(exc).__name__
            return _error(req_id, "store", f"The memory store failed: {first}.")
        except Exception:
            log.exception("Request failed")
            return _error(req_id, "internal", f"The memory service failed; see {self.paths.log_dir / 'service.log'}.")

    def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "ping":
            return self._ping()
        if method == "drain":
            self.request_drain()
            return {"scheduled": True}
        if method == "shutdown":
            self.stop()
            return {"stopping": True}
        if method == "status":
            return self._call(self._status, INTERACTIVE)
        if method == "hook":
            return self._hook(_HookParams.model_validate(params))
        if method == "context":
            return self._context(ContextParams.model_validate(params))
        if method == "capture":
            payload = HookPayload.model_validate(params.get("payload"))
            return self._call(lambda: self._apply_capture(payload), INTERACTIVE)
        if method == "import":
            p = _ImportParams.model_validate(params)
            return self._import_all(p.project)  # here: it queues its parts and waits for them
        handler = api.HANDLERS.get(method)
        if handler is None:
            raise ValueError(f"Unknown method {method!r}.")
        parsed = handler.params.model_validate(params)
        memory = self.memory
        assert memory is not None
        return self._call(lambda: handler.run(memory, parsed), LONG if method == "reindex" else INTERACTIVE)

    def _hook(self, params: _HookParams) -> dict[str, Any] | None:
        """The hook client's one request: the hook output for a context event (None when there is
        nothing to inject); a capture is spooled here, in the connection's thread, so that it is kept
        even while the worker is busy, and applied by the worker soon after."""
        fields = {**params.payload, "hook_event_name": params.event}
        payload = HookPayload.model_validate(fields)
        if params.event in CONTEXT_EVENTS:
            text = self._context(ContextParams(payload=payload))["additional_context"]
            if not text:
                return None
            return {"hookSpecificOutput": {"hookEventName": params.event, "additionalContext": text}}
        spool_capture(self.paths, fields)
        self.request_drain()
        return None

    def _context(self, context: ContextParams) -> dict[str, Any]:
        started = time.perf_counter()
        answer: dict[str, Any] = self._call(lambda: self.recaller.context(context), INTERACTIVE)
        with self._uses_lock:
            self._pending_uses.extend(answer["citations"])
        log.info(
            "%s context: %d characters, %d citations, %.0f ms%s",
            context.payload.hook_event_name,
            len(answer["additional_context"]),
            len(answer["citations"]),
            (time.perf_counter() - started) * 1000,
            f" ({answer['reason']})" if answer.get("reason") else "",
        )
        return answer

    def _call(self, fn: Callable[[], Any], priority: int) -> Any:
        future: Future[Any] = self.worker.submit(fn, priority)
        return future.result()

    def _ping(self) -> dict[str, Any]:
        return {
            "service": "claude-memory",
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "data_dir": str(self.paths.data_dir),
            "started_at": self.started_at.isoformat(timespec="seconds"),
        }

    def _import_all(self, project: str | None) -> dict[str, Any]:
        """Import Claude Code's history (or one project's) in parts of about IMPORT_PART_BYTES, one worker
        task each, so that hooks, searches and live capture are served in between; called in the
        connection's thread, which waits for the parts and adds their reports up."""
        started = time.perf_counter()
        found = discover(self.options.claude_home, normalise_project_arg(project) if project else None)
        parts = [
            self.worker.submit(functools.partial(self._import_part, files), LONG)
            for files in import_parts(found.files, IMPORT_PART_BYTES)
        ]
        report = ImportReport(files_skipped=dict(found.skipped))
        for part in parts:
            report.merge(part.result())
        report.seconds = time.perf_counter() - started
        return report.to_json()

    def _import_part(self, files: list[TranscriptFile]) -> ImportReport:
        assert self.memory is not None
        report = self.memory.import_files(files, settle_seconds=self.options.live_settle)
        self._embed_due = True
        return report

    def _status(self) -> dict[str, Any]:
        assert self.memory is not None
        return {
            "service": {
                **self._ping(),
                "uptime_seconds": round((datetime.now(UTC) - self.started_at).total_seconds(), 1),
                "queued_tasks": self.worker.pending(),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                **self.counters,
            },
            "watcher": {
                "root": str(self.watcher.root),
                "running": self.watcher.running,
                "error": self.watcher.error,
            },
            "spool": spool_state(self.paths),
            "store": {"events": self.memory.stats()["events"]},
            "embedding": self.memory.embedding_status(),
            "warnings": list(self.memory.warnings),
        }


def import_parts(files: list[TranscriptFile], part_bytes: int) -> list[list[TranscriptFile]]:
    """``files`` in order, cut into runs of about ``part_bytes`` (a file is never split)."""
    parts: list[list[TranscriptFile]] = []
    current: list[TranscriptFile] = []
    size = 0
    for f in files:
        try:
            length = f.path.stat().st_size
        except OSError:
            length = 0  # the import reports it unreadable
        if current and size + length > part_bytes:
            parts.append(current)
            current, size = [], 0
        current.append(f)
        size += length
    if current:
        parts.append(current)
    return parts


def _error(req_id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": req_id, "error": {"code": code, "message": message}}


class _Handler(socketserver.StreamRequestHandler):
    server: _SocketServer

    def setup(self) -> None:
        super().setup()
        self.server.opened(self.connection)

    def finish(self) -> None:
        self.server.closed(self.connection)
        super().finish()

    def handle(self) -> None:
        service = self.server.service
        while True:
            try:
                line = self.rfile.readline(MAX_LINE)
            except OSError:
                return
            if not line:
                return
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError:
                response = _error(None, "bad_request", "A request must be one JSON object on one line.")
            else:
                response = service.handle(request)
            payload = json.dumps(response, ensure_ascii=False, separators=(",", ":"), default=str)
            try:
                self.wfile.write(payload.encode("utf-8") + b"\n")
                self.wfile.flush()
            except OSError:
                return


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
