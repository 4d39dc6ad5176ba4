"""Near-duplicate collapse (core/duplicates.py): how many events each rule would fold, per store.

    .venv/bin/python bench/bench_duplicates.py [--store NAME=DATA_DIR ...] [--lme-projects 20]

For every project of each store: events whose normalised texts are equal (the rule for any length), and pairs of
texts of at least 300 characters at rapidfuzz ratio 90, 95 (the product's threshold) and 98 that are not equal once
normalised (what the ratio adds), and of those the pairs with the same first line (the product folds only those).
Defaults: the project's own fixtures and ../shared's fixtures imported into temporary
stores, and the dev-eval stores of LoCoMo dev and LongMemEval dev (``bench/out/dev-eval``) when present. Prints one
JSON line per store, then a few of the pairs the ratio folds, to read.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from rapidfuzz import fuzz, process

from claude_memory.core.duplicates import LONG_TEXT, first_line, normalise
from claude_memory.service.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
THRESHOLDS = (90.0, 95.0, 98.0)


def measure(name: str, data: Path, max_projects: int | None) -> dict[str, object]:
    with Memory(data, read_only=True) as memory:
        rows = memory.con.execute("SELECT project, text FROM events ORDER BY project, seq").fetchall()
    by_project: dict[str | None, list[str]] = defaultdict(list)
    for project, text in rows:
        by_project[project].append(text)
    projects = sorted(by_project, key=str)[:max_projects] if max_projects else list(by_project)
    equal = 0
    near = dict.fromkeys(THRESHOLDS, 0)
    same = dict.fromkeys(THRESHOLDS, 0)  # of which with the same first line: what the product folds
    shown: list[tuple[float, str, str]] = []
    for project in projects:
        texts = [normalise(t) for t in by_project[project]]
        seen: dict[str, int] = {}
        for t in texts:
            seen[t] = seen.get(t, 0) + 1
        equal += sum(n - 1 for n in seen.values())
        openings = {normalise(t): first_line(t) for t in by_project[project]}
        long = sorted({t for t in texts if len(t) >= LONG_TEXT})
        if len(long) < 2:
            continue
        scores = process.cdist(long, long, scorer=fuzz.ratio, score_cutoff=min(THRESHOLDS), workers=-1)
        for i in range(len(long)):
            for j in range(i + 1, len(long)):
                score = float(scores[i][j])
                same_opening = openings[long[i]] == openings[long[j]]
                for threshold in THRESHOLDS:
                    near[threshold] += score >= threshold
                    same[threshold] += score >= threshold and same_opening
                if score >= 95 and same_opening and len(shown) < 5:
                    shown.append((score, long[i][:160], long[j][:160]))
    out = {"store": name, "events": len(rows), "projects": len(projects), "folded_as_equal": equal,
           "long_pairs_by_ratio": {str(int(t)): n for t, n in near.items()},
           "of_which_same_first_line": {str(int(t)): n for t, n in same.items()}}  # fmt: skip
    print(json.dumps(out), flush=True)
    for score, a, b in shown:
        print(f"  {score:.1f}: {a!r}\n        {b!r}")
    return out


def imported(home: Path, tmp: Path) -> Path:
    data = tmp / home.parent.name
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", action="append", default=[], help="NAME=DATA_DIR (repeatable)")
    parser.add_argument("--lme-projects", type=int, default=20, help="LongMemEval dev questions (projects) measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stores: list[tuple[str, Path, int | None]] = [
            (n, Path(p), None) for n, p in (s.split("=", 1) for s in args.store)
        ]
        if not args.store:
            stores.append(("own fixtures", imported(ROOT / "tests" / "fixtures" / "claude_home", Path(tmp)), None))
            shared = ROOT.parent / "shared" / "fixtures" / "claude_home"
            if shared.is_dir():
                stores.append(("../shared fixtures", imported(shared, Path(tmp) / "shared"), None))
            for name, folder, limit in (
                ("LoCoMo dev", "locomo-dev", None),
                ("LongMemEval dev", "longmemeval-dev", args.lme_projects),
            ):
                store = ROOT / "bench" / "out" / "dev-eval" / folder / "store"
                if store.is_dir():
                    stores.append((name, store, limit))
        for name, data, limit in stores:
            measure(name, data, limit)


if __name__ == "__main__":
    main()
