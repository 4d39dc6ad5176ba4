"""Fits the learned half of rule detection (``core/rule_model.py``) and writes the weights the package ships.

    .venv/bin/python bench/fit_rules.py [--threshold P] [--epochs 1000] [--no-write]

Examples, one per sentence (``insights.rule_features``, with the sentences beside it in its prompt):

- rules: in each prompt of the labelled sets of ``bench/preferences`` (:data:`SETS`: every one but ``unseen``)
  labelled with a rule, the sentences that name the rule's subject (all of them if none does);
- not rules: every sentence of the prompts labelled without one, and the user turns of LoCoMo dev and LongMemEval dev
  (../shared/bench) in which the extractor finds no rule, the sentences it would score (instructions about work):
  chat that states no rule for a coding assistant. Every other turn only, so the rest measures how often it fires
  there.

A logistic regression (numpy, full-batch gradient descent, the two classes weighted equally) over binary features.
It prints a leave-one-set-out cross-validation of the whole extractor (``insights.rules``: the marks, then the
learned half for the sentences they leave out), each labelled set held out in turn (how it does on a writer it has not
seen): pooled at every threshold, then per set, beside the marks alone, at the threshold it ships with (the lowest
whose pooled held-out precision is at least 0.95); then how many held-back chat turns each finds a rule in. Writes
``server/claude_memory/core/rule_weights.json`` unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from claude_memory.core import insights  # noqa: E402
from claude_memory.core.rule_model import WEIGHTS_FILE, RuleModel  # noqa: E402

SETS = (
    "prompts",
    "test",
    "holdout",
    "fresh",
    "blind",
    "novel",
    "stack",
    "polyglot",
    "cove",
    "kiln",
    "mesa",
    "delta",
    "ember",
    "fjord",
    "gale",
    "harbor",
    "islet",
    "juniper",
)
LABELLED = ROOT / "bench" / "preferences"
SHARED = ROOT.parent / "shared" / "bench"
OUT = ROOT / "server" / "claude_memory" / "core" / WEIGHTS_FILE
MARKS_ONLY = RuleModel(weights={}, bias=0.0, threshold=2.0, features=insights.FEATURES)  # never sure enough
KEEP = 0.005  # weights smaller than this are left out of the file
MIN_COUNT = 2  # a feature seen in one sentence only says nothing of the next writer
THRESHOLDS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
PRECISION = 0.95  # precision first: a wrong rule in every session costs more than a missed one


def labelled(name: str) -> list[dict[str, object]]:
    lines = (LABELLED / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def chat_turns() -> list[str]:
    """The user turns of LoCoMo dev's Claude Code tree and of LongMemEval dev, each once."""
    turns: dict[str, None] = {}
    for path in sorted((SHARED / "locomo" / "dev" / "claude_home").rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            row = json.loads(line)
            message = row.get("message")
            if row.get("type") == "user" and isinstance(message, dict) and isinstance(message.get("content"), str):
                turns[message["content"]] = None
    with gzip.open(SHARED / "longmemeval" / "longmemeval_s_dev.json.gz", "rt") as handle:
        for question in json.load(handle):
            for session in question["haystack_sessions"]:
                turns.update((t["content"], None) for t in session if t["role"] == "user")
    return list(turns)


def _scored(sentence: str) -> bool:
    """A sentence the learned half could be asked about: an instruction about work, not a finding or a narration."""
    low = insights._plain(sentence)
    checks = insights._instruction(low) and insights._about_work(sentence) and insights._askable(sentence)
    return checks and not insights._DESCRIBES.search(low)


def examples(rows: Iterable[dict[str, object]]) -> tuple[list[frozenset[str]], list[int]]:
    features: list[frozenset[str]] = []
    labels: list[int] = []
    for row in rows:
        sentences = insights._sentences(str(row["prompt"]))
        rule = row["rule"]
        if not isinstance(rule, dict):
            features += _in_context(sentences, range(len(sentences)))
            labels += [0] * len(sentences)
            continue
        subject = [w for w in re.findall(r"[a-z0-9.]+", str(rule["subject"]).lower()) if len(w) > 2]
        named = [n for n, s in enumerate(sentences) if any(w in s.lower() for w in subject)] or range(len(sentences))
        features += _in_context(sentences, named)
        labels += [1] * len(named)
    return features, labels


def _in_context(sentences: list[str], chosen: Iterable[int]) -> list[frozenset[str]]:
    """The features of the ``chosen`` sentences of a prompt, each with the sentences beside it."""
    return [insights.rule_features(sentences[n], *insights.beside(sentences, n)) for n in chosen]


def chat_examples(turns: Iterable[str]) -> list[frozenset[str]]:
    found: list[frozenset[str]] = []
    for turn in turns:
        if not insights.rules(turn, MARKS_ONLY):
            sentences = insights._sentences(turn)
            found += _in_context(sentences, [n for n, s in enumerate(sentences) if _scored(s)])
    return found


def fit(features: list[frozenset[str]], labels: list[int], threshold: float, epochs: int) -> RuleModel:
    counts = Counter(f for found in features for f in found)
    names = sorted(f for f, n in counts.items() if n >= MIN_COUNT)
    column = {name: n for n, name in enumerate(names)}
    matrix = np.zeros((len(features), len(names)), np.float32)
    for row, found in enumerate(features):
        matrix[row, [column[f] for f in found if f in column]] = 1.0
    y = np.asarray(labels, np.float32)
    share = float(y.mean())
    balance = np.where(y == 1, 0.5 / share, 0.5 / (1 - share)).astype(np.float32)
    weights = np.zeros(len(names), np.float32)
    bias = 0.0
    for _ in range(epochs):
        p = 1.0 / (1.0 + np.exp(-(matrix @ weights + bias)))
        gradient = (p - y) * balance
        weights -= 0.5 * (matrix.T @ gradient) / len(y)
        bias -= 0.5 * float(gradient.mean())
    kept = {name: round(float(w), 4) for name, w in zip(names, weights, strict=True) if abs(w) >= KEEP}
    return RuleModel(weights=kept, bias=round(bias, 4), threshold=threshold, features=insights.FEATURES)


def scores(model: RuleModel, rows: list[dict[str, object]]) -> tuple[int, int, int]:
    """True positives, false positives and misses of ``insights.rules`` with ``model``, per prompt."""
    tp = fp = fn = 0
    for row in rows:
        found, wanted = bool(insights.rules(str(row["prompt"]), model)), row["rule"] is not None
        tp, fp, fn = tp + (found and wanted), fp + (found and not wanted), fn + (wanted and not found)
    return tp, fp, fn


def _precision(tp: int, fp: int, fn: int) -> float:
    return tp / max(1, tp + fp)


def _figures(tp: int, fp: int, fn: int) -> str:
    return f"{_precision(tp, fp, fn):.3f} / {tp / max(1, tp + fn):.3f}"


def _training(
    sets: dict[str, list[dict[str, object]]], chat: list[frozenset[str]], but: str = ""
) -> tuple[list[frozenset[str]], list[int]]:
    features, labels = chat[:], [0] * len(chat)
    for name, rows in sets.items():
        if name != but:
            more, more_labels = examples(rows)
            features += more
            labels += more_labels
    return features, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = f"the lowest of {THRESHOLDS} whose held-out precision, pooled, is at least {PRECISION}"
    parser.add_argument("--threshold", type=float, help=f"probability from which a sentence is a rule ({default})")
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--no-write", action="store_true", help="cross-validate only")
    args = parser.parse_args()
    sets = {name: labelled(name) for name in SETS}
    turns = chat_turns()
    trained_on, held_back = turns[::2], turns[1::2]
    chat = chat_examples(trained_on)
    print(f"chat: {len(turns)} user turns, {len(chat)} sentences to learn from", flush=True)
    folds = {held: fit(*_training(sets, chat, but=held), 1.0, args.epochs) for held in SETS}
    marks = {held: scores(MARKS_ONLY, sets[held]) for held in SETS}
    held_out = {
        threshold: {held: scores(replace(model, threshold=threshold), sets[held]) for held, model in folds.items()}
        for threshold in THRESHOLDS
    }
    print("threshold | held out, pooled P / R", flush=True)
    for threshold, found in held_out.items():
        print(f"{threshold:9} | {_figures(*np.sum(list(found.values()), axis=0))}", flush=True)
    chosen = args.threshold or next(
        (t for t, found in held_out.items() if _precision(*np.sum(list(found.values()), axis=0)) >= PRECISION),
        THRESHOLDS[-1],
    )
    chosen_out = held_out.get(chosen) or {h: scores(replace(m, threshold=chosen), sets[h]) for h, m in folds.items()}
    print(f"held out   | marks alone P / R | marks + learned at {chosen} P / R", flush=True)
    for held in SETS:
        print(f"{held:10} | {_figures(*marks[held]):17} | {_figures(*chosen_out[held])}", flush=True)
    pooled_marks, pooled = np.sum(list(marks.values()), axis=0), np.sum(list(chosen_out.values()), axis=0)
    print(f"{'pooled':10} | {_figures(*pooled_marks):17} | {_figures(*pooled)}", flush=True)
    model = fit(*_training(sets, chat), chosen, args.epochs)
    fires = [sum(1 for turn in held_back if insights.rules(turn, m)) for m in (MARKS_ONLY, model)]
    print(f"held-back chat turns with a rule: {fires[0]} of {len(held_back)} by the marks, {fires[1]} with the model")
    print(f"model: {len(model.weights)} weights, threshold {model.threshold}")
    if not args.no_write:
        OUT.write_text(json.dumps(model.to_json(), indent=0, sort_keys=True) + "\n")
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
