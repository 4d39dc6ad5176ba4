"""The projected vector index against exact search and against the full index, on an embedded store's own vectors.

    .venv/bin/python bench/bench_projection.py [--store bench/out/store-100000-seed1-embedded] [--queries 200]

Builds both indexes from the store (read-only) in a temporary directory, the way ``VectorIndex.rebuild`` does: the
full one (every dimension) and the projected one (``store/vector_index.py``: the store's own principal directions,
``RESCORE`` times the candidates scored again from the copy); then the projected one refitted, the way the service
refits it once the store has doubled (``VectorIndex.build_refit``: basis and index from the int8 vector copy).
Queries: the texts of events sampled from the store, embedded (what is asked about is what was said), and LoCoMo dev's
questions (another domain: dialogue against the store's text). For each query and each k (40, and 400: what the
service asks for, ``service/semantic.py``), the exact top k chunks by cosine over every vector, against each index's
k: the share found (a chunk within 2e-3 of the exact k-th's cosine counts: the store repeats texts), the search's p50
and p95, the build time and the index file's size (hnswlib's vectors and links, what the service holds in memory).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from claude_memory.store.embedder import Embedder
from claude_memory.store.vector_index import PROJECT_FROM, VectorIndex
from common import OUT, machine

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "dev" / "qrels.jsonl"
KS = (40, 400)  # 400: a search's 200 candidates, oversampled twice (service/search.py, service/semantic.py)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=OUT / "store-100000-seed1-embedded")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    con = duckdb.connect(str(args.store / "memory.duckdb"), read_only=True)
    model_id = json.loads((args.store / "vectors.hnsw.json").read_text())["model_id"]
    sampled = "SELECT text FROM events WHERE length(text) > 40 ORDER BY hash(id) LIMIT ?"
    texts = [r[0][:2000] for r in con.execute(sampled, [args.queries]).fetchall()]
    sets = {"store's own texts": texts}
    if LOCOMO.exists():
        rows = [json.loads(line) for line in LOCOMO.read_text().splitlines() if line.strip()]
        sets["LoCoMo dev questions"] = [r["question"] for r in rows[: args.queries]]
    embedder = Embedder()
    result: dict[str, Any] = {"benchmark": "projected vector index", "machine": machine(), "store": str(args.store)}
    with tempfile.TemporaryDirectory() as tmp:
        indexes: dict[str, VectorIndex] = {}
        for name, project_from in (("full", 10**12), ("projected", PROJECT_FROM)):
            folder = Path(tmp) / name
            folder.mkdir()
            index = VectorIndex(folder, model_id, project_from=project_from)
            started = time.perf_counter()
            count = index.rebuild(con)
            result[f"{name}_build_s"] = round(time.perf_counter() - started, 1)
            result[f"{name}_index_mb"] = round(index.path.stat().st_size / 2**20, 1)
            indexes[name] = index
        # the projected one refitted the way the service does (VectorIndex.build_refit: from the vector copy)
        shutil.copytree(Path(tmp) / "projected", Path(tmp) / "refitted")
        index = VectorIndex(Path(tmp) / "refitted", model_id)
        index.load(con)
        started = time.perf_counter()
        refit = index.build_refit(threads=-1)
        if refit is None or not index.adopt(refit, con):
            raise SystemExit("The projected index could not be refitted.")
        result["refitted_build_s"] = round(time.perf_counter() - started, 1)
        result["refitted_index_mb"] = round(index.path.stat().st_size / 2**20, 1)
        indexes["refitted"] = index
        result["vectors"] = count
        labels = np.arange(indexes["full"].max_label + 1, dtype=np.int64)
        every = indexes["full"].vectors(labels)
        for set_name, queries in sets.items():
            vectors = embedder.embed(queries)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            exact = np.einsum("ij,kj->ik", vectors, every)
            ranked = -np.sort(-exact, axis=1)
            row: dict[str, Any] = {"queries": len(queries)}
            for k in KS:
                kth = ranked[:, k - 1]
                for name, index in indexes.items():
                    found, took = [], []
                    for n, vector in enumerate(vectors):
                        started = time.perf_counter()
                        hits, _ = index.search(vector, k)
                        took.append(1000 * (time.perf_counter() - started))
                        found.append(min(1.0, float((exact[n, hits] >= kth[n] - 2e-3).sum()) / k))
                    row[f"{name}_k{k}"] = {"found_of_exact_top_k": round(float(np.mean(found)), 4),
                                           "p50_ms": round(float(np.percentile(took, 50)), 2),
                                           "p95_ms": round(float(np.percentile(took, 95)), 2)}  # fmt: skip
            result[set_name] = row
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    sys.exit(main())
