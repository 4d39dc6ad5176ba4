"""Import throughput: parse + privacy filter + store (events, keyword postings, checkpoints).

    .venv/bin/python bench/bench_import.py [--events 100000] [--seed 1]

Generates (once, cached in bench/out/) a Claude Code tree shaped like the real fixtures, imports it into
a fresh store with the real importer, and prints events/s. Target: >= 5,000 events/s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from claude_memory.service.memory import Memory
from common import OUT, corpus_dir, machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the store in bench/out/ for bench_search.py")
    args = parser.parse_args()
    home, expected = corpus_dir(args.events, args.seed)
    corpus_bytes = sum(p.stat().st_size for p in home.rglob("*.jsonl"))
    data = OUT / f"store-{args.events}-seed{args.seed}" if args.keep else Path(tempfile.mkdtemp()) / "data"
    shutil.rmtree(data, ignore_errors=True)
    started = time.perf_counter()
    with Memory(data) as memory:
        opened = time.perf_counter()
        report = memory.import_history(home, settle_seconds=0)
        imported = time.perf_counter()
        again = memory.import_history(home, settle_seconds=0)
        noop = time.perf_counter() - imported
        stats = memory.stats()
    seconds = imported - opened
    result = {
        "benchmark": "import",
        "machine": machine(),
        "corpus": {"events": expected, "files": report.files_found, "megabytes": round(corpus_bytes / 1e6, 1)},
        "events_stored": report.events_new,
        "seconds": round(seconds, 2),
        "events_per_second": round(report.events_new / seconds),
        "megabytes_per_second": round(corpus_bytes / 1e6 / seconds, 1),
        "open_and_migrate_seconds": round(opened - started, 3),
        "reimport_noop_seconds": round(noop, 3),
        "reimport_new_events": again.events_new,
        "store_megabytes": round(stats["store_bytes"] / 1e6, 1),
        "secrets_masked": report.privacy.secrets_masked,
    }
    print(json.dumps(result, indent=2))
    if not args.keep:
        shutil.rmtree(data.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
