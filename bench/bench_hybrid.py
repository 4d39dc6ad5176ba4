"""Hybrid search latency at 100,000 events, with keyword and semantic alongside for comparison.

    export CLAUDE_MEMORY_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-onnx
    .venv/bin/python bench/bench_import.py --keep                  # bench/out/store-100000-seed1, once
    nice -n 19 .venv/bin/python bench/bench_hybrid.py --build-only # embeds a copy of it, once (1-2 h on 2 cores)
    .venv/bin/python bench/bench_hybrid.py [--queries 300]
    .venv/bin/python bench/bench_hybrid.py --store bench/out/dev-eval/longmemeval-dev/store  # any embedded store
    nice -n 19 .venv/bin/python bench/bench_hybrid.py --int8 --build-only  # ...-embedded-int8: the default model

``--int8`` builds and measures bench/out/store-N-seedS-embedded-int8 instead, embedded with the int8 copy a new
install makes of the model (``model_files.make_int8`` from ../shared's float32 model, into bench/out/int8-data).

The embedded store (bench/out/store-100000-seed1-embedded) is a copy of bench_import.py's keyword
store with every event embedded by the product's own pipeline (``Memory.embed_pending``: queue ->
chunks -> model -> DuckDB -> hnswlib). The build is resumable: killed, it carries on where it stopped;
it prints an estimate after the first ~1,000 events and its progress every 30 s on stderr.

Measured: ``Memory.search(query, filters, limit=10, mode=...)`` on a warm connection, warm-up queries
excluded. Queries: bench_search.py's 1-3 corpus words (half scoped to a project), plus as many
phrases of 4-9 consecutive words taken from stored events (half scoped), each query in all three modes
in turns. The breakdown times the parts ``search`` calls (query embedding, which runs on a worker thread
while the caller refreshes the event map and the in-memory postings, runs BM25 and gathers the keyword hits'
facts; the caller's wait for that thread; hnswlib and the label-to-event mapping, exact cosines of the
other candidates, ranking facts, fusion, hydration) by wrapping them at run time; the search code itself
is not changed, and parts it no longer has are skipped. ``first_search_seconds`` is the first search,
which loads the event map and the BM25 postings. Target: hybrid p50 <= 20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from claude_memory.core.filters import EventFilters
from claude_memory.service import search as search_module
from claude_memory.service.memory import Memory
from claude_memory.store import keyword as keyword_module
from claude_memory.store import model_files
from claude_memory.store.embedder import DEFAULT_MODEL as DEFAULT_NAME
from claude_memory.store.embedder import MODEL_PATH_ENV
from common import BENCH, OUT, corpus_queries, machine, percentile, process_memory

MODES = ("keyword", "semantic", "hybrid")
BUDGET_MS = 20.0
MARKER = ".embedded"
DEFAULT_MODEL = BENCH.parents[1] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------- the embedded store


def build_embedded(events: int, seed: int, suffix: str = "") -> Path:
    """bench/out/store-N-seedS-embedded[suffix]: the keyword store copied, then embedded by the product."""
    source = OUT / f"store-{events}-seed{seed}"
    target = OUT / f"store-{events}-seed{seed}-embedded{suffix}"
    if (target / MARKER).exists():
        return target
    if not target.exists():
        if not (source / "memory.duckdb").exists():
            raise SystemExit(f"No store at {source}; run bench/bench_import.py --events {events} --keep first.")
        partial = target.with_name(target.name + ".copying")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(source, partial)
        os.replace(partial, target)  # a half-finished copy is never mistaken for the store
        log(f"copied {source.name} to {target.name}")
    started = time.perf_counter()
    with Memory(target) as memory:
        if not memory.embedder.available:
            raise SystemExit(memory.embedder.reason)
        status = memory.embedding_status()
        pending, total = int(status["pending"]), int(memory.stats()["events"])
        log(f"{pending:,} of {total:,} events still to embed (model {status['model']})")
        progress = _Progress(pending)
        embedded = memory.embed_pending(progress)
        status = memory.embedding_status()
        chunks_row = memory.con.execute("SELECT count(*) FROM chunks").fetchone()
        chunks = int(chunks_row[0]) if chunks_row else 0
    seconds = time.perf_counter() - started
    if status["pending"] or status["failed"]:
        raise SystemExit(f"embedding incomplete: {status['pending']} pending, {status['failed']} failed")
    facts = {"events": total, "embedded_this_run": embedded, "chunks": chunks, "vectors": status["vectors"],
             "index_live": status["index_live"], "seconds_this_run": round(seconds, 1)}  # fmt: skip
    (target / MARKER).write_text(json.dumps(facts))
    log(f"embedded store ready: {json.dumps(facts)}")
    return target


class _Progress:
    """Progress callback for ``embed_pending``: an estimate after ~1,000 events, then a line every 30 s."""

    def __init__(self, pending: int) -> None:
        self.pending = pending
        self.done = 0
        self.started = time.perf_counter()
        self.last = self.started
        self.estimated = False

    def __call__(self, count: int) -> None:
        self.done += count
        now = time.perf_counter()
        rate = self.done / max(now - self.started, 1e-9)
        left = (self.pending - self.done) / rate if rate else 0.0
        if not self.estimated and self.done >= 1000:
            self.estimated = True
            log(
                f"estimate: {self.done} events in {now - self.started:.1f} s = {rate:.1f} events/s, so all "
                f"{self.pending:,} take ~{self.pending / rate / 60:.0f} min"
            )
        if now - self.last >= 30 or self.done >= self.pending:
            self.last = now
            log(f"embedded {self.done:,}/{self.pending:,} events, {rate:.1f} events/s, ~{left / 60:.1f} min left")


# ---------------------------------------------------------------------- timing the parts


# (where it is looked up, attribute, part name, whether it runs on the caller's thread at the top level:
# the top-level parts plus the waits for the worker thread add up to the search time, less "rest").
# Parts that the search code no longer has are skipped, so the bench survives its refactors.
TIMED: tuple[tuple[str, str, str, bool], ...] = (
    ("embedder", "embed", "query_embedding", False),  # on the worker thread, while BM25 runs
    ("eventmap", "refresh", "event_map_refresh", True),
    ("postings", "refresh", "postings_refresh", True),
    ("keyword", "search", "bm25", True),  # BM25 in DuckDB SQL (before the in-memory index)
    ("postings", "search", "bm25", True),  # BM25 in memory
    ("search", "semantic_candidates", "semantic_candidates", True),
    ("index", "search", "hnswlib_knn", False),  # inside semantic_candidates
    ("search", "similarities", "cosines", True),  # exact and contextual, every row
    ("index", "vectors", "vector_copy_reads", False),  # inside cosines
    ("eventmap", "facts", "ranking_facts", True),
    ("search", "fuse", "fuse", True),
    ("search", "events_by_ids", "hydrate", True),
    ("future", "result", "wait_for_worker", True),  # the caller waiting for the query vector or the cosines
)


class Parts:
    """Wraps the functions ``search`` calls, to time each part of one query."""

    def __init__(self) -> None:
        self.current: dict[str, float] = defaultdict(float)
        self.timed: list[str] = []

    def wrap(self, owner: Any, name: str, part: str) -> Callable[[], None] | None:
        original = getattr(owner, name, None)
        if original is None:
            return None

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.current[part] += (time.perf_counter() - started) * 1000

        setattr(owner, name, timed)
        self.timed.append(part)
        return lambda: setattr(owner, name, original)

    @contextmanager
    def installed(self, memory: Memory) -> Iterator[None]:
        owners: dict[str, Any] = {
            "embedder": memory.embedder,
            "index": memory.vector_index(),
            "search": search_module,
            "keyword": keyword_module,
            "future": Future,  # patched on the class: the waits for the worker thread
            "eventmap": getattr(search_module, "EventMap", None),  # patched on the class
            "postings": getattr(search_module, "PostingsIndex", None),  # likewise
        }
        undo = [self.wrap(owners[where], attr, part) for where, attr, part, _ in TIMED if owners[where] is not None]
        try:
            yield
        finally:
            for fn in reversed(undo):
                if fn is not None:
                    fn()

    def take(self, total_ms: float) -> dict[str, float]:
        parts = dict(self.current)
        self.current.clear()
        top = sum(parts.get(part, 0.0) for part in {part for _, _, part, on_top in TIMED if on_top})
        if "semantic_candidates" in parts and "hnswlib_knn" in parts:
            parts["label_to_event_mapping"] = parts["semantic_candidates"] - parts["hnswlib_knn"]
        parts["rest"] = total_ms - top
        return parts


# ---------------------------------------------------------------------- queries


def phrase_queries(memory: Memory, count: int, rng: random.Random) -> list[tuple[str, str | None]]:
    """Runs of 4-9 consecutive words from stored events: questions in the corpus's own language."""
    sample = memory.con.execute("SELECT text, project FROM events USING SAMPLE 2000 ROWS (reservoir, 11)").fetchall()
    runs = [(re.findall(r"[A-Za-z][A-Za-z_'-]+", text), project) for text, project in sample]
    runs = [(words, project) for words, project in runs if len(words) >= 4]
    queries: list[tuple[str, str | None]] = []
    for i in range(count):
        words, project = rng.choice(runs)
        size = rng.randint(4, min(9, len(words)))
        start = rng.randint(0, len(words) - size)
        queries.append((" ".join(words[start : start + size]), project if i % 2 == 1 else None))
    return queries


def stats_ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values, 50), 2),
        "p95": round(percentile(values, 95), 2),
        "p99": round(percentile(values, 99), 2),
        "max": round(max(values), 2),
    }


def part_stats(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(sum(values) / len(values), 2),
        "p50": round(percentile(values, 50), 2),
        "p95": round(percentile(values, 95), 2),
    }


def measure(
    memory: Memory, queries: dict[str, list[tuple[str, str | None]]], warmup: int
) -> tuple[dict[str, Any], list[str]]:
    """Every query in every mode, the modes in turns (so a busy moment of the machine hits all three)."""
    flat = [(kind, q, project) for kind, qs in queries.items() for q, project in qs]
    random.Random(5).shuffle(flat)
    parts = Parts()
    timings: dict[str, dict[str, list[float]]] = {mode: defaultdict(list) for mode in MODES}
    breakdown: dict[str, dict[str, list[float]]] = {mode: defaultdict(list) for mode in MODES}
    hits = dict.fromkeys(MODES, 0)
    degraded = dict.fromkeys(MODES, 0)
    with parts.installed(memory):
        for _, q, project in flat[:warmup]:  # warm-up: not counted
            for mode in MODES:
                memory.search(q, EventFilters(project=project), 10, mode=mode)
        parts.current.clear()
        for turn, (kind, q, project) in enumerate(flat):
            for mode in MODES[turn % 3 :] + MODES[: turn % 3]:
                started = time.perf_counter()
                found, meta = memory.search(q, EventFilters(project=project), 10, mode=mode)
                ms = (time.perf_counter() - started) * 1000
                hits[mode] += bool(found)
                degraded[mode] += "degraded" in meta
                for name in ("all", kind, "project_scoped" if project else "unscoped"):
                    timings[mode][name].append(ms)
                for part, value in parts.take(ms).items():
                    breakdown[mode][part].append(value)
    return {
        mode: {
            "latency_ms": {name: stats_ms(v) for name, v in timings[mode].items()},
            "breakdown_ms": {part: part_stats(v) for part, v in breakdown[mode].items()},
            "queries_with_results": hits[mode],
            "degraded": degraded[mode],
        }
        for mode in MODES
    }, parts.timed


def compact_json(value: Any, indent: int = 0) -> str:
    """JSON with every object or list of plain values on one line (the figures stay readable)."""
    pad = "  " * (indent + 1)
    if isinstance(value, dict) and any(isinstance(v, dict | list) for v in value.values()):
        items = [f"{pad}{json.dumps(k)}: {compact_json(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    return json.dumps(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=300, help="per query kind (words, phrases)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--build-only", action="store_true", help="build the embedded store, measure nothing")
    parser.add_argument("--store", type=Path, help="measure this embedded data directory instead (e.g. dev_eval's)")
    parser.add_argument("--int8", action="store_true", help="the store embedded with the int8 copy (the default)")
    args = parser.parse_args()
    if args.int8:
        os.environ[MODEL_PATH_ENV] = str(model_files.make_int8(OUT / "int8-data", DEFAULT_NAME, DEFAULT_MODEL))
    elif not os.environ.get(MODEL_PATH_ENV) and (DEFAULT_MODEL / "model.onnx").exists():
        os.environ[MODEL_PATH_ENV] = str(DEFAULT_MODEL)
    data = args.store or build_embedded(args.events, args.seed, "-int8" if args.int8 else "")
    if args.build_only:
        return
    with Memory(data) as memory:
        started = time.perf_counter()
        if not memory.embedder.available:  # loads the model
            raise SystemExit(memory.embedder.reason)
        model_load = time.perf_counter() - started
        started = time.perf_counter()
        memory.vector_index()
        index_load = time.perf_counter() - started
        started = time.perf_counter()
        memory.search("warm", EventFilters(), 10, mode="keyword")  # loads the event map and the BM25 postings
        first_search = time.perf_counter() - started
        queries = {
            "words": corpus_queries(memory.con, args.queries, random.Random(42)),
            "phrases": phrase_queries(memory, args.queries, random.Random(43)),
        }
        results, parts_timed = measure(memory, queries, args.warmup)
        memory_mb = process_memory()
        stats = memory.stats()
        status = memory.embedding_status()
        chunks_row = memory.con.execute("SELECT count(*) FROM chunks").fetchone()
    hybrid_p50 = results["hybrid"]["latency_ms"]["all"]["p50"]
    print(
        compact_json(
            {
                "benchmark": "hybrid search (BM25 + all-MiniLM-L6-v2/hnswlib, top 10, hydrated with snippets)",
                "machine": machine(),
                "events": stats["events"],
                "chunks": int(chunks_row[0]) if chunks_row else 0,
                "vectors": status["vectors"],
                "index_live": status["index_live"],
                "pending": status["pending"],
                "model_load_seconds": round(model_load, 2),
                "index_load_seconds": round(index_load, 2),
                "first_search_seconds": round(first_search, 2),
                "queries": {kind: len(qs) for kind, qs in queries.items()},
                "warmup_queries_per_mode": args.warmup,
                "parts_timed": parts_timed,
                "memory_after_queries_mb": memory_mb,
                "modes": results,
                "budget": {"hybrid_p50_ms": BUDGET_MS, "measured_p50_ms": hybrid_p50, "met": hybrid_p50 <= BUDGET_MS},
            },
        )
    )


if __name__ == "__main__":
    main()
