"""Live capture: watch Claude Code's projects directory and report transcripts that grew.

watchdog (inotify on Linux) reports each write; the :class:`Debouncer` turns bursts into one read per
file shortly after the burst, plus one more read once the file has been quiet for the live settle time,
when the turn's last assistant message can be taken as complete. A periodic full scan is the safety net
for anything a watch misses (a directory created before its watch was set, an overflowed event queue).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

log = logging.getLogger("claude_memory.service")

DEBOUNCE_SECONDS = 0.15


class Debouncer:
    """Collects changed paths and hands them to ``flush`` in batches, from its own thread."""

    def __init__(self, flush: Callable[[list[Path]], None], delay: float, settle: float) -> None:
        self._flush = flush
        self._delay = delay
        self._settle = settle
        self._due: dict[Path, float] = {}
        self._lock = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="memory-debounce", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._lock.notify()
        if self._thread.is_alive():
            self._thread.join(5)

    def touch(self, path: Path) -> None:
        now = time.monotonic()
        with self._lock:
            self._due[path] = now + self._delay
            self._lock.notify()

    def _loop(self) -> None:
        later: dict[Path, float] = {}  # second reads, after the file has settled
        while True:
            with self._lock:
                if self._stopping:
                    return
                now = time.monotonic()
                ready = [p for p, due in self._due.items() if due <= now]
                for p in ready:
                    del self._due[p]
                    later[p] = now + self._settle
                settled = [p for p, due in later.items() if due <= now and p not in self._due]
                for p in settled:
                    del later[p]
                waits = [due - now for due in (*self._due.values(), *later.values())]
                if not ready and not settled:
                    self._lock.wait(timeout=max(0.01, min(waits)) if waits else None)
                    continue
            try:
                self._flush(sorted(set(ready) | set(settled)))
            except Exception:
                log.exception("Reading changed transcripts failed; the next scan retries.")


class _Handler(FileSystemEventHandler):
    def __init__(self, on_change: Callable[[Path], None]) -> None:
        self._on_change = on_change

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in ("created", "modified", "moved", "closed"):
            return
        target = getattr(event, "dest_path", "") or event.src_path
        path = Path(target if isinstance(target, str) else target.decode())
        if path.suffix == ".jsonl" and not event.is_directory:
            self._on_change(path)


class TranscriptWatcher:
    """Watches ``root`` (Claude Code's projects directory) recursively, once it exists."""

    def __init__(self, root: Path, on_change: Callable[[Path], None]) -> None:
        self.root = root
        self._observer: BaseObserver | None = None
        self._handler = _Handler(on_change)
        self.error: str | None = None
        self.failed = False  # the directory exists but cannot be watched: the periodic scan still runs

    def start(self) -> bool:
        if self.running:
            return True
        if not self.root.is_dir():
            self.error = f"{self.root} does not exist yet; it is checked again at every scan."
            return False
        observer = None
        try:
            observer = Observer()  # an observer thread cannot be started twice: a new one each time
            observer.schedule(self._handler, str(self.root), recursive=True)
            observer.start()
        except OSError as exc:
            if observer is not None:
                observer.stop()  # frees its inotify descriptor and pipe even when it never started
            self.error = f"Cannot watch {self.root} for new transcripts: {exc.strerror or exc}."
            log.warning(self.error)
            self.failed = True
            return False
        self._observer = observer
        self.failed = False
        self.error = None
        return True

    @property
    def running(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def stop(self) -> None:
        if self._observer is not None and self._observer.is_alive():
            self._observer.stop()
            self._observer.join(5)
