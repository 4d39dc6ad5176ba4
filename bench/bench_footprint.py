"""Where a memory service's memory goes: the process's RSS after each part is loaded, on an embedded store.

    .venv/bin/python bench/bench_footprint.py [--store bench/out/store-100000-seed1-embedded] [--int8 DIR]

In a fresh process, as the service loads them: the interpreter and the libraries, the store opened, the first
keyword search (the event map and the BM25 postings), the embedding model (one query embedded), the vector index,
20 hybrid searches (the vector copy's pages read), then what a quiet service hands back every half minute
(``Memory.release_memory``: DuckDB's cache of the store past its bound, and the freed heap). Each line: VmRSS,
anonymous and file-backed RSS, and the peak so far (VmHWM). ``--int8 DIR`` also loads the float32 model (the
store's) and the int8 copy in DIR in two more fresh processes, each embedding the same 200 chunks: what the
model costs at each precision. The store is opened read-only (nothing is written).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from claude_memory.service.memory import Memory
from claude_memory.store import queries
from claude_memory.store.embedder import MODEL_PATH_ENV
from common import OUT, machine

SHARED_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"

STAGES = r"""
import json, sys, random
from pathlib import Path

def status():
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[key] = round(int(line.split()[1]) / 1024)
    return out

stages = [("interpreter", status())]
from claude_memory.core.filters import EventFilters
from claude_memory.service.memory import Memory
stages.append(("libraries imported", status()))
memory = Memory(Path(sys.argv[1]), read_only=True)
stages.append(("store opened", status()))
memory.search("database connection pool", EventFilters(), 10, "keyword")
stages.append(("first keyword search: event map and postings", status()))
assert memory.model_ready(), memory.embedder.reason
memory.embedder.embed(["how do I configure the database connection pool"])
stages.append(("embedding model, one query embedded", status()))
memory.vector_index()
stages.append(("vector index loaded", status()))
words = [r[0] for r in memory.con.execute("SELECT text FROM events USING SAMPLE 200 ROWS (reservoir, 5)").fetchall()]
rng = random.Random(5)
for text in words[:20]:
    query = " ".join(rng.sample(text.split(), min(5, len(text.split())))) or "error"
    memory.search(query, EventFilters(), 10, "hybrid")
stages.append(("20 hybrid searches", status()))
memory.release_memory()
stages.append(("memory handed back (a quiet service's)", status()))
print(json.dumps(stages))
"""

MODEL = r"""
import json, sys
from pathlib import Path
from claude_memory.store.embedder import Embedder
from claude_memory.store.heap import release_freed_memory

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return round(int(line.split()[1]) / 1024)

texts = json.loads(sys.stdin.read())
before = rss()
embedder = Embedder(Path(sys.argv[1]))
embedder.embed(["warm-up"])
loaded = rss()
embedder.embed(texts)
release_freed_memory()
print(json.dumps({"model_loaded_mb": loaded - before, "after_200_chunks_and_trim_mb": rss() - before}))
"""


def run(code: str, *args: str, stdin: str | None = None) -> object:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code, *args], input=stdin, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])  # (the last line: the probe prints its answer last)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=OUT / "store-100000-seed1-embedded")
    parser.add_argument("--int8", type=Path, help="an int8 model folder to compare with the store's float32 model")
    args = parser.parse_args()
    with Memory(args.store, read_only=True) as memory:
        recorded = queries.recorded_model(memory.con)
    if recorded is None or not recorded["path"]:  # (a store embedded before the model was recorded)
        os.environ.setdefault(MODEL_PATH_ENV, str(SHARED_MODEL))
    stages = run(STAGES, str(args.store))
    result: dict[str, object] = {"benchmark": "memory footprint by part", "machine": machine(),
                                 "store": str(args.store), "stages": stages}  # fmt: skip
    if args.int8:
        with Memory(args.store, read_only=True) as memory:
            assert memory.model_ready(), memory.embedder.reason
            float32 = memory.embedder.model_path
            rows = memory.con.execute("SELECT text FROM events USING SAMPLE 200 ROWS (reservoir, 7)").fetchall()
        texts = json.dumps([str(r[0])[:900] for r in rows])
        result["models"] = {"float32": run(MODEL, str(float32), stdin=texts),
                            "int8": run(MODEL, str(args.int8), stdin=texts)}  # fmt: skip
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
