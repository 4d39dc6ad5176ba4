"""Embedding throughput: the pipeline (queue -> chunks -> fastembed -> DuckDB -> hnswlib) against
fastembed's raw throughput on the same texts, in the same run. Target: pipeline >= 90 % of raw.

    CLAUDE_MEMORY_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-onnx \
        .venv/bin/python bench/bench_embed.py [--events 3000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from claude_memory.core.chunks import MAX_CHUNKS, MAX_TOOL_CHUNKS, chunk_text
from claude_memory.service.memory import Memory
from common import corpus_dir, machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    home, _ = corpus_dir(args.events, args.seed)
    data = Path(tempfile.mkdtemp()) / "data"
    with Memory(data) as memory:
        if not memory.embedder.available:
            raise SystemExit(memory.embedder.reason)
        memory.import_history(home, settle_seconds=0)
        rows = memory.con.execute("SELECT text, type FROM events ORDER BY seq").fetchall()
        texts = list(
            dict.fromkeys(
                c
                for text, kind in rows
                for c in chunk_text(text, MAX_TOOL_CHUNKS if kind == "tool_use" else MAX_CHUNKS)
            )
        )
        memory.embedder.embed(texts[:64])  # warm-up (and loads the model)
        model = memory.embedder._model  # fastembed's TextEmbedding itself, for the raw figure
        started = time.perf_counter()
        list(model.embed(texts, batch_size=64))
        raw_seconds = time.perf_counter() - started
        started = time.perf_counter()
        memory.embedder.embed(texts)
        sorted_seconds = time.perf_counter() - started
        started = time.perf_counter()
        embedded = memory.embed_pending()
        pipeline_seconds = time.perf_counter() - started
        status = memory.embedding_status()
    shutil.rmtree(data.parent, ignore_errors=True)
    print(
        json.dumps(
            {
                "benchmark": "embedding throughput",
                "machine": machine(),
                "events": embedded,
                "distinct_chunks": len(texts),
                "raw_fastembed_chunks_per_second": round(len(texts) / raw_seconds, 1),
                "embedder_length_sorted_chunks_per_second": round(len(texts) / sorted_seconds, 1),
                "pipeline_chunks_per_second": round(status["vectors"] / pipeline_seconds, 1),
                "pipeline_events_per_second": round(embedded / pipeline_seconds, 1),
                "pipeline_vs_raw": round((status["vectors"] / pipeline_seconds) / (len(texts) / raw_seconds), 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
