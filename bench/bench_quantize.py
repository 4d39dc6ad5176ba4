"""Embedding throughput before and after issue 17, through the whole pipeline (queue -> chunks -> model -> DuckDB ->
hnswlib), in turns on copies of the same store: float32 with the old 16,000-character batches (before), float32 with
today's batches, and the int8 copy; and how close the int8 vectors are to the float32 ones on the same chunks.

    .venv/bin/python bench/bench_quantize.py [--events 3000] [--turns 3] [--model DIR]

The float32 model is ``--model``, else ``CLAUDE_MEMORY_MODEL_PATH``, else ../shared/models/all-MiniLM-L6-v2-onnx; its
int8 copy is made by the product's own quantizer (``store/quantize.py``) into bench/out/. The corpus is
bench_import's generator (``--events`` events, seed 2), imported once without a model; each turn embeds a fresh
copy of that store. Recall on the dev benchmarks: ``bench/dev_eval.py`` with ``CLAUDE_MEMORY_MODEL_PATH`` set to
the int8 folder this prints.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from claude_memory.core.chunks import MAX_CHUNKS, MAX_TOOL_CHUNKS, chunk_text
from claude_memory.service.memory import Memory
from claude_memory.store import embedder as embedder_module
from claude_memory.store.embedder import MODEL_PATH_ENV, Embedder
from claude_memory.store.quantize import quantize_int8
from common import OUT, corpus_dir, machine

SHARED_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
BEFORE_BATCH_CHARS = 16_000  # the embedder's batches before issue 17 (float32 at this size is "before")


def int8_copy(source: Path) -> Path:
    target = OUT / "int8-model"
    if (
        not (target / "model.onnx").exists()
        or (target / "model.onnx").stat().st_mtime < (source / "model.onnx").stat().st_mtime
    ):
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for item in source.iterdir():
            if item.name != "model.onnx":
                shutil.copyfile(item, target / item.name)
        quantize_int8(source / "model.onnx", target / "model.onnx")
    return target


def template_store(home: Path, root: Path) -> Path:
    """The corpus imported with no model: every event waits in the embedding queue."""
    data = root / "template"
    os.environ[MODEL_PATH_ENV] = str(root / "no-model")
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
    return data


def embed_turn(template: Path, model: Path, root: Path, batch_chars: int) -> dict[str, float]:
    embedder_module.BATCH_CHARS = batch_chars  # type: ignore[misc]  # (the "before" turns use the old size)
    data = root / "turn"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(template, data)
    os.environ[MODEL_PATH_ENV] = str(model)
    with Memory(data) as memory:
        memory.embedder.embed(["warm-up"])  # the model's load is not embedding throughput
        started = time.perf_counter()
        events = memory.embed_pending()
        seconds = time.perf_counter() - started
        chunks = memory.embedding_status()["vectors"]
    shutil.rmtree(data, ignore_errors=True)
    return {"seconds": seconds, "events_per_second": events / seconds, "chunks_per_second": chunks / seconds,
            "chunks": chunks}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--model", type=Path, default=None)
    args = parser.parse_args()
    source = args.model or Path(os.environ.get(MODEL_PATH_ENV) or SHARED_MODEL)
    int8 = int8_copy(source)
    home, _ = corpus_dir(args.events, args.seed)
    root = Path(tempfile.mkdtemp(prefix="bench-quantize-"))
    try:
        template = template_store(home, root)
        shipped = embedder_module.BATCH_CHARS
        runs = (("before: float32, 16,000-character batches", source, BEFORE_BATCH_CHARS),
                ("float32", source, shipped), ("int8", int8, shipped))  # fmt: skip
        turns: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in runs}
        for _ in range(args.turns):
            for name, folder, batch_chars in runs:
                turns[name].append(embed_turn(template, folder, root, batch_chars))
        embedder_module.BATCH_CHARS = shipped  # type: ignore[misc]
        with Memory(template) as memory:
            rows = memory.con.execute("SELECT text, type FROM events ORDER BY seq").fetchall()
        texts = list(dict.fromkeys(
            c for text, kind in rows for c in chunk_text(text, MAX_TOOL_CHUNKS if kind == "tool_use" else MAX_CHUNKS)
        ))  # fmt: skip
        cosines = (Embedder(source).embed(texts) * Embedder(int8).embed(texts)).sum(axis=1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    median = {name: statistics.median(t["chunks_per_second"] for t in runs) for name, runs in turns.items()}
    print(json.dumps({
        "benchmark": "int8 embedding model against float32",
        "machine": machine(),
        "events": args.events,
        "float32_model": str(source),
        "int8_model": str(int8),
        "model_bytes": {k: (f / "model.onnx").stat().st_size for k, f in (("float32", source), ("int8", int8))},
        "turns": turns,
        "median_chunks_per_second": {k: round(v, 1) for k, v in median.items()},
        "speedup_int8_over_float32": round(median["int8"] / median["float32"], 2),
        "speedup_over_before": {k: round(v / median[runs[0][0]], 2) for k, v in median.items()},
        "cosine_to_float32": {"chunks": len(texts), "mean": round(float(cosines.mean()), 5),
                              "p1": round(float(np.percentile(cosines, 1)), 5), "min": round(float(cosines.min()), 5)},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
