"""The plain-BM25 baseline on the two dev benchmarks: what the product's ranking must beat.

    .venv/bin/python bench/plain_bm25.py

Okapi BM25 (k1 1.5, b 0.75), Lucene's 33 English stopwords, the Snowball English stemmer (PyStemmer), over
every user and assistant turn of the benchmark's Claude Code transcripts, each question searching its own
project (conversation or haystack) only. Turn-level recall@5 / @10 against the qrels' evidence uuids (mean
over questions of the share of evidence turns in the top k; questions without evidence skipped): LoCoMo dev
categories 1-4 (``bench/locomo_eval.py``'s headline) and LongMemEval dev (its ``score.py``'s ALL row).
Reads ../shared in place (LongMemEval is converted into a temporary directory). Prints JSON.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import Stemmer

SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench"
STOPWORDS = frozenset(
    ("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
     "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
     "will", "with")
)  # fmt: skip
K1, B = 1.5, 0.75
_WORD = re.compile(r"[a-z0-9]+")


def read_turns(home: Path) -> dict[str, dict[str, Any]]:
    """uuid -> text, session id and project (cwd) of every user and assistant line of the tree's transcripts."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((home / "projects").rglob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").split("\n"):  # (splitlines would cut at U+2028)
            if not raw.strip():
                continue
            line = json.loads(raw)
            if line.get("type") not in ("user", "assistant") or not line.get("uuid"):
                continue
            content = (line.get("message") or {}).get("content")
            if isinstance(content, list):
                content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
            if isinstance(content, str) and content.strip():
                session = str(line.get("sessionId") or path.stem)
                out[str(line["uuid"])] = {"text": content, "session": session, "project": str(line.get("cwd"))}
    return out


def turns(home: Path) -> dict[str, list[tuple[str, str]]]:
    """project → [(uuid, text)] for every user and assistant line of the tree's transcripts."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for uuid, turn in read_turns(home).items():
        found[turn["project"]].append((uuid, turn["text"]))
    return found


class Index:
    def __init__(self, docs: list[tuple[str, str]], stem: Any) -> None:
        self.stem = stem
        self.ids = [uuid for uuid, _ in docs]
        self.tfs = [Counter(self.tokens(text)) for _, text in docs]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lengths) / max(1, len(self.lengths))
        df: Counter[str] = Counter(term for tf in self.tfs for term in tf)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def tokens(self, text: str) -> list[str]:
        words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
        return list(self.stem.stemWords(words))

    def top(self, query: str, k: int) -> list[str]:
        terms = [t for t in set(self.tokens(query)) if t in self.idf]
        scores = []
        for i, tf in enumerate(self.tfs):
            norm = K1 * (1 - B + B * self.lengths[i] / self.avg)
            s = sum(self.idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            if s > 0:
                scores.append((s, i))
        scores.sort(key=lambda x: -x[0])
        return [self.ids[i] for _, i in scores[:k]]


def recall(qrels: list[dict[str, Any]], home: Path, keep: Any) -> dict[str, Any]:
    stem = Stemmer.Stemmer("english")
    by_project = turns(home)
    indexes: dict[str, Index] = {}
    rows = []
    for q in qrels:
        evidence = set(q.get("evidence_uuids") or ())
        if not evidence or not keep(q):
            continue
        project = q["project"]
        if project not in indexes:
            indexes[project] = Index(by_project.get(project, []), stem)
        ranked = indexes[project].top(q["question"], 10)
        rows.append({k: len(set(ranked[:k]) & evidence) / len(evidence) for k in (5, 10)})
    n = len(rows)
    return {"n": n, **{f"r@{k}": round(100 * sum(r[k] for r in rows) / n, 1) for k in (5, 10)}}


def main() -> None:
    out: dict[str, Any] = {}
    locomo = SHARED / "locomo" / "dev"
    if locomo.is_dir():
        qrels = [json.loads(line) for line in (locomo / "qrels.jsonl").read_text().splitlines() if line.strip()]
        out["LoCoMo dev, cats 1-4"] = recall(qrels, locomo / "claude_home", lambda q: q["category"] in (1, 2, 3, 4))
    lme = SHARED / "longmemeval"
    if (lme / "longmemeval_s_dev.json.gz").exists():
        with tempfile.TemporaryDirectory() as tmp:
            split = lme / "longmemeval_s_dev.json.gz"
            convert = [sys.executable, str(lme / "longmemeval_to_claude.py"), str(split), tmp]
            subprocess.run(convert, check=True, capture_output=True)
            qrels = [json.loads(line) for line in (Path(tmp) / "qrels.jsonl").read_text().splitlines() if line.strip()]
            out["LongMemEval dev"] = recall(qrels, Path(tmp) / "claude_home", lambda q: True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
