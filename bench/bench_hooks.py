"""Hook latency: process start to JSON on stdout, with 100,000 events in the store.

    export CLAUDE_MEMORY_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-onnx
    .venv/bin/python bench/bench_hooks.py [--prompts 200] [--captures 100]

Runs the plugin's real hook command (hooks/claude-memory-hook: sh launcher, then ``python -S`` with the
stdlib-only client) as Claude Code does, one process per hook, against a warm memory service that owns
a copy of bench_hybrid.py's embedded 100k store (bench/out/store-100000-seed1-embedded; build it first).
UserPromptSubmit payloads carry prompts made of 1-3 corpus words or 4-9-word phrases of stored events,
with the cwd of a project in the store, so the service searches that project (hybrid) and packs what
is relevant. Capture hooks (PostToolUse) append to the spool and nudge the service. Printed beside the
bare interpreter's start (``python -S -c pass`` and ``python -c pass``), and beside the context request
alone on a warm connection (the service's part of a prompt hook). The hook client's bytecode is written
first, as ``claude-memory install`` does. Then ``--turns`` turns of a session: a prompt and its answer written to
the session's transcript and the Stop hook (the service reads them in), ``--think`` seconds of quiet (the person
reading and typing), then the next prompt's hook, timed: new events must be brought into the search's views, which
the service does in its quiet moments, not in the prompt's search. Budgets: UserPromptSubmit p50 <= 50 ms and
p95 <= 150 ms; capture p50 <= 40 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from claude_memory.client.connection import ServiceClient
from claude_memory.service.memory import Memory
from common import BENCH, OUT, machine, percentile, process_memory, service_status

HOOK = BENCH.parent / "hooks" / "claude-memory-hook"


class MemoryWatch:
    """The service's resident memory sampled every 50 ms on a thread: for each stage of the run, the most it held
    during the stage and what it held at its end (MB), so a peak is pinned on what caused it."""

    def __init__(self, pid: int) -> None:
        self.pid, self._high = pid, 0
        self.stages: list[dict[str, Any]] = []
        self._lock, self._done = threading.Lock(), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(0.05):
            rss = process_memory(self.pid).get("rss", 0)
            with self._lock:
                self._high = max(self._high, rss)

    def stage(self, name: str) -> None:
        now = process_memory(self.pid)
        with self._lock:
            high, self._high = max(self._high, now.get("rss", 0)), 0
        self.stages.append({"stage": name, "max_rss_mb": high, "end_rss_mb": now.get("rss", 0),
                            "anonymous_mb": now.get("anonymous", 0),
                            "file_backed_mb": now.get("file_backed", 0)})  # fmt: skip

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def timed(args: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(args, input=stdin, env=env, capture_output=True, check=False)
    return (time.perf_counter() - started) * 1000, done.stdout


def prompts(store: Path, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(prompt, project) pairs from the store's own text."""
    with Memory(store, read_only=True) as memory:
        rows = memory.con.execute(
            "SELECT text, project FROM events WHERE project IS NOT NULL USING SAMPLE 3000 ROWS (reservoir, 11)"
        ).fetchall()
    out: list[tuple[str, str]] = []
    for i in range(count):
        text, project = rng.choice(rows)
        words = re.findall(r"[A-Za-z][A-Za-z_']+", text)
        if not words:
            continue
        if i % 2 and len(words) > 9:
            start = rng.randrange(len(words) - 9)
            out.append((" ".join(words[start : start + rng.randint(4, 9)]), project))
        else:
            out.append((" ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))), project))
    return out


def turns(asks: list[tuple[str, str]], home: Path, env: dict[str, str], think: float) -> list[float]:
    """A session's turns: each appends a prompt and an answer to the session's transcript under the service's Claude
    home and fires the Stop hook naming it (the service reads the new lines in), then, ``think`` seconds later, the
    next prompt's hook: its ms."""
    folder = home / "projects" / "-bench-turns"
    folder.mkdir(parents=True, exist_ok=True)
    transcript, session = folder / "bench-turns.jsonl", "bench-turns"
    out: list[float] = []
    for i, (prompt, project) in enumerate(asks):
        when = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        common = {"sessionId": session, "timestamp": when, "cwd": project, "isSidechain": False}
        lines = [
            {**common, "type": "user", "uuid": f"turn-{i}-u", "message": {"role": "user", "content": prompt}},
            {**common, "type": "assistant", "uuid": f"turn-{i}-a", "parentUuid": f"turn-{i}-u",
             "message": {"id": f"msg_turn_{i}", "type": "message", "role": "assistant",
                         "content": [{"type": "text", "text": f"Done: {prompt} (turn {i})."}]}},
        ]  # fmt: skip
        with transcript.open("a") as fh:
            fh.writelines(json.dumps(line) + "\n" for line in lines)
        stop = {"session_id": session, "transcript_path": str(transcript), "cwd": project, "hook_event_name": "Stop"}
        timed([str(HOOK), "Stop"], json.dumps(stop).encode(), env)
        time.sleep(think)
        payload = {"session_id": session, "transcript_path": str(transcript), "cwd": project,
                   "hook_event_name": "UserPromptSubmit", "prompt": prompt}  # fmt: skip
        out.append(timed([str(HOOK), "UserPromptSubmit"], json.dumps(payload).encode(), env)[0])
    return out


def summary(name: str, values: list[float]) -> dict[str, Any]:
    return {"hook": name, "n": len(values), "p50_ms": round(percentile(values, 50), 1),
            "p95_ms": round(percentile(values, 95), 1), "max_ms": round(max(values), 1)}  # fmt: skip


def session_starts(
    client: ServiceClient, env: dict[str, str], count: int, fallback: list[str]
) -> tuple[list[float], int]:
    """SessionStart hooks in the projects with the most open tasks (each from a new session), else (no task folded
    yet: a store the service has just begun to fold) in the ``fallback`` projects: (milliseconds, how many listed
    open tasks)."""
    if not count:
        return [], 0
    open_tasks = client.call("tasks", {"open": True, "limit": 10_000})
    projects = sorted({t["project"] for t in open_tasks if t["project"]})[:count] or sorted(set(fallback))[:count]
    millis, listed = [], 0
    for i in range(count):
        payload = {"session_id": f"bench-start-{i}", "cwd": projects[i % len(projects)], "source": "startup",
                   "hook_event_name": "SessionStart", "transcript_path": ""}  # fmt: skip
        ms, out = timed([str(HOOK), "SessionStart"], json.dumps(payload).encode(), env)
        millis.append(ms)
        listed += b"Open tasks from earlier sessions" in out
    return millis, listed


def pre_edit_hooks(
    client: ServiceClient, work: Path, env: dict[str, str], count: int, rng: random.Random, watch: MemoryWatch
) -> tuple[list[float], int]:
    """PreToolUse hooks before Edits of a 2,000-line file whose every line a captured Write or Edit put there (each
    hook from a new session, so each one is answered with a note): (milliseconds, how many printed a note)."""
    if not count:
        return [], 0
    project = work / "proj"
    project.mkdir()
    path = project / "ledger.py"
    blocks = [
        [f"def ledger_{i}(entries, rate):", f'    """Ledger step {i}."""', f"    total_{i} = 0",
         "    for entry in entries:", f"        total_{i} += entry.amount * rate + {i}", f"    return total_{i}", ""]
        for i in range(2000 // 7)
    ]  # fmt: skip
    lines = [line for block in blocks for line in block]
    path.write_text("\n".join(lines) + "\n")
    for n, start in enumerate(range(0, len(lines), 200)):  # one call per 200 lines, as edits a session made
        chunk = "\n".join(lines[start : start + 200])
        patch = [{"oldStart": start + 1, "oldLines": 0, "newStart": start + 1, "newLines": 200,
                  "lines": ["+" + line for line in lines[start : start + 200]]}]  # fmt: skip
        client.call("capture", {"payload": {
            "hook_event_name": "PostToolUse", "session_id": "bench-writer", "cwd": str(project), "tool_name": "Edit",
            "tool_use_id": f"toolu_bench_edit_{n}", "tool_input": {"file_path": str(path), "old_string": "",
                                                                     "new_string": chunk},
            "tool_response": {"filePath": str(path), "structuredPatch": patch}}})  # fmt: skip
    watch.stage("10 captured Edits of 200 lines")
    millis, noted = [], 0
    for i in range(count):
        target = rng.choice([b for b in blocks if b[0]])
        change = {"file_path": str(path), "old_string": target[4], "new_string": target[4] + " + 1"}
        payload = {"session_id": f"bench-editor-{i}", "cwd": str(project), "hook_event_name": "PreToolUse",
                   "tool_name": "Edit", "tool_use_id": f"toolu_bench_pre_{i}", "tool_input": change}  # fmt: skip
        ms, out = timed([str(HOOK), "PreToolUse"], json.dumps(payload).encode(), env)
        millis.append(ms)
        noted += out.startswith(b'{"hookSpecificOutput"')
    return millis, noted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=OUT / "store-100000-seed1-embedded")
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--captures", type=int, default=100)
    parser.add_argument("--edits", type=int, default=100, help="PreToolUse hooks before an Edit of a file Claude wrote")
    parser.add_argument("--starts", type=int, default=50, help="SessionStart hooks in projects with open tasks")
    parser.add_argument("--settle", type=float, default=35.0, help="seconds of quiet at the end (memory handed back)")
    parser.add_argument("--turns", type=int, default=10, help="turns read in, each before a prompt")
    parser.add_argument("--think", type=float, default=3.0, help="seconds between a turn and the next prompt")
    args = parser.parse_args()
    if not (args.store / "memory.duckdb").exists():
        sys.exit(f"No store at {args.store}: build it with bench/bench_hybrid.py --build-only first.")
    rng = random.Random(5)
    work = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    data, home = work / "data", work / "claude"
    (home / "projects").mkdir(parents=True)
    shutil.copytree(args.store, data, ignore=shutil.ignore_patterns("service.*", "spool", "logs"))
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env |= {"CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_PYTHON": sys.executable}
    asks = prompts(data, 2 * args.prompts + 10 + args.turns, rng)  # before the service owns the store
    hooked, direct = asks[10 : 10 + args.prompts], asks[10 + args.prompts : 10 + 2 * args.prompts]
    after_turns = asks[10 + 2 * args.prompts :]  # hook processes; the service alone; prompts after a turn
    service = subprocess.Popen(
        [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(home), "--no-watch", "--quiet"], env=env
    )
    watch = MemoryWatch(service.pid)
    try:
        events = service_status(data, service)["store"]["events"]
        watch.stage("started")
        client = ServiceClient(data, timeout=120)
        for prompt, project in asks[:10]:  # warm-up: model, index, caches
            client.call("context", {"payload": {"hook_event_name": "UserPromptSubmit", "session_id": "warm",
                                                "cwd": project, "prompt": prompt}})  # fmt: skip
        watch.stage("warm-up: 10 context requests")
        # the hook client's bytecode, as `claude-memory install` writes it (hooks never compile it themselves)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(BENCH.parent / "server" / "claude_memory")],
                       check=True)  # fmt: skip
        bare_s = [timed([sys.executable, "-S", "-c", "pass"], b"", env)[0] for _ in range(50)]
        bare = [timed([sys.executable, "-c", "pass"], b"", env)[0] for _ in range(50)]
        prompt_ms: list[float] = []
        injected = 0
        for i, (prompt, project) in enumerate(hooked):
            payload = {"session_id": f"bench-{i}", "transcript_path": "", "cwd": project,
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt}  # fmt: skip
            ms, out = timed([str(HOOK), "UserPromptSubmit"], json.dumps(payload).encode(), env)
            prompt_ms.append(ms)
            injected += out.startswith(b'{"hookSpecificOutput"')
        watch.stage("UserPromptSubmit hooks")
        service_ms: list[float] = []  # other prompts of the same kind, on a warm connection: the service's part
        for i, (prompt, project) in enumerate(direct):
            started = time.perf_counter()
            client.call("context", {"payload": {"session_id": f"bench-{i}", "cwd": project,
                                                "hook_event_name": "UserPromptSubmit", "prompt": prompt}})  # fmt: skip
            service_ms.append((time.perf_counter() - started) * 1000)
        watch.stage("context requests")
        capture_ms: list[float] = []
        for i in range(args.captures):
            payload = {"session_id": "bench-capture", "cwd": "/tmp", "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": f"echo {i}"},
                       "tool_response": {"stdout": str(i), "stderr": ""},
                       "tool_use_id": f"toolu_bench_{i}"}  # fmt: skip
            capture_ms.append(timed([str(HOOK), "PostToolUse"], json.dumps(payload).encode(), env)[0])
        watch.stage("PostToolUse hooks")
        turn_ms = turns(after_turns, home, env, args.think)
        watch.stage(f"{len(turn_ms)} turns: a turn read in, {args.think:g} s, a prompt")
        edit_ms, noted = pre_edit_hooks(client, work, env, args.edits, rng, watch)
        watch.stage("PreToolUse hooks")
        start_ms, with_tasks = session_starts(client, env, args.starts, [project for _, project in hooked])
        watch.stage("SessionStart hooks")
        time.sleep(args.settle)  # the idle steps: new events embedded, then memory handed back (every 30 s)
        watch.stage(f"quiet {args.settle:g} s")
        watch.stop()
        rss_mb = client.call("status")["service"]["peak_rss_mb"]
        rows = [
            summary("python -S -c pass (bare interpreter, no site)", bare_s),
            summary("python -c pass (bare interpreter)", bare),
            summary("UserPromptSubmit (search + pack + inject)", prompt_ms),
            summary("  its context request alone (service side)", service_ms),
            *([summary("PostToolUse (spool + nudge)", capture_ms)] if capture_ms else []),
            *([summary(f"UserPromptSubmit {args.think:g} s after a turn", turn_ms)] if turn_ms else []),
            *([summary("PreToolUse before an Edit (blame + note)", edit_ms)] if edit_ms else []),
            *([summary("SessionStart (summary + open tasks + recent)", start_ms)] if start_ms else []),
        ]
        result = {"machine": machine(), "events": events, "injected": injected, "prompts": len(prompt_ms),
                  "noted": noted, "starts_with_open_tasks": with_tasks, "service_peak_rss_mb": rss_mb,
                  "service_memory": watch.stages, "results": rows}  # fmt: skip
        print(json.dumps(result, indent=2))
        print(f"\n{events:,} events in the store; {injected} of {len(prompt_ms)} prompts got context")
        print(f"{'hook':<48} {'p50':>8} {'p95':>8} {'max':>8}")
        for row in rows:
            print(f"{row['hook']:<48} {row['p50_ms']:>6.1f}ms {row['p95_ms']:>6.1f}ms {row['max_ms']:>6.1f}ms")
        print(f"service peak RSS: {rss_mb} MB; by stage (MB: most during it, at its end):")
        for stage in watch.stages:
            print(f"  {stage['stage']:<46} {stage['max_rss_mb']:>6} {stage['end_rss_mb']:>6}")
        client.call("shutdown")
        service.wait(timeout=120)
    finally:
        if service.poll() is None:
            service.terminate()
            service.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
