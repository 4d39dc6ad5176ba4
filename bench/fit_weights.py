"""Fit the ranking's weights on both dev benchmarks at once, with cross-validation across conversations.

    .venv/bin/python bench/fit_weights.py --locomo STORE --lme STORE --lme-qrels QRELS [--mode hybrid]
                                          [--folds 2] [--rounds 3] [--fix NAME=VALUE ...]

The engine's fusion (:func:`claude_memory.core.ranking.fuse`) is a small model over the signals search already
computes (BM25 and its query coverage, the next event's BM25, contextual and plain cosines, the time the query
names, the text priors, the session, follow-ups); its weights are the model's parameters. This script gathers
every question's candidates once (:func:`claude_memory.service.search.gather`, the same call the CLI makes), then
fits the weights by coordinate ascent on the mean of turn recall@5 and @10, each benchmark counting as much as
the other whatever its size (LoCoMo dev categories 1-4: 1,500 questions over a few conversations; LongMemEval
dev: 97 questions, one haystack each), so that a weight cannot buy one set's recall with the other's.

Cross-validation: conversations (projects) are dealt into ``--folds`` folds on each benchmark; weights fitted on
the other folds are scored on each held-out fold, and the held-out figures are printed beside the shipped
weights' on the same folds. The weights to ship are then fitted on everything. Prints JSON lines; the last one
holds the fitted weights (``Weights`` field overrides) to copy into ``core/ranking.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, fields, replace
from typing import Any

from claude_memory.core.filters import EventFilters
from claude_memory.core.ranking import HYBRID, KEYWORD, Weights
from claude_memory.service.memory import Memory
from claude_memory.service.search import Candidates, gather
from ranking_lab import lme_questions, locomo_questions, retrieval, store_args

# Weights fitted here: the ones fuse reads. BM25's k1 and b and the cosines' context shape the candidates before
# fusion, so they are fixed per run (--fix k1=1.2 --fix b=0.75).
FITTED = (
    "dense",
    "coordination",
    "next_keyword",
    "date",
    "session",
    "follow",
    "follow_question",
    "follow_user",
    "substance",
    "question",
    "names_time",
    "recency",
    "chunk_penalty",
    "own_words",
)
STEPS = (0.0, 0.5, 0.75, 1.25, 1.5, 2.0)  # multiples of the current value tried for each weight
START = {
    "coordination": 0.25,
    "date": 0.1,
    "question": 0.05,
    "names_time": 0.1,
    "recency": 0.01,
    "chunk_penalty": 0.05,
    "own_words": 0.1,
}  # when at 0


class Question:
    __slots__ = ("candidates", "evidence", "project", "uuids")

    def __init__(self, candidates: Candidates, evidence: set[str], project: str, uuids: list[str | None]) -> None:
        self.candidates, self.evidence, self.project, self.uuids = candidates, evidence, project, uuids


def collect(memory: Memory, questions: list[dict[str, Any]], mode: str, weights: Weights) -> list[Question]:
    uuid_of = dict(memory.con.execute("SELECT id, source_uuid FROM events").fetchall())
    out = []
    for q in questions:
        filters, as_of = EventFilters(project=q["project"]), q.get("as_of")  # (LongMemEval's questions are dated)
        found = gather(memory.con, retrieval(memory, weights, mode), q["query"], filters, 10, mode, as_of=as_of)
        out.append(Question(found, q["evidence"], q["project"], [uuid_of.get(int(i)) for i in found.facts.ids]))
    return out


def recall(questions: list[Question], weights: Weights) -> tuple[float, float]:
    r5 = r10 = 0.0
    for q in questions:
        order = q.candidates.fuse(weights).order[:10]
        top = [q.uuids[int(row)] for row in order]
        r5 += len(q.evidence & set(top[:5])) / len(q.evidence)
        r10 += len(q.evidence & set(top)) / len(q.evidence)
    n = max(len(questions), 1)
    return 100 * r5 / n, 100 * r10 / n


def per_set(sets: list[list[Question]], weights: Weights) -> list[float]:
    return [sum(recall(qs, weights)) / 2 for qs in sets]


def fit(sets: list[list[Question]], start: Weights, rounds: int, fixed: set[str], tolerance: float) -> Weights:
    """Coordinate ascent: a step is taken when the mean over the sets gains and no set loses more than
    ``tolerance`` points (of its mean of recall@5 and @10) against the start: no trading one for the other."""
    floor = [x - tolerance for x in per_set(sets, start)]
    best, best_score = start, sum(per_set(sets, start)) / len(sets)
    for _ in range(rounds):
        improved = False
        for name in FITTED:
            if name in fixed:
                continue
            current = getattr(best, name)
            base = current or START.get(name, 0.1)
            for step in STEPS:
                value = round(base * step, 4)
                if value == current or (name == "dense" and value > 1):
                    continue
                trial = replace(best, **{name: value})
                scores = per_set(sets, trial)
                score = sum(scores) / len(scores)
                fair = all(x >= f for x, f in zip(scores, floor, strict=True))
                if fair and score > best_score + 0.05:  # a real gain, not noise from one question
                    best, best_score, improved = trial, score, True
                    current = value
        if not improved:
            break
    return best


# What switching one signal off means in weights (service.search and core.ranking say what each does).
ABLATIONS = {
    "coverage weighting": {"coordination": 0.0},
    "next event's BM25": {"next_keyword": 0.0},
    "substance (length prior)": {"substance": 0.0},
    "short-question penalty": {"question": 0.0},
    "time bonus (names a time, 'when')": {"names_time": 0.0},
    "date window": {"date": 0.0},
    "follow-ups": {"follow": 0.0, "follow_question": 0.0, "follow_user": 0.0},
    "session prior": {"session": 0.0},
    "recency": {"recency": 0.0},
    "own words (the user's prompts, for a question about the user)": {"own_words": 0.0},
    "semantic (keyword only)": {"dense": 0.0},
}


def ablate(data: dict[str, list[Question]], weights: Weights) -> None:
    full = table(data, weights)
    print(json.dumps({"ablation": "none (all signals)", **full}), flush=True)
    for name, overrides in ABLATIONS.items():
        cut = table(data, replace(weights, **overrides))
        delta = {s: [round(c - f, 1) for c, f in zip(cut[s], full[s], strict=True)] for s in cut}
        print(json.dumps({"ablation": name, **cut, "delta": delta}), flush=True)


def folds(questions: list[Question], k: int) -> list[list[Question]]:
    projects = sorted({q.project for q in questions})
    which = {p: i % k for i, p in enumerate(projects)}
    return [[q for q in questions if which[q.project] == i] for i in range(k)]


def table(sets: dict[str, list[Question]], weights: Weights) -> dict[str, list[float]]:
    return {name: [round(x, 1) for x in recall(qs, weights)] for name, qs in sets.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    store_args(parser, "hybrid")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="0: no fitting, only the ablations of the start")
    parser.add_argument("--tolerance", type=float, default=0.2, help="points a set may lose (default 0.2)")
    parser.add_argument("--fix", action="append", default=[], help="NAME=VALUE: a weight held at VALUE")
    parser.add_argument("--start", type=json.loads, default={}, help='JSON {"NAME": VALUE}: fitted from there')
    parser.add_argument("--from-keyword", action="store_true", help="start from KEYWORD's weights (dense kept)")
    args = parser.parse_args()
    shipped = KEYWORD if args.mode == "keyword" else HYBRID
    fixed = {}
    for item in args.fix:
        name, _, value = item.partition("=")
        if name not in {f.name for f in fields(Weights)}:
            raise SystemExit(f"Weights has no field {name!r}.")
        fixed[name] = float(value)
    base = replace(KEYWORD, dense=shipped.dense, context=shipped.context) if args.from_keyword else shipped
    start = replace(base, **{**args.start, **fixed})
    started = time.perf_counter()
    data: dict[str, list[Question]] = {}
    for name, path, questions in (
        ("locomo", args.locomo, locomo_questions()),
        ("lme", args.lme, lme_questions(args.lme_qrels)),
    ):
        memory = Memory(path, read_only=True)
        data[name] = collect(memory, questions, args.mode, start)
        memory.close()
    print(json.dumps({"gathered_s": round(time.perf_counter() - started, 1)}), flush=True)
    print(json.dumps({"weights": "shipped", **table(data, shipped)}), flush=True)
    print(json.dumps({"weights": "start", **table(data, start)}), flush=True)

    if args.rounds == 0:
        ablate(data, start)
        return
    split = {name: folds(qs, args.folds) for name, qs in data.items()}
    for i in range(args.folds):
        train = [[q for j, fold in enumerate(parts) if j != i for q in fold] for parts in split.values()]
        fitted = fit(train, start, args.rounds, set(fixed), args.tolerance)
        held = {name: parts[i] for name, parts in split.items()}
        print(json.dumps({"fold": i, "held_out_shipped": table(held, shipped), "held_out_fitted": table(held, fitted)}))
    final = fit(list(data.values()), start, args.rounds, set(fixed), args.tolerance)
    changed = {k: v for k, v in asdict(final).items() if v != getattr(shipped, k)}
    print(json.dumps({"weights": "fitted", **table(data, final), "overrides": changed}), flush=True)
    ablate(data, final)


if __name__ == "__main__":
    sys.exit(main())
