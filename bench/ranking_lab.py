"""In-process ranking experiments on the two dev benchmarks: the same search the CLI runs, with other weights.

    .venv/bin/python bench/ranking_lab.py --locomo STORE --lme STORE --lme-qrels QRELS [--mode keyword]
                                          [--variant NAME=JSON ...]

STOREs are data directories into which ``claude-memory import`` brought LoCoMo dev's ``claude_home`` and the
converted LongMemEval dev tree (``bench/dev_eval.py`` builds and keeps them). Each ``--variant`` is a set of
:class:`~claude_memory.core.ranking.Weights` overrides (JSON object, BM25's ``k1`` and ``b`` included) of the
mode's shipped ranking (``ranking.KEYWORD`` in keyword mode, else ``ranking.HYBRID``), which is the first variant.
Prints turn recall@5 / @10 and MRR per variant for LoCoMo cats 1-4 and LongMemEval, side by side.
A quick loop for ablations: the figures to report come from ``bench/dev_eval.py`` (the real CLI).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from claude_memory.core.filters import EventFilters
from claude_memory.core.ranking import HYBRID, KEYWORD, Weights
from claude_memory.service.memory import Memory
from claude_memory.service.search import Retrieval, search
from dev_eval import asked_at

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "bench"
DEV_EVAL = ROOT / "bench" / "out" / "dev-eval"  # where bench/dev_eval.py keeps its stores


def store_args(parser: argparse.ArgumentParser, mode: str) -> None:
    """The options of both ranking scripts: the two dev stores (default: dev_eval.py's) and the search mode."""
    parser.add_argument("--locomo", type=Path, default=DEV_EVAL / "locomo-dev" / "store")
    parser.add_argument("--lme", type=Path, default=DEV_EVAL / "longmemeval-dev" / "store")
    parser.add_argument("--lme-qrels", type=Path, default=DEV_EVAL / "lme" / "tree" / "qrels.jsonl")
    parser.add_argument("--mode", default=mode)


def retrieval(memory: Memory, weights: Weights, mode: str) -> Retrieval:
    """What ``Memory.search`` builds, with ``weights`` as the mode's ranking."""
    found = Retrieval(memory.tokenizer, events=memory._events, postings=memory._postings)
    found.weights = found.keyword_weights = weights
    if mode != "keyword" and memory.embedder.available:
        found.embedder, found.index = memory.embedder, memory.vector_index()
    return found


def locomo_questions() -> list[dict[str, Any]]:
    path = SHARED / "locomo" / "dev" / "qrels.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [
        {"query": q["question"], "project": q["project"], "evidence": set(q["evidence_uuids"]), "cat": q["category"]}
        for q in rows
        if q["category"] in (1, 2, 3, 4) and q["evidence_uuids"]
    ]


def lme_questions(qrels: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in qrels.read_text().splitlines() if line.strip()]
    return [
        {"query": q["question"], "project": q["project"], "evidence": set(q["evidence_uuids"]), "cat": q["category"],
         "as_of": datetime.fromisoformat(asked_at(q["question_date"])) if q.get("question_date") else None}
        for q in rows
        if q["evidence_uuids"]
    ]  # fmt: skip


def run(memory: Memory, questions: list[dict[str, Any]], weights: Weights, mode: str) -> dict[str, float]:
    uuid_of = dict(memory.con.execute("SELECT id, source_uuid FROM events").fetchall())
    r5 = r10 = mrr = 0.0
    started = time.perf_counter()
    for q in questions:
        found = retrieval(memory, weights, mode)
        filters = EventFilters(project=q["project"])
        hits, _ = search(memory.con, found, q["query"], filters, 10, mode, as_of=q.get("as_of"))
        uuids = [uuid_of.get(h.event.id) for h in hits]
        ev = q["evidence"]
        r5 += len(ev & set(uuids[:5])) / len(ev)
        r10 += len(ev & set(uuids[:10])) / len(ev)
        mrr += next((1 / rank for rank, u in enumerate(uuids, 1) if u in ev), 0.0)
    n = len(questions)
    return {
        "r@5": round(100 * r5 / n, 1),
        "r@10": round(100 * r10 / n, 1),
        "mrr": round(100 * mrr / n, 1),
        "s": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    store_args(parser, "keyword")
    parser.add_argument("--variant", action="append", default=[], help="NAME=JSON of Weights overrides")
    args = parser.parse_args()
    variants: dict[str, dict[str, Any]] = {"shipped": {}}
    for item in args.variant:
        name, _, body = item.partition("=")
        variants[name] = json.loads(body)
    sets = {"locomo": (args.locomo, locomo_questions()), "lme": (args.lme, lme_questions(args.lme_qrels))}
    memories = {name: Memory(path, read_only=True) for name, (path, _) in sets.items()}
    for name, overrides in variants.items():
        weights = replace(KEYWORD if args.mode == "keyword" else HYBRID, **overrides)
        row = {s: run(memories[s], qs, weights, args.mode) for s, (_, qs) in sets.items()}
        print(json.dumps({"variant": name, **row}), flush=True)
    for memory in memories.values():
        memory.close()


if __name__ == "__main__":
    sys.exit(main())
