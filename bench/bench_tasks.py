"""The task projection at scale: folding every task tool call of a store, and the SessionStart context with tasks.

    .venv/bin/python bench/bench_tasks.py [--store bench/out/store-100000-seed1] [--starts 100]

Copies the store (bench/out is never modified), opens it (migrations), then times the first fold (calls stored
before task operations were kept are read again from their transcripts, bench/out/corpus-100000-seed1), a refresh
with nothing new, and three forced rebuilds, checking that each gives the identical projection; then the
SessionStart context (search-free: the last session's summary, open tasks, recent prompts) for ``--starts``
projects of the store, in this process (the service's part of the hook). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from claude_memory.service.capture import HookPayload
from claude_memory.service.memory import Memory
from claude_memory.service.recall import ContextParams, Recaller
from common import OUT, machine, percentile


def projection(memory: Memory) -> Any:
    return [memory.con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
            for t in ("task_events", "entities", "entity_aliases", "edges")]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=OUT / "store-100000-seed1")
    parser.add_argument("--starts", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tasks-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(args.store, data, ignore=shutil.ignore_patterns("service.*", "spool", "logs"))
        started = time.perf_counter()
        memory = Memory(data)
        opened = time.perf_counter() - started
        try:
            events = memory.con.execute("SELECT count(*) FROM events").fetchone()[0]
            calls = memory.con.execute(
                "SELECT count(*) FROM events WHERE tool_name IN ('TodoWrite', 'TaskCreate', 'TaskUpdate')"
            ).fetchone()[0]
            started = time.perf_counter()
            memory.tasks.refresh()
            first = time.perf_counter() - started
            reference = projection(memory)
            started = time.perf_counter()
            memory.tasks.refresh()
            noop_ms = (time.perf_counter() - started) * 1000
            rebuilds = []
            for _ in range(3):
                started = time.perf_counter()
                memory.tasks.refresh(force=True)
                rebuilds.append(time.perf_counter() - started)
                assert projection(memory) == reference, "a rebuild changed the projection"
            tasks = memory.con.execute("SELECT count(*) FROM entities WHERE type = 'task'").fetchone()[0]
            task_events = memory.con.execute("SELECT count(*) FROM task_events").fetchone()[0]
            projects = [r[0] for r in memory.con.execute(
                "SELECT DISTINCT e.project FROM entities e WHERE e.type = 'task' AND e.project IS NOT NULL "
                "ORDER BY 1 LIMIT ?", [args.starts]).fetchall()]  # fmt: skip
            recaller = Recaller(memory)
            timings, listed = [], 0
            for n, project in enumerate(projects):
                payload = HookPayload.model_validate({"hook_event_name": "SessionStart", "session_id": f"bench-{n}",
                                                      "cwd": project, "source": "startup"})  # fmt: skip
                started = time.perf_counter()
                answer = recaller.context(ContextParams(payload=payload))
                timings.append((time.perf_counter() - started) * 1000)
                listed += "Open tasks from earlier sessions" in answer["additional_context"]
        finally:
            memory.close()
    print(json.dumps({
        "machine": machine(), "events": events, "task_calls": calls, "tasks": tasks, "task_events": task_events,
        "open_and_migrate_s": round(opened, 2), "first_fold_s": round(first, 2),
        "refresh_unchanged_ms": round(noop_ms, 2),
        "rebuild_s": [round(r, 2) for r in rebuilds], "rebuild_identical": True,
        "session_start": {"n": len(timings), "with_open_tasks": listed, "p50_ms": round(percentile(timings, 50), 1),
                          "p95_ms": round(percentile(timings, 95), 1)},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
