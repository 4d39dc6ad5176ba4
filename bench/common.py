"""Helpers shared by the benchmark scripts (not a test module: benchmarks print figures, they assert nothing)."""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb

from claude_memory.client.connection import ServiceClient, ServiceUnavailable

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"


def load_corpus_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_corpus", BENCH / "corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_corpus"] = module
    spec.loader.exec_module(module)
    return module


def corpus_dir(events: int, seed: int) -> tuple[Path, Any]:
    """A generated Claude home with ``events`` events, cached under bench/out/."""
    corpus = load_corpus_module()
    home = OUT / f"corpus-{events}-seed{seed}"
    marker = home / ".truth"
    if not marker.exists():
        import shutil

        shutil.rmtree(home, ignore_errors=True)
        truth = corpus.generate(home, events, seed=seed)
        marker.write_text(str(truth.events()))
    return home, int(marker.read_text())


def machine() -> dict[str, Any]:
    mem_kb = 0
    try:
        with open("/proc/meminfo") as fh:
            mem_kb = int(fh.readline().split()[1])
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_kb / 2**20, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def process_memory(pid: int | str = "self") -> dict[str, int]:
    """A process's resident memory (MB) from /proc (Linux), split into anonymous pages and pages of mapped files
    (the model's and the vector copy's: the kernel can drop those under pressure), and its peak; empty elsewhere."""
    fields = {"VmRSS": "rss", "RssAnon": "anonymous", "RssFile": "file_backed", "VmHWM": "peak"}
    found: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                name, _, value = line.partition(":")
                if name in fields:
                    found[fields[name]] = round(int(value.split()[0]) / 1024)
    except OSError:
        pass
    return found


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def corpus_queries(con: duckdb.DuckDBPyConnection, count: int, rng: Any) -> list[tuple[str, str | None]]:
    """``count`` queries of 1-3 words drawn from the stored events' own vocabulary (so they hit), every
    second one scoped to the project of its first word's event: (query, project or None)."""
    sample = con.execute("SELECT text, project FROM events USING SAMPLE 2000 ROWS (reservoir, 7)").fetchall()
    words = [(w, project) for text, project in sample for w in re.findall(r"[A-Za-z][A-Za-z_]{3,}", text)]
    queries: list[tuple[str, str | None]] = []
    for i in range(count):
        picks = rng.sample(words, rng.randint(1, 3))
        scoped = i % 2 == 1
        queries.append((" ".join(w for w, _ in picks), picks[0][1] if scoped else None))
    return queries


def service_status(data: Path, service: subprocess.Popen[bytes], seconds: float = 120) -> dict[str, Any]:
    """The status of the service just started as ``service`` on ``data``, once it answers (it opens its store
    first). Never starts one itself: a second start while the first is opening would only be refused."""
    deadline = time.monotonic() + seconds
    with ServiceClient(data, timeout=seconds) as client:
        while True:
            try:
                status: dict[str, Any] = client.call("status")
                return status
            except ServiceUnavailable:
                if time.monotonic() > deadline or service.poll() is not None:
                    sys.exit("The memory service did not start.")
                time.sleep(0.2)
