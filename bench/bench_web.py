"""The dashboard at 100,000 events: first load of the overview in a real browser, and the HTTP API's latency
through a real HTTP client against the real server (``claude-memory web`` in front of the memory service).

    export CLAUDE_MEMORY_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-onnx
    .venv/bin/python bench/bench_web.py [--store bench/out/store-100000-seed1-embedded] [--runs 40]

The store is a copy of bench_hybrid.py's embedded 100k store (build it first). The service is warmed with one
of each call, as a dashboard left open would have it. "First load" is a new browser context (no cookie, no
cache) opening a one-time sign-in address until the overview shows its counts, its chart and the embedding
pipeline (all four API calls answered and drawn); the first of them (nothing cached in the page, the service
warm) and the median of the rest are reported. API calls are GET with the token on one keep-alive connection;
search queries are drawn from the store's own text. Budgets (DESIGN §6 and issue 21): first load <= 1 s, API
p50 <= 50 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import httpx

from common import OUT, corpus_queries, machine, percentile, service_status

FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip


def summary(name: str, values: list[float]) -> dict[str, Any]:
    return {"what": name, "n": len(values), "p50_ms": round(percentile(values, 50), 1),
            "p95_ms": round(percentile(values, 95), 1), "max_ms": round(max(values), 1)}  # fmt: skip


def first_loads(sign_in: Callable[[], str], count: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    loads: list[float] = []
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium, args=FLAGS)
        for _ in range(count):
            context = browser.new_context()
            page = context.new_page()
            url = sign_in()  # a new one-time address each time (asked before the clock starts)
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_selector('[data-testid="stat-events"]')
            page.wait_for_selector("#activity-chart rect")
            page.wait_for_selector('[data-testid="embedded"]')
            loads.append((time.perf_counter() - started) * 1000)
            context.close()
        browser.close()
    return loads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=OUT / "store-100000-seed1-embedded")
    parser.add_argument("--runs", type=int, default=40, help="calls of each API operation")
    parser.add_argument("--loads", type=int, default=10, help="first loads of the overview")
    args = parser.parse_args()
    if not (args.store / "memory.duckdb").exists():
        sys.exit(f"No store at {args.store}: build it with bench/bench_hybrid.py --build-only first.")
    rng = random.Random(21)
    work = Path(tempfile.mkdtemp(prefix="bench-web-"))
    data, home = work / "data", work / "claude"
    (home / "projects").mkdir(parents=True)
    shutil.copytree(args.store, data, ignore=shutil.ignore_patterns("service.*", "spool", "logs", "web-token"))
    with duckdb.connect(str(data / "memory.duckdb"), read_only=True) as con:
        queries = [q for q, _ in corpus_queries(con, args.runs, rng)]
        citations = [r[0] for r in con.execute("SELECT citation FROM events USING SAMPLE 200 ROWS").fetchall() if r[0]]
        sessions = [r[0] for r in con.execute("SELECT session_id FROM sessions USING SAMPLE 50 ROWS").fetchall()]
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env |= {"CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_PYTHON": sys.executable}
    service = subprocess.Popen(
        [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(home), "--no-watch", "--quiet"], env=env
    )
    web: subprocess.Popen[str] | None = None
    try:
        events = service_status(data, service)["store"]["events"]
        web = subprocess.Popen([sys.executable, "-m", "claude_memory", "web", "--port", "0", "--no-start"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
        assert web.stdout is not None
        login_url = web.stdout.readline().rsplit(" ", 1)[1].strip()
        base, token = login_url.split("/login")[0], (data / "web-token").read_text().strip()
        calls: dict[str, Any] = {
            "stats": lambda i: {},
            "activity (30 days)": lambda i: {"days": 30},
            "status": lambda i: {},
            "sessions (50)": lambda i: {"limit": 50},
            "projects": lambda i: {},
            "history (50)": lambda i: {"limit": 50},
            "changes (live poll)": lambda i: {"after_seq": 10**9},
            "history of a session (timeline page)": lambda i: {"session": sessions[i % len(sessions)], "limit": 10000},
            "details (memory page)": lambda i: {"refs": citations[i % len(citations)], "via": "bench"},
            "search keyword": lambda i: {"query": queries[i % len(queries)], "mode": "keyword", "limit": 20},
            "search hybrid": lambda i: {"query": queries[i % len(queries)], "mode": "hybrid", "limit": 20},
            "insights": lambda i: {},
            "tasks": lambda i: {"limit": 500},
        }
        rows = []
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            for name, params in calls.items():
                op = name.split(" ")[0]
                assert http.get(f"/api/v1/{op}", params=params(0)).status_code == 200, name  # warm
                times = []
                for i in range(1, args.runs + 1):
                    started = time.perf_counter()
                    answer = http.get(f"/api/v1/{op}", params=params(i))
                    times.append((time.perf_counter() - started) * 1000)
                    assert answer.status_code == 200, answer.text
                rows.append(summary(name, times))
            loads = first_loads(lambda: str(http.post("/signin").json()["url"]), args.loads)
            rss = http.get("/api/v1/status").json()["service"]["peak_rss_mb"]
            status = Path(f"/proc/{web.pid}/status").read_text().splitlines()
            web_rss = next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmHWM:"))
        result = {"machine": machine(), "events": events, "first_load_ms": {"first": round(loads[0], 1),
                  "p50_rest": round(percentile(loads[1:], 50), 1), "max": round(max(loads), 1)},
                  "api": rows, "service_peak_rss_mb": rss, "web_peak_rss_mb": web_rss}  # fmt: skip
        print(json.dumps(result, indent=2))
        print(
            f"\n{events:,} events; overview first load {loads[0]:.0f} ms, then p50 {percentile(loads[1:], 50):.0f} ms"
        )
        print(f"peak RSS: the dashboard process {web_rss} MB, the memory service {rss} MB")
        print(f"{'GET /api/v1/...':<40} {'p50':>8} {'p95':>8} {'max':>8}")
        for row in rows:
            print(f"{row['what']:<40} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['max_ms']:>8}")
    finally:
        if web is not None:
            web.terminate()
            web.wait(20)
        subprocess.run([sys.executable, "-m", "claude_memory", "stop"], env=env, capture_output=True, timeout=120)
        service.wait(120)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
