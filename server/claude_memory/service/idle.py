"""What the memory service does when its worker has nothing queued: fold new task calls into the task projection
(:mod:`claude_memory.service.tasks`) and new prompts into the insights (:mod:`claude_memory.service.insights`), run
the graduation worker every 5 minutes (:mod:`claude_memory.service.graduation`) and endless mode's consolidation
when due (:mod:`claude_memory.service.endless`), write DuckDB's log into the store's file when it has grown
(:meth:`Memory.checkpoint`), embed a small batch (then a batch of a model switch,
:mod:`claude_memory.service.model_switch`), save the vector index now and then and rebuild it in a new projection
when it is due one (built on a thread of its own), count the memories the hooks injected as used, hand back memory
it no longer needs every half minute, and stop once its own code changed on disk.

Runs in the worker thread (the worker's idle callback), except :meth:`IdleWork.count_uses` and
:meth:`IdleWork.saw_request`, which any thread may call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from claude_memory.core import graduation
from claude_memory.service.codeversion import CodeVersion
from claude_memory.service.embedding import EmbeddingWorker
from claude_memory.service.memory import Memory
from claude_memory.service.worker import Worker
from claude_memory.store import db
from claude_memory.store.learning import Use
from claude_memory.store.vector_index import Refit, VectorIndex

log = logging.getLogger("claude_memory.service")

# Events embedded per idle step: 8 (~0.3 s of model time) while clients are active, so a request waits
# at most about that long; 64 after a quiet second, when nobody is waiting and bigger batches go faster.
EMBED_BATCH = 8
EMBED_BATCH_QUIET = 64
QUIET_SECONDS = 1.0
# The embedding queue is only looked at when events may have been added to it (ingest, captures, import),
# and otherwise every this many seconds (retries after backoff): an idle service does not poll the store.
EMBED_RECHECK_SECONDS = 30.0
SAVE_INDEX_EVERY = 30.0  # seconds: while a quiet service embeds a backlog, the index is saved this often
# ... and once no request came for this long, rather than each time the embedding queue empties: at a million events a
# save writes ~1 GB (1-2 s), which the prompt after a turn would wait for. A crash loses nothing: the next load adds
# the vectors the store holds past the saved index.
SAVE_INDEX_QUIET_SECONDS = 30.0
RELEASE_EVERY = 30.0  # seconds: how often a quiet service hands back memory it no longer uses (Memory.release_memory)
# ... and DuckDB's part alone, busy or quiet: at 100k events the first 50 searches took the service from 403 to 506 MB,
# 85 of it DuckDB's (30 of cached blocks, the rest memory it had freed and kept), handed back in 13-27 ms; and a quiet
# service's idle steps (reading prompts, bringing search level, the writes of a turn) added 80-95 MB of cached blocks
# every 30 s, the service's peak (a duckdb_memory() query when under the bound)
RELEASE_CACHE_EVERY = 5.0
# DuckDB's log is written into the store (2.6 s at 100k events after vectors were added: store/db.py) only after this
# long without a request, so that a burst of hooks (a turn's prompt, tool calls, their captures) does not wait for it
CHECKPOINT_QUIET_SECONDS = 5.0
# ... and a smaller log too, once no request came for this long: DuckDB holds what the log holds in memory as well
# (after a first fold of the task calls at 100k events, 12 MB of log: the service settled at 465 MB instead of 434)
CHECKPOINT_IDLE_SECONDS = 30.0
REFIT_RETRY_SECONDS = 600.0  # after a refit of the vector index that failed or could not be adopted
# A service whose code changed on disk (an upgrade) stops, to be started anew on demand: it looks every this
# many seconds, and stops only when nothing is queued and no request came for as long.
UPGRADE_CHECK_SECONDS = 5.0
UPGRADE_QUIET_SECONDS = 5.0
CONSOLIDATION_CHECK_SECONDS = 60.0
IDLE_TASK_CALLS = 10  # task calls folded per quiet idle step when folding from the start (~50 ms at 1M events)
IDLE_STATEMENTS = 50  # prompts stating rules grouped per quiet idle step when grouping from the start (~8 ms at 1M)
IDLE_PROMPTS = 500  # prompts read for insights per quiet idle step ...
# ... and for no longer than this: a prompt's hook arriving mid-step waits for the rest of it (at a million events on a
# slow machine, 500 prompts took 0.2 s in process and up to 1 s in the service, whose first turns read a backlog of
# 200,000 in their quiet moments)
IDLE_PROMPT_SECONDS = 0.05
BUSY_PROMPTS = 20  # ... per idle step between requests


class IdleWork:
    def __init__(
        self,
        memory: Callable[[], Memory | None],
        worker: Worker,
        record_uses: Callable[[list[Use]], None],
        stop: Callable[[], None],
        stopping: threading.Event,
    ) -> None:
        self._memory = memory
        self._worker = worker
        self._record_uses = record_uses
        self._stop = stop
        self._stopping = stopping
        self._index_dirty_since: float | None = None
        self.embed_due = True  # events may be waiting for embedding (cleared when the queue is found empty)
        self.tasks_due = True  # task calls may have come: fold them into the task projection
        self._embed_checked = 0.0  # monotonic time the queue was last found empty
        # Citations injected by the context hooks, counted as used when the service is quiet: each write is a
        # commit (~5 ms), and the next hook should not start while the service is busy with it.
        self._uses_lock = threading.Lock()
        self._pending_uses: list[Use] = []
        self.code = CodeVersion()  # this package: its change on disk (an upgrade) stops the service
        self._code_checked = time.monotonic()
        self._last_request = 0.0  # monotonic time of the last request of any kind
        self._graduated = time.monotonic()  # the graduation worker's last pass (the first comes one period after start)
        self._consolidation_checked = 0.0  # endless mode's triggers, looked at every minute
        self._prompts_behind = False  # prompts are left to read for insights (a first import, a new extractor)
        self.fetch_model: Callable[[], object] | None = None  # starts a download of a missing model (the host's)
        self._refit: tuple[threading.Thread, VectorIndex, list[Refit]] | None = None  # a vector index being rebuilt
        self._refit_after = 0.0  # monotonic time before which no refit starts (one just failed)
        self._released = time.monotonic()  # when memory was last handed back
        self._cache_released = self._released  # when DuckDB's cache was last brought to its bound

    def events_added(self) -> None:
        """New events were stored (an import, a capture): embed them, and fold any task calls among them."""
        self.embed_due = self.tasks_due = True

    def saw_request(self) -> None:
        self._last_request = time.monotonic()

    def count_uses(self, found: list[Use]) -> None:
        with self._uses_lock:
            self._pending_uses.extend(found)

    def step(self) -> bool:
        """Embed one small batch (or start fetching a missing model); save the index now and then. True if there
        was work."""
        self._stop_if_upgraded()
        memory = self._memory()
        if memory is None:
            return False
        now = time.monotonic()
        quiet = now - self._worker.last_request > QUIET_SECONDS
        batch = EMBED_BATCH_QUIET if quiet else EMBED_BATCH
        replayed = False
        if self.tasks_due and not memory.read_only:
            # new events: fold their task calls into the board, read their prompts and let the ones stating rules join
            # the grouping, now rather than in the next SessionStart; a busy service only looks (a few prompts read)
            self.tasks_due = False
            self._fold_tasks(memory, IDLE_TASK_CALLS if quiet else 0)
            self._read_prompts(memory, IDLE_PROMPTS if quiet else BUSY_PROMPTS)
            if not self._prompts_behind:  # (grouped once they are all read)
                memory.insights.regroup(most=IDLE_STATEMENTS if quiet else 0)
            if memory.endless.refresh():  # and, in endless mode, the working set (its size may call for consolidation)
                self._consolidation_checked = 0.0
        elif quiet and not memory.read_only and (memory.tasks.behind or memory.insights.behind or self._prompts_behind):
            # a fold or a grouping from the start (a new service's first, which makes what later ones join; an import
            # of older history), or a backlog of prompts (a first import, a new extractor): a little per quiet step
            if memory.tasks.behind:
                replayed = self._fold_tasks(memory, IDLE_TASK_CALLS)
            if self._prompts_behind:
                self._read_prompts(memory, IDLE_PROMPTS)
                replayed = True
            if not self._prompts_behind:
                replayed = memory.insights.regroup(most=IDLE_STATEMENTS) or replayed
        if now - self._cache_released >= RELEASE_CACHE_EVERY:
            self._cache_released = now
            memory.release_memory(busy=True)
        if quiet and memory.level_search():  # events came: the next prompt's search should not read them in
            return True
        if not memory.read_only and now - self._consolidation_checked >= CONSOLIDATION_CHECK_SECONDS:
            self._consolidation_checked = now
            memory.endless.consolidate()  # when one of its triggers holds (endless mode only)
        if quiet and not memory.read_only and now - self._graduated >= graduation.INTERVAL_SECONDS:
            self.flush_uses()  # the uses counted so far, then the levels they earn
            self._graduated = now
            memory.graduation.run()
        if quiet:
            self.flush_uses()  # (before the model's turn: without a model the uses were written only every 5 minutes)
            if self._index_dirty_since is not None and now - self._worker.last_request > SAVE_INDEX_QUIET_SECONDS:
                self.save_index()
                return True
            settled = now - self._worker.last_request > CHECKPOINT_QUIET_SECONDS
            least = 1 if now - self._worker.last_request > CHECKPOINT_IDLE_SECONDS else db.QUIET_CHECKPOINT
            if settled and memory.checkpoint(least=least):
                self._released = now
                memory.release_memory()  # (what the checkpoint read)
                return True
            if now - self._released >= RELEASE_EVERY:
                self._released = now
                memory.release_memory()
        if not memory.model_ready():  # a download (on its own thread) brings it, unless not allowed
            if self.fetch_model is not None and memory.embedder.fetchable:
                self.fetch_model()
            return memory.switch.step(batch) or replayed  # (a switch may be what brings a model back)
        if self._refit_step(memory):
            return True
        if self.embed_due or now - self._embed_checked >= EMBED_RECHECK_SECONDS:
            index = memory.vector_index()
            done = EmbeddingWorker(memory.writer, memory.embedder, index).run(batch=batch, max_batches=1, save=False)
            if done:
                self._index_dirty_since = self._index_dirty_since or time.monotonic()
                if quiet and time.monotonic() - self._index_dirty_since > SAVE_INDEX_EVERY:
                    self.save_index(force=True)
                return True
            self.embed_due, self._embed_checked = False, time.monotonic()
        return memory.switch.step(batch) or replayed  # a change of model, once the queue is empty

    def _fold_tasks(self, memory: Memory, most: int) -> bool:
        """Fold new task calls into the task projection, a fold from the start ``most`` calls at a time. Before such
        a fold writes (at 100k events: 15,000 task events, 8,600 entities, +50 MB for half a second), memory is
        handed back: what DuckDB read for the fold, and the fold's leftovers. Its first read keeps DuckDB's cache to
        its bound."""
        if most and memory.tasks.writing_next:
            memory.release_memory()
        return memory.tasks.refresh(most=most, warm=True, bounded=True)

    def _read_prompts(self, memory: Memory, most: int) -> None:
        """Read up to ``most`` new prompts for insights, for no longer than ``IDLE_PROMPT_SECONDS``, keeping no more of
        DuckDB's cache than its bound (:meth:`Memory.bounded`): a backlog's reads (a first import's prompts) each
        brought 2-4 MB of blocks in, 50-90 MB between two hand-backs at 100k."""
        memory.bounded(lambda: memory.insights.refresh(most=most, until=time.monotonic() + IDLE_PROMPT_SECONDS))
        self._prompts_behind = memory.insights.unread

    def _refit_step(self, memory: Memory) -> bool:
        """Once the vector index is due a new projection (store.vector_index), build it on a thread of its own, the
        index serving and growing meanwhile; then adopt it here, on the thread that adds to the index. True when it
        adopted one."""
        if self._refit is not None:
            thread, building, result = self._refit
            if thread.is_alive():
                return False
            self._refit = None
            current = building is memory.vector_index()  # (not a model switch's since)
            adopted = bool(result) and current and building.adopt(result[0], memory.writer.con)
            if adopted:
                log.info("The vector index was rebuilt in a projection fitted on %d vectors.", result[0].live)
            else:
                self._refit_after = time.monotonic() + REFIT_RETRY_SECONDS
            return adopted
        index = memory.vector_index()
        if memory.read_only or time.monotonic() < self._refit_after or not index.refit_due():
            return False
        built: list[Refit] = []

        def build() -> None:
            try:
                refit = index.build_refit()
                if refit is not None:
                    built.append(refit)
            except Exception as exc:  # the copy unreadable, a full memory: the next check tries again
                log.warning("The vector index could not be rebuilt in a new projection (%s).", type(exc).__name__)

        thread = threading.Thread(target=build, name="vector-index-refit", daemon=True)
        self._refit = (thread, index, built)
        thread.start()
        return False

    def flush_uses(self) -> None:
        with self._uses_lock:
            uses, self._pending_uses = self._pending_uses, []
        if uses:
            self._record_uses(uses)

    def save_index(self, *, force: bool = False) -> None:
        memory = self._memory()
        if memory is None or (self._index_dirty_since is None and not force):
            return
        if self._index_dirty_since is not None:
            memory.vector_index().save()
        self._index_dirty_since = None

    def _stop_if_upgraded(self) -> None:
        """Stop (and so let the next request start the new code) once this package changed on disk, when
        nothing is queued and no request came for a while."""
        now = time.monotonic()
        if now - self._code_checked < UPGRADE_CHECK_SECONDS or self._stopping.is_set():
            return
        self._code_checked = now
        if now - self._last_request < UPGRADE_QUIET_SECONDS or self._worker.pending():
            return
        if self.code.changed():
            log.info(
                "The claude-memory code in %s changed on disk; stopping, so that the next request starts the new "
                "version.",
                self.code.root,
            )
            self._stop()
