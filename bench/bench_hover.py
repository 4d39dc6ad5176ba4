"""Hover latency of the language server at 100,000 events, through a real LSP client over stdio.

    .venv/bin/python bench/bench_hover.py [--store bench/out/store-100000-seed1-embedded] [--hovers 200]

Copies the store into a temporary directory (bench/out is never modified), starts ``python -m
claude_memory lsp`` with its data directory there (the server starts the memory service), opens one
workspace folder per project, and times ``textDocument/hover`` from the client's side:

- citation hovers: a document citing ``--hovers`` distinct memories, one hover each;
- code hovers, first time: ``--hovers`` files that occur in the events' ``files`` lists, each hovered on
  an identifier taken from the text of an event that touched it (the file's history + the symbol's
  mentions in its project);
- code hovers, again: the same hovers repeated (answered from the cache while the store is unchanged);
- line hovers on code Claude wrote: ``--hovers`` files with edit records, each opened with a text made of its
  records' inserted lines (newest first, as blame reads them), hovered on a line in the middle: blame of the buffer
  (the file's records and the alignment), the prompt behind the line, then the file's history. The store is opened
  once first, so that its migration and the edit records' backfill (timed) are done before the server starts.

Target: p50 <= 50 ms. Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from claude_memory.service.memory import Memory
from common import OUT, machine, percentile

IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")


def written(db: Path, count: int) -> list[tuple[str, str]]:
    """``count`` (file, text) pairs: files with edit records, their text the records' inserted lines, newest first."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT h.file, string_agg(h.text, chr(10) ORDER BY e.seq DESC, h.hunk_no) FROM edit_hunks h "
            "JOIN events e ON e.id = h.event_id WHERE h.text <> '' GROUP BY h.file ORDER BY hash(h.file) LIMIT ?",
            [count],
        ).fetchall()
    finally:
        con.close()
    return [(str(path), str(text)) for path, text in rows]


def sample(db: Path, count: int, rng: random.Random) -> tuple[list[str], list[tuple[str, str, str]]]:
    """``count`` citations, and ``count`` (file, project, symbol) triples from the store's own events."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        citations = [
            f"mem:{c}"
            for (c,) in con.execute(
                f"SELECT citation FROM events WHERE citation IS NOT NULL USING SAMPLE {int(count)} ROWS (reservoir, 7)"
            ).fetchall()
        ]
        rows = con.execute(
            "SELECT f, any_value(project), any_value(text) FROM "
            "(SELECT unnest(files) AS f, project, text FROM events WHERE len(files) > 0) GROUP BY f"
        ).fetchall()
    finally:
        con.close()
    rng.shuffle(rows)
    files: list[tuple[str, str, str]] = []
    for path, project, text in rows:
        words = [w for w in IDENT.findall(text or "") if w.lower() not in {"bash", "read", "edit", "write", "grep"}]
        if project and words and str(path).startswith(str(project)):
            files.append((str(path), str(project), rng.choice(words)))
        if len(files) >= count:
            break
    return citations, files


async def hover(client: Any, uri: str, line: int, character: int) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
    )
    return (time.perf_counter() - started) * 1000, result


def stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 50), 1),
        "p95_ms": round(percentile(values, 95), 1),
        "max_ms": round(max(values), 1),
    }


async def run(
    data: Path,
    claude_home: Path,
    citations: list[str],
    files: list[tuple[str, str, str]],
    claude_files: list[tuple[str, str]],
) -> dict[str, Any]:
    env = {**os.environ, "CLAUDE_MEMORY_HOME": str(data), "CLAUDE_CONFIG_DIR": str(claude_home)}
    env.pop("CLAUDE_MEMORY_MODEL_PATH", None)  # hovers need no model; the store is fully embedded anyway
    config = ClientServerConfig(server_command=[sys.executable, "-m", "claude_memory", "lsp"], server_env=env)
    client: Any = await config.start()
    projects = sorted({p for _, p, _ in files})
    started = time.perf_counter()
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=f"file://{p}", name=Path(p).name) for p in projects],
            )
        )
        notes = "file:///bench/notes.md"
        text = "".join(f"See [{c}] for that.\n" for c in citations)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=notes, language_id="markdown", version=1, text=text)
            )
        )
        first_ms, _ = await hover(client, notes, 0, 8)  # starts the service and warms it up
        startup = time.perf_counter() - started
        cited: list[float] = []
        empty = 0
        for line in range(1, len(citations)):
            ms, result = await hover(client, notes, line, 8)
            cited.append(ms)
            empty += result is None
        docs = []
        for path, _, symbol in files:
            uri = f"file://{path}"
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=f"x = {symbol}\n")
                )
            )
            docs.append(uri)
        cold: list[float] = []
        silent = 0
        for uri in docs:
            ms, result = await hover(client, uri, 0, 5)
            cold.append(ms)
            silent += result is None
        warm = [(await hover(client, uri, 0, 5))[0] for uri in docs]
        lines: list[float] = []
        attributed = 0
        for n, (path, text) in enumerate(claude_files):
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=f"file://{path}", language_id="plaintext", version=2 + n, text=text)
                )
            )
            middle = text.count("\n") // 2
            ms, result = await hover(client, f"file://{path}", middle, 0)
            lines.append(ms)
            attributed += result is not None and "Claude wrote" in str(result.contents)
        await client.shutdown_session()
    finally:
        await client.stop()
    return {
        "startup_s": round(startup, 2),
        "first_hover_ms": round(first_ms, 1),
        "citation_hover": {**stats(cited), "empty": empty},
        "code_hover_first": {**stats(cold), "silent": silent},
        "code_hover_repeat": stats(warm),
        "line_hover_on_claude_code": {**stats(lines), "attributed": attributed} if lines else None,
        "all_first_time": stats(cited + cold),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=OUT / "store-100000-seed1-embedded")
    parser.add_argument("--hovers", type=int, default=200)
    args = parser.parse_args()
    if not (args.store / "memory.duckdb").exists():
        raise SystemExit(f"No store at {args.store}; see bench/README.md (bench_hybrid.py --build-only).")
    rng = random.Random(42)
    with tempfile.TemporaryDirectory(prefix="bench-hover-") as tmp:
        data, claude_home = Path(tmp) / "data", Path(tmp) / "claude"
        started = time.perf_counter()
        shutil.copytree(args.store, data)
        copy_s = time.perf_counter() - started
        (claude_home / "projects").mkdir(parents=True)  # the service watches this, never the real ~/.claude
        started = time.perf_counter()
        Memory(data).close()  # migrations, and the edit records read again from the transcripts (once)
        migrate_s = time.perf_counter() - started
        citations, files = sample(data / "memory.duckdb", args.hovers, rng)
        claude_files = written(data / "memory.duckdb", args.hovers)
        events = duckdb.connect(str(data / "memory.duckdb"), read_only=True)
        count = events.execute("SELECT count(*) FROM events").fetchone()
        events.close()
        try:
            result = asyncio.run(run(data, claude_home, citations, files, claude_files))
            result["open_migrate_backfill_s"] = round(migrate_s, 2)
        finally:
            os.system(f"CLAUDE_MEMORY_HOME={data} {sys.executable} -m claude_memory stop >/dev/null 2>&1")
    report = {
        "store": str(args.store),
        "events": count[0] if count else 0,
        "copy_s": round(copy_s, 1),
        **result,
        "target": "p50 <= 50 ms",
        "machine": machine(),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
