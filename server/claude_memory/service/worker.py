"""The service's one worker thread: every use of the store runs here, one task at a time.

DuckDB allows one connection per file per process and the store objects are not thread-safe, so the
socket threads, the transcript watcher and the spool drain hand their work to this thread. Requests
from clients (priority 0) go before background work (ingest 1, long jobs 2); while nothing is queued the
worker runs an idle step (embedding one batch) so searches never wait long behind it.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

URGENT = -1  # shutdown's index save: before anything queued
INTERACTIVE = 0
BACKGROUND = 1
LONG = 2

log = logging.getLogger("claude_memory.service")


class ServiceStopping(RuntimeError):
    def __init__(self) -> None:
        super().__init__("The memory service is shutting down.")


@dataclass(order=True)
class _Task:
    priority: int
    seq: int
    fn: Callable[[], Any] = field(compare=False)
    future: Future[Any] = field(compare=False)


class Worker:
    def __init__(self, idle: Callable[[], bool] | None = None, idle_wait: float = 0.2) -> None:
        """``idle()`` runs when the queue is empty; it returns True if it did some work (then it is
        called again at once), False to wait ``idle_wait`` seconds for a task."""
        self._queue: queue.PriorityQueue[_Task] = queue.PriorityQueue()
        self._seq = itertools.count()
        self._idle = idle
        self._idle_wait = idle_wait
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memory-worker", daemon=True)
        self.last_request = 0.0  # monotonic time of the last client request

    def start(self) -> None:
        self._thread.start()

    def submit(self, fn: Callable[[], Any], priority: int = INTERACTIVE) -> Future[Any]:
        future: Future[Any] = Future()
        if priority == INTERACTIVE:
            self.last_request = time.monotonic()
        if self._stopping.is_set() and priority != URGENT:
            future.set_exception(ServiceStopping())
            return future
        self._queue.put(_Task(priority, next(self._seq), fn, future))
        return future

    def pending(self) -> int:
        return self._queue.qsize()

    def stop(self, timeout: float = 30.0) -> bool:
        """Finish the task in hand, fail the queued ones, and end the thread. False if it is still busy."""
        self._stopping.set()
        self._queue.put(_Task(URGENT - 1, -1, lambda: None, Future()))  # wake the loop
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop(self) -> None:
        idle_did_work = False
        while True:
            try:
                task = self._queue.get(timeout=0 if idle_did_work else self._idle_wait)
            except queue.Empty:
                idle_did_work = self._run_idle()
                continue
            if self._stopping.is_set() and task.seq < 0:  # the wake-up: fail what is still queued
                self._fail_queued(task)
                return
            idle_did_work = True  # look at the queue again at once, then carry on with background work
            if not task.future.set_running_or_notify_cancel():
                continue
            try:
                task.future.set_result(task.fn())
            except BaseException as exc:  # handed to the caller, who reports it
                if task.priority > INTERACTIVE:  # nobody waits on background work: say it here
                    log.error("Background task failed", exc_info=exc)
                task.future.set_exception(exc)

    def _run_idle(self) -> bool:
        if self._idle is None or self._stopping.is_set():
            return False
        try:
            return self._idle()
        except Exception:  # background work must never kill the worker
            log.exception("Background work failed; it will be retried.")
            return False

    def _fail_queued(self, first: _Task) -> None:
        error = ServiceStopping()
        task: _Task | None = first
        while task is not None:
            if task.seq >= 0 and task.future.set_running_or_notify_cancel():
                task.future.set_exception(error)
            try:
                task = self._queue.get_nowait()
            except queue.Empty:
                task = None
