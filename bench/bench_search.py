"""Keyword search latency at 100,000 events (service call on a warm connection, as the memory service
will serve it).

    .venv/bin/python bench/bench_import.py --keep     # builds bench/out/store-100000-seed1 once
    .venv/bin/python bench/bench_search.py [--events 100000] [--queries 300]

Queries are 1-3 words drawn from the corpus's own vocabulary (so they hit), half of them scoped to a
project, through ``Memory.search(..., mode="keyword")``: BM25 from the in-memory postings
(``store/postings.py``), ranking, hydration and snippets. Also reported: the time to load the postings
into memory and their size, and the SQL reference (``keyword.search``, BM25 alone, top 200 as the
service asks) on the same queries. Target: p50 <= 20 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from claude_memory.core.filters import EventFilters
from claude_memory.service.memory import Memory
from claude_memory.service.search import CANDIDATES
from claude_memory.store import keyword
from claude_memory.store.eventmap import EventMap
from claude_memory.store.postings import PostingsIndex
from common import OUT, corpus_queries, machine, percentile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    data = OUT / f"store-{args.events}-seed{args.seed}"
    if not (data / "memory.duckdb").exists():
        raise SystemExit(f"No store at {data}; run bench/bench_import.py --events {args.events} --keep first.")
    rng = random.Random(42)
    with Memory(data) as memory:
        queries = corpus_queries(memory.con, args.queries, rng)
        started = time.perf_counter()
        events, index = EventMap(), PostingsIndex()
        index.refresh(memory.con, events.refresh(memory.con))
        load_seconds = time.perf_counter() - started
        for q, project in queries[:20]:  # warm-up
            memory.search(q, EventFilters(project=project), 10, mode="keyword")
        timings: dict[str, list[float]] = {"all": [], "unscoped": [], "project_scoped": []}
        hits = 0
        for q, project in queries:
            started = time.perf_counter()
            results, _ = memory.search(q, EventFilters(project=project), 10, mode="keyword")
            ms = (time.perf_counter() - started) * 1000
            hits += bool(results)
            timings["all"].append(ms)
            timings["project_scoped" if project else "unscoped"].append(ms)
        bm25: dict[str, list[float]] = {"in_memory": [], "sql_reference": []}
        for q, project in queries:
            terms, filters = memory.tokenizer.terms(q), EventFilters(project=project)
            started = time.perf_counter()
            index.search(terms, filters, CANDIDATES, events)
            bm25["in_memory"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            keyword.search(memory.con, terms, filters, CANDIDATES)
            bm25["sql_reference"].append((time.perf_counter() - started) * 1000)
        stats = memory.stats()
    print(
        json.dumps(
            {
                "benchmark": "keyword search (BM25, top 10, hydrated results with snippets)",
                "machine": machine(),
                "events": stats["events"],
                "postings": stats["keyword_index"]["postings"],
                "unmerged_postings": stats["keyword_index"]["unmerged_postings"],
                "queries": len(queries),
                "queries_with_results": hits,
                "postings_load_seconds": round(load_seconds, 2),
                "postings_index_bytes": index.nbytes,
                "latency_ms": {
                    name: {
                        "p50": round(percentile(v, 50), 2),
                        "p95": round(percentile(v, 95), 2),
                        "p99": round(percentile(v, 99), 2),
                        "max": round(max(v), 2),
                    }
                    for name, v in timings.items()
                },
                "bm25_only_top200_ms": {
                    name: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2)}
                    for name, v in bm25.items()
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
