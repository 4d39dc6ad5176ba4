"""A store of a million events with vectors, for the hybrid, hook and hover benchmarks at that scale.

    .venv/bin/python bench/bench_import.py --events 1000000 --keep       # the events (import events/s, size)
    .venv/bin/python bench/bench_scale.py [--events 1000000]             # vectors, index build and load, forget
    .venv/bin/python bench/bench_search.py --events 1000000              # keyword p50/p95
    .venv/bin/python bench/bench_hybrid.py --store bench/out/store-1000000-seed1-vectors
    .venv/bin/python bench/bench_hooks.py --store bench/out/store-1000000-seed1-vectors
    .venv/bin/python bench/bench_hover.py --store bench/out/store-1000000-seed1-vectors

Embedding a million events with the real model takes hours on 2 cores, so the vectors here are **synthetic**: one
chunk per event, a random unit vector (seeded), stored through the product's own writer (``add_embeddings``) and
indexed by the product's own index (``VectorIndex.load``, which builds it from the store). Latency and memory are
those of real vectors of the same count; what the semantic part finds is not meaningful (random vectors), so this
measures cost, not recall. The store records the real model (``CLAUDE_MEMORY_MODEL_PATH``, else ../shared's), so a
service opened on it embeds queries with it and searches in hybrid mode.

Printed: vectors written per second, index build seconds and the index's size, index load seconds (cold: a new
process), the process's RSS after the load, and ``forget`` of one session with task calls and of one without
(events, seconds: it rewrites the database file, and folds the task projection again when the session had task
calls).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from claude_memory.service.memory import Memory
from claude_memory.store.embedder import MODEL_PATH_ENV
from claude_memory.store.embedding_queue import Chunk
from common import OUT, machine

SHARED_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
BATCH = 50_000


def add_vectors(data: Path, seed: int) -> dict[str, float]:
    """One synthetic chunk per event, through the writer; then the index built from the store."""
    rng = np.random.default_rng(seed)
    with Memory(data) as memory:
        assert memory.model_ready(), memory.embedder.reason  # records the real model with the store
        model_id = memory.embedder.model_id
        ids = [int(r[0]) for r in memory.con.execute("SELECT event_id FROM embed_queue ORDER BY event_id").fetchall()]
        started = time.perf_counter()
        for first in range(0, len(ids), BATCH):
            batch = ids[first : first + BATCH]
            vectors = rng.standard_normal((len(batch), 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            hashes = [f"synthetic-{model_id}-{i}" for i in batch]
            chunks = [Chunk(i, 0, h) for i, h in zip(batch, hashes, strict=True)]
            memory.writer.add_embeddings(batch, chunks, hashes, vectors)
        written = time.perf_counter() - started
        started = time.perf_counter()
        index = memory.vector_index()  # no index file yet: built from the store, and saved
        built = time.perf_counter() - started
        live = index.live_count
    size = sum((data / name).stat().st_size for name in ("vectors.hnsw", "vectors.q8"))
    return {"vectors": len(ids), "vectors_per_second": round(len(ids) / written),
            "index_build_seconds": round(built, 1), "index_live": live,
            "index_files_megabytes": round(size / 1e6)}  # fmt: skip


# (VmHWM, not getrusage: a child's ru_maxrss starts from its parent's at the fork, and the parent is large here)
LOAD_PROBE = """
import sys, time
from pathlib import Path
from claude_memory.service.memory import Memory
m = Memory(Path(sys.argv[1]), read_only=True)
t = time.perf_counter(); m.vector_index(); print(time.perf_counter() - t)
print(next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM")))
"""


def index_load(data: Path) -> dict[str, float]:
    """The index loaded in a new process (as a service starting): seconds, and that process's peak RSS."""
    done = subprocess.run([sys.executable, "-c", LOAD_PROBE, str(data)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})  # fmt: skip
    seconds, peak = done.stdout.split()
    return {"index_load_seconds": round(float(seconds), 2), "load_process_peak_rss_mb": round(float(peak))}


def forget_one_session(data: Path, scratch: Path) -> dict[str, float]:
    """``forget`` of one session with task calls and of one without, on a copy whose task projection and insights are
    current first, as a service keeps them. Until 2026-12-01 the forget's time held the projection's first fold (the
    generated store has never been served: 330 s at a million events) and, the index being loaded only after the
    delete, a build of the whole index (654 s)."""
    copy = scratch / "forget-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(data, copy)
    result: dict[str, float] = {}
    try:
        with Memory(copy) as memory:
            from claude_memory.core.filters import ForgetSelector
            from claude_memory.store.tasks import IS_CALL

            started = time.perf_counter()
            memory.tasks.refresh()
            memory.insights.refresh()
            memory.insights.regroup()
            result["projections_made_current_seconds"] = round(time.perf_counter() - started, 1)
            for name, calls in (("without_task_calls", "= 0"), ("with_task_calls", "> 0")):
                row = memory.con.execute(
                    "SELECT session_id, count(*) FROM events GROUP BY 1 HAVING count(*) FILTER "
                    f"(WHERE {IS_CALL}) {calls} ORDER BY 2 DESC, 1 "
                    "LIMIT 1 OFFSET 100"
                ).fetchone()
                assert row is not None
                started = time.perf_counter()
                result[f"forget_{name}_events"] = memory.forget(ForgetSelector(session_id=str(row[0])))
                result[f"forget_{name}_seconds"] = round(time.perf_counter() - started, 1)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault(MODEL_PATH_ENV, str(SHARED_MODEL))
    source = OUT / f"store-{args.events}-seed{args.seed}"
    if not (source / "memory.duckdb").exists():
        raise SystemExit(f"No store in {source}: run bench_import.py --events {args.events} --keep first.")
    data = OUT / f"store-{args.events}-seed{args.seed}-vectors"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(source, data)
    result: dict[str, object] = {"benchmark": "a million events with synthetic vectors", "machine": machine()}
    result |= add_vectors(data, args.seed)
    result |= index_load(data)
    result |= forget_one_session(data, OUT)
    result["store_megabytes"] = round(sum(p.stat().st_size for p in data.iterdir() if p.is_file()) / 1e6)
    result["this_process_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
