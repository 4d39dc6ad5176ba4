"""Fetching the managed embedding model (:mod:`claude_memory.store.model_files`) on a thread of its own, so the
store keeps answering (keyword search) meanwhile; failed attempts are retried with backoff, and the state is
what ``status`` and ``model status`` show: ``{state, bytes, total, error, attempts, retry_in}``.

The memory service starts a fetch when the model is first needed and missing; ``model fetch`` and ``import``
start one and wait for it, with progress in bytes. The fetch touches no store: ``on_ready`` (the host's) tells
the store's owner that the model is there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from claude_memory.store import model_files
from claude_memory.store.model_files import ModelFetchError

if TYPE_CHECKING:
    from claude_memory.service.memory import Memory
    from claude_memory.wire import Progress

log = logging.getLogger("claude_memory.service")

BACKOFF_SECONDS: Final = 30.0  # after the first failure; doubled after each next one
BACKOFF_MAX_SECONDS: Final = 3600.0
POLL_SECONDS: Final = 0.25  # how often a waiting caller's progress is brought up to date


class ModelFetcher:
    def __init__(self, data_dir: Path, name: str, on_ready: Callable[[], None]) -> None:
        self.data_dir = data_dir
        self.name = name
        self._on_ready = on_ready
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.state = "idle"  # idle | downloading | ready | failed | removed
        self.error: str | None = None
        self.attempts = 0
        self._next_try = 0.0  # monotonic time before which a failed fetch is not started again on its own

    def status(self) -> dict[str, Any]:
        retry_in = max(0.0, self._next_try - time.monotonic()) if self.state == "failed" else None
        downloading = self.state == "downloading"
        return {
            "state": self.state,
            "bytes": model_files.staged_bytes(self.data_dir) if downloading else None,
            "total": _expected(self.name) if downloading else None,
            "error": self.error,
            "attempts": self.attempts,
            "retry_in": round(retry_in) if retry_in is not None else None,
        }

    def start(self, *, now: bool = False) -> bool:
        """Start a fetch unless one runs; unless ``now``, not after one succeeded or the model was removed, and a
        failed one waits out its backoff. True if one runs."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return True
            backing_off = self.state == "failed" and time.monotonic() < self._next_try
            if not now and (self.state in ("ready", "removed") or backing_off):
                return False  # (ready: fetched once; a model that then does not load is not fetched again and again)
            self.state, self.error = "downloading", None
            self._thread = threading.Thread(target=self._run, name="model-fetch", daemon=True)
            self._thread.start()
            return True

    def wait(self, progress: Progress, timeout: float | None = None) -> None:
        """Until the running fetch ends, with progress in bytes; raises its failure (one sentence)."""
        thread = self._thread
        if thread is None:
            return
        progress.start("download", _expected(self.name))
        shown, deadline = 0, None if timeout is None else time.monotonic() + timeout
        while thread.is_alive() and (deadline is None or time.monotonic() < deadline):
            thread.join(POLL_SECONDS)
            done = model_files.staged_bytes(self.data_dir)
            if done > shown:
                progress.advance(done - shown)
                shown = done
        if self.state == "failed":
            raise ModelFetchError(self.error or f"The embedding model {self.name} could not be downloaded.")

    def explain(self, notes: list[str]) -> list[str]:
        """A host's notes on why semantic search is off, with the last failed download's sentence instead when
        there was one (it says more than "not downloaded yet")."""
        return [self.error] if notes and self.error else notes

    def hold(self) -> None:
        """The model was removed on purpose: no fetch starts on its own until one is asked for."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self.state, self.error = "removed", None

    def ensure(self, fetchable: bool, progress: Progress) -> bool:
        """For a caller that needs the model now (``import``): start a fetch when allowed and not backing off
        after a failure, and wait for it. True when the model arrived (False: ``error`` says why, if it failed)."""
        if not fetchable or not self.start():
            return False
        try:
            self.wait(progress)
        except ModelFetchError:
            return False
        return True

    def fetch(self, progress: Progress) -> None:
        """Fetch now (even during a backoff) and wait for it."""
        self.start(now=True)
        self.wait(progress)

    def _run(self) -> None:
        log.info("Downloading the embedding model %s.", self.name)
        started = time.monotonic()
        try:
            folder = model_files.fetch(self.data_dir, self.name)
        except ModelFetchError as exc:
            self._failed(str(exc))
            return
        except Exception as exc:  # never a traceback for the user: one sentence, the trace in the service log
            log.info("The model download failed.", exc_info=True)
            self._failed(f"The embedding model {self.name} could not be downloaded ({type(exc).__name__}).")
            return
        log.info("Downloaded the embedding model to %s in %.1f s.", folder, time.monotonic() - started)
        self.state, self.attempts = "ready", 0
        try:
            self._on_ready()
        except Exception:  # the host could not take it in now: it finds the model at its next look
            log.exception("The downloaded model could not be taken into use.")

    def _failed(self, sentence: str) -> None:
        self.attempts += 1
        backoff = min(BACKOFF_MAX_SECONDS, BACKOFF_SECONDS * 2 ** (self.attempts - 1))
        self._next_try = time.monotonic() + backoff
        self.state, self.error = "failed", sentence
        log.info("%s Next try in %d s.", sentence, backoff)  # (info: a CLI's fetch says it once, on its own)


def _expected(name: str) -> int:
    try:
        return model_files.expected_bytes(name)
    except ValueError:
        return 0


def remove_model(memory: Memory, fetcher: ModelFetcher) -> dict[str, Any]:
    """Delete the managed copy of the model (``model_remove``); the store's vectors stay."""
    name = memory.embedder.model_name
    removed = model_files.remove(memory.data_dir, name)
    fetcher.hold()
    if removed:
        memory.model_changed()
        note = (
            f"Deleted the downloaded {name}; semantic search is off until a model is there again "
            "('claude-memory model fetch' downloads it again)."
        )
    else:
        note = f"No downloaded copy of {name} was there to delete."
    return {"removed": removed, "managed": str(model_files.models_dir(memory.data_dir)), "note": note}
