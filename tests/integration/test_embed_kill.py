"""SIGKILL the real ``claude-memory import`` while it embeds; after restarts every event is embedded once.

The child is the real CLI with the real model (../shared/models) on the real fixture transcripts (tests/fixtures,
and a generated corpus), with its stderr on a pseudo-terminal so that it draws its own "Embedding n/total
events" progress bar: a kill is only sent once that bar is on screen, so it lands in the embedding phase,
and the store read after each kill proves it (the queue was partly drained by that run and is not empty).
The one change to the CLI is a smaller embedding batch (the product embeds 512 events per transaction; here
16, so that a run commits many batches and kills land before, between and after commits); the final
restart is the plain CLI.
"""

from __future__ import annotations

import json
import os
import pty
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb
import hnswlib
import numpy as np
import pytest

from claude_memory.core.chunks import MAX_CHUNKS, MAX_TOOL_CHUNKS, chunk_hash, chunk_text
from claude_memory.core.filters import EventFilters
from claude_memory.service.memory import Memory
from claude_memory.store.embedder import Embedder
from claude_memory.store.vector_index import INDEX_FILE, META_FILE
from support import own_fixtures

COMMITS_BEFORE_KILL = (0, 2, 1, 0, 3, 1)  # batches each killed run commits before its kill
MID_DRAIN_KILLS_REQUIRED = 3
BATCH = 16
# The fixture tree plus a generated corpus (bench/corpus.py) for enough text to embed that six kills land
# while embedding. With 250 events, all were embedded before the sixth kill once in CI (26d241b): since embedding
# got faster (1,000-character batches), the random pauses (up to 1.5 s a round) leave little margin; 600 leave room.
CORPUS_EVENTS = 600
LAUNCHER = (
    "import sys\n"
    "from claude_memory.service.embedding import EmbeddingWorker\n"
    f"EmbeddingWorker.run.__kwdefaults__['batch'] = {BATCH}\n"
    "from claude_memory.cli import main\n"
    "main(sys.argv[1:])\n"
)
PROGRESS = re.compile(r"(\d+)/(\d+) events")


def child_env(data: Path, model: Path) -> dict[str, str]:
    env = {**os.environ, "CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_MODEL_PATH": str(model)}
    env.update({"TERM": "xterm", "COLUMNS": "160", "LINES": "40"})
    env.pop("CLAUDE_CONFIG_DIR", None)
    return env


class Child:
    """``claude-memory import`` (small embedding batches) with stderr on a pseudo-terminal."""

    def __init__(self, home: Path, data: Path, model: Path) -> None:
        master, slave = pty.openpty()
        args = ["import", "--claude-home", str(home), "--settle-seconds", "0"]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, *args],
            env=child_env(data, model),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=slave,
        )
        os.close(slave)
        self.master = master
        self.screen = ""
        self.started = time.monotonic()
        self.ran = 0.0

    def pump(self, seconds: float) -> None:
        """Read the terminal for ``seconds`` (a child writing to a full terminal would block)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.master], [], [], min(left, 0.05))
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # the child closed its end
                    data = b""
                if not data:
                    time.sleep(min(left, 0.05))
                    if self.proc.poll() is not None:
                        return
                self.screen += data.decode("utf-8", "replace")
            elif self.proc.poll() is not None:
                return

    def embedded(self) -> int | None:
        """The last count the progress bar showed, None before the embedding phase."""
        if "Embedding" not in self.screen:
            return None
        counts = PROGRESS.findall(self.screen)
        return int(counts[-1][0]) if counts else 0

    def wait_for(self, ready: Any, timeout: float = 120) -> bool:
        """Pump until ``ready()`` or the child exits; True when ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return True
            if self.proc.poll() is not None:
                return False
            self.pump(0.05)
        raise AssertionError(f"child made no progress in {timeout} s:\n{self.screen[-2000:]}")

    def kill(self) -> int:
        self.proc.send_signal(signal.SIGKILL)
        code = self.proc.wait(timeout=60)
        self.ran = time.monotonic() - self.started
        self.close()
        return code

    def close(self) -> None:
        if self.proc.poll() is None:  # a failing test must not leave it running
            self.proc.kill()
            self.proc.wait(timeout=60)
        if self.master >= 0:
            os.close(self.master)
            self.master = -1


def store_state(data: Path) -> dict[str, int]:
    """Counts and invariants of a store no process holds (read-only: the WAL is replayed in memory)."""
    con = duckdb.connect(str(data / "memory.duckdb"), read_only=True)
    try:

        def one(sql: str) -> int:
            row = con.execute(sql).fetchone()
            assert row is not None
            return int(row[0])

        return {
            "events": one("SELECT count(*) FROM events"),
            "queued": one("SELECT count(*) FROM embed_queue"),
            "embedded_events": one("SELECT count(DISTINCT event_id) FROM chunks"),
            "chunks": one("SELECT count(*) FROM chunks"),
            # an event is either queued or has its chunks: never both, never neither
            "queued_and_embedded": one(
                "SELECT count(*) FROM embed_queue WHERE event_id IN (SELECT event_id FROM chunks)"
            ),
            "duplicate_chunks": one(
                "SELECT count(*) FROM (SELECT event_id, chunk_no FROM chunks GROUP BY ALL HAVING count(*) > 1)"
            ),
            "chunks_without_vector": one(
                "SELECT count(*) FROM chunks WHERE content_hash NOT IN (SELECT content_hash FROM vectors)"
            ),
            "vectors_without_chunk": one(
                "SELECT count(*) FROM vectors WHERE content_hash NOT IN (SELECT content_hash FROM chunks)"
            ),
            "labels_not_below_counter": one(
                "SELECT count(*) FROM chunks WHERE label >= (SELECT next_label FROM label_counter)"
            ),
            "failed_attempts": one("SELECT count(*) FROM embed_queue WHERE attempts > 0"),
        }
    finally:
        con.close()


def assert_consistent(state: dict[str, int]) -> None:
    assert state["queued"] + state["embedded_events"] == state["events"], state
    for key in ("queued_and_embedded", "duplicate_chunks", "chunks_without_vector", "vectors_without_chunk",
                "labels_not_below_counter", "failed_attempts"):  # fmt: skip
        assert state[key] == 0, (key, state)


@pytest.fixture()
def home(fixtures_home: Path, tmp_path: Path, corpus_module: ModuleType) -> Path:
    target = tmp_path / "claude"
    shutil.copytree(fixtures_home, target)
    corpus_module.generate(target, CORPUS_EVENTS, seed=5)
    return target


@pytest.mark.slow
def test_sigkill_while_embedding_then_restart_embeds_every_event_exactly_once(
    home: Path, tmp_path: Path, model_dir: Path
) -> None:
    data = tmp_path / "data"
    rng = random.Random(7)
    kills: list[dict[str, Any]] = []
    mid_drain = 0
    queued_before: int | None = None
    for round_no, commits in enumerate(COMMITS_BEFORE_KILL):
        child = Child(home, data, model_dir)
        try:
            if not child.wait_for(lambda c=child: c.embedded() is not None):
                pytest.fail(
                    f"the import ended before embedding (exit {child.proc.returncode}):\n{child.screen[-2000:]}"
                )
            # Let this run commit some batches first (0: kill it within its first batch, while the model
            # runs or at the commit), then kill it a random moment later: before, between or after commits.
            start = child.embedded() or 0
            child.wait_for(lambda c=child, n=start + commits * BATCH: (c.embedded() or 0) >= n)
            child.pump(rng.uniform(0.0, 1.5))
            code = child.kill()
        finally:
            child.close()
        assert code == -signal.SIGKILL, f"the import finished before kill #{round_no + 1}; the test needs more work"
        state = store_state(data)
        assert_consistent(state)
        drained = (state["events"] if queued_before is None else queued_before) - state["queued"]
        if drained > 0 and state["queued"] > 0:
            mid_drain += 1  # this run committed batches and was killed before the last one
        kills.append({"queued": state["queued"], "drained": drained, "seconds": round(child.ran, 1)})
        queued_before = state["queued"]
        assert state["queued"] > 0, "the queue was drained before the kill: it did not land while embedding"
    print(f"kills while embedding: {kills}")
    assert mid_drain >= MID_DRAIN_KILLS_REQUIRED, kills

    # Restart with the plain CLI: it drains what is left.
    env = child_env(data, model_dir)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "claude_memory",
            "import",
            "--claude-home",
            str(home),
            "--settle-seconds",
            "0",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["events"]["embedded"] == queued_before

    state = store_state(data)
    assert_consistent(state)
    assert state["queued"] == 0 and state["embedded_events"] == state["events"] > 0

    con = duckdb.connect(str(data / "memory.duckdb"), read_only=True)
    try:
        model_id = Embedder(model_dir).model_id
        expected: list[tuple[int, int, str]] = []
        for event_id, text, kind in con.execute("SELECT id, text, type FROM events").fetchall():
            pieces = chunk_text(text, MAX_TOOL_CHUNKS if kind == "tool_use" else MAX_CHUNKS)
            expected += [(int(event_id), no, chunk_hash(model_id, piece)) for no, piece in enumerate(pieces)]
        stored = con.execute("SELECT event_id, chunk_no, content_hash FROM chunks").fetchall()
        assert sorted(stored) == sorted(expected)  # every chunk of every event, once
        hashes = {h for _, _, h in expected}
        vector_rows = con.execute("SELECT content_hash, vector FROM vectors").fetchall()
        assert len(vector_rows) == len({h for h, _ in vector_rows}) == len(hashes)  # each text embedded once
        assert {h for h, _ in vector_rows} == hashes
        by_hash = {h: np.asarray(v, dtype=np.float32) for h, v in vector_rows}
        labels = dict(con.execute("SELECT label, content_hash FROM chunks").fetchall())
        next_label = con.execute("SELECT next_label FROM label_counter").fetchone()
    finally:
        con.close()

    # The hnswlib file holds exactly the live labels, each with its chunk's vector.
    meta = json.loads((data / META_FILE).read_text())
    assert meta["model_id"] == model_id and meta["deleted"] == 0 and meta["max_label"] == max(labels)
    assert next_label is not None and next_label[0] > max(labels)
    index = hnswlib.Index(space="cosine", dim=int(meta["dim"]))
    index.load_index(str(data / INDEX_FILE))
    assert index.get_current_count() == len(labels)
    assert sorted(index.get_ids_list()) == sorted(labels)
    order = sorted(labels)
    stored_vectors = np.asarray(index.get_items(order), dtype=np.float32)
    assert np.allclose(stored_vectors, np.stack([by_hash[labels[label]] for label in order]), atol=1e-5)

    with Memory(data) as memory:
        loaded = memory.vector_index()
        assert not loaded.rebuilt and loaded.live_count == len(labels)
        assert memory.embed_pending() == 0  # nothing left, nothing redone
        row = memory.con.execute(
            "SELECT id, text FROM events WHERE type = 'user_prompt' AND length(text) BETWEEN 60 AND 400 "
            "ORDER BY id LIMIT 1"
        ).fetchone()
        assert row is not None
        hits, meta_search = memory.search(row[1], EventFilters(), 5, mode="semantic")
        assert meta_search["mode"] == "semantic" and "degraded" not in meta_search
        assert hits and hits[0].event.text == row[1]
        hits, _ = memory.search("output a salutation", EventFilters(project=own_fixtures.WORK), 5, mode="semantic")
        assert hits and any(h.event.tool_name == "Bash" and "Print a greeting" in h.event.text for h in hits)
        hybrid, meta_search = memory.search(row[1], EventFilters(), 5)
        assert meta_search["mode"] == "hybrid" and row[0] in [h.event.id for h in hybrid]
