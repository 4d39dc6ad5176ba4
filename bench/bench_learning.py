"""What the memory learns, at scale: insights, graduation and endless mode on a copy of a store.

    .venv/bin/python bench/bench_learning.py [--store bench/out/store-100000-seed1] [--starts 100] [--uses 5000]

Copies the store (bench/out is never modified), opens it (migrations), then times: the first reading of every user
prompt for insights (what the service's idle step does once after the upgrade), a refresh with nothing new, a rebuild
checked identical, the listing of a project's insights; ``--uses`` accesses spread over the store's memories and
sessions, then a graduation pass and one with nothing due; endless mode switched on (the last week's events, when the
store has any, and a consolidation), a refresh and a consolidation check; and the SessionStart context (its service
part, with preferences, tasks and, the second time, endless mode) for ``--starts`` projects. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from claude_memory.service.capture import HookPayload
from claude_memory.service.memory import Memory
from claude_memory.service.recall import ContextParams, Recaller
from claude_memory.store.learning import Use
from common import OUT, machine, percentile


def timed(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - started) * 1000


def starts(memory: Memory, projects: list[str]) -> dict[str, float]:
    recaller = Recaller(memory)
    took = []
    for n, project in enumerate(projects):
        payload = HookPayload.model_validate(
            {"hook_event_name": "SessionStart", "session_id": f"bench-{n}", "cwd": project}
        )
        took.append(timed(lambda p=payload: recaller.context(ContextParams(payload=p)))[1])
    return {"p50_ms": round(percentile(took, 50), 1), "p95_ms": round(percentile(took, 95), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=OUT / "store-100000-seed1")
    parser.add_argument("--starts", type=int, default=100)
    parser.add_argument("--uses", type=int, default=5_000)
    args = parser.parse_args()
    rng = random.Random(7)
    out: dict[str, Any] = {"machine": machine(), "store": str(args.store)}
    with tempfile.TemporaryDirectory(prefix="bench-learning-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(args.store, data, ignore=shutil.ignore_patterns("service.*", "spool", "logs"))
        memory, out["open_ms"] = timed(lambda: Memory(data))
        try:
            con = memory.con
            out["events"] = con.execute("SELECT count(*) FROM events").fetchone()[0]
            out["prompts"] = con.execute("SELECT count(*) FROM events WHERE type = 'user_prompt'").fetchone()[0]
            read, out["insights_first_ms"] = timed(memory.insights.refresh)
            out["insights_read"] = read
            out["insights_noop_ms"] = timed(memory.insights.refresh)[1]
            before = memory.insights.listing(None, include_all=True, limit=10_000)
            _, out["insights_rebuild_ms"] = timed(memory.insights.rebuild)
            out["insights_identical"] = memory.insights.listing(None, include_all=True, limit=10_000) == before
            out["preferences"] = len(before["preferences"])
            out["repeated_topics"] = len(before["topics"])
            projects = [str(r[0]) for r in con.execute(
                "SELECT project FROM projects ORDER BY last_seen DESC LIMIT ?", [args.starts]).fetchall()]  # fmt: skip
            out["listing_ms"] = round(timed(lambda: memory.insights.listing(projects[0]))[1], 1)

            cites = [(str(r[0])) for r in con.execute("SELECT citation FROM events USING SAMPLE 2000 ROWS").fetchall()]
            sessions = [str(r[0]) for r in con.execute("SELECT session_id FROM sessions LIMIT 200").fetchall()]
            uses = [Use(rng.choice(cites[:200]) if rng.random() < 0.5 else rng.choice(cites), "hook",
                        rng.choice(sessions), rng.uniform(0.4, 1.0)) for _ in range(args.uses)]  # fmt: skip
            _, out["record_uses_ms"] = timed(lambda: memory.writer.record_uses(uses))
            graduated, out["graduation_ms"] = timed(memory.graduation.run)
            out["graduation"] = graduated
            out["graduation_cooldown_ms"] = timed(memory.graduation.run)[1]
            out["levels"] = memory.stats()["graduation"]["levels"]

            _, out["tasks_first_fold_ms"] = timed(memory.tasks.refresh)  # (the service's idle step does it first)
            out["session_start_session_mode"] = starts(memory, projects)
            state, out["endless_on_ms"] = timed(lambda: memory.endless.set_mode("endless"))
            out["endless_state"] = state
            out["endless_refresh_ms"] = timed(memory.endless.refresh)[1]
            out["endless_check_ms"] = timed(memory.endless.consolidate)[1]
            out["session_start_endless_mode"] = starts(memory, projects)
        finally:
            memory.close()
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
