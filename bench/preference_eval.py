"""Precision and recall of the rule and preference extractor (core/insights.py) on the labelled prompts of
``bench/preferences/prompts.jsonl`` (written for it, labelled without the extractor; see its README).

    .venv/bin/python bench/preference_eval.py [--set prompts|test|holdout|fresh|blind|unseen|novel|stack|polyglot|...]
                                              [--split dev|held-out|all] [--show]

Per prompt: a prompt labelled with a rule counts as found when the extractor finds a rule in it; any rule found in a
prompt labelled without one is a false positive. Grouping: pairs of found rule prompts put in the same preference,
against pairs sharing a labelled cluster (pairwise precision and recall); supersession: labelled superseding
statements whose preference supersedes the labelled one. ``dev`` (webshop and infra) is what the extractor was
tuned on first; ``held-out`` (billing-api and mobile-app) was looked at later too (its misses, once the extractor met
real prompts). ``--set test`` is a second set written afterwards by someone who saw neither the extractor nor the first
set (``bench/preferences/test.jsonl``); it was the held-out figure until its misses were read too. ``--set holdout``
(``bench/preferences/holdout.jsonl``) was written third, by someone who saw none of the above; its misses were read
once its totals had been reported. ``--set fresh`` (``bench/preferences/fresh.jsonl``) was written fourth, in the same
way, with rules mostly worded without always / never; its false positives were read, then its misses. ``--set blind``
(``bench/preferences/blind.jsonl``) was written fifth, in the same way, and read after two scorings. ``--set unseen``
(``bench/preferences/unseen.jsonl``) was written sixth, in the same way; nothing in it has been read, and nothing is
fitted on it (see the README). ``--set novel`` was written last, scored once unread, then added to the sets the learned
half of the extractor is fitted on (``bench/fit_rules.py``), and so were ``--set stack`` and ``--set polyglot``,
written after it, and then ``--set cove``, ``--set kiln`` and ``--set mesa``.
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from claude_memory.core.insights import Statement, preferences, rules

SETS = Path(__file__).parent / "preferences"
DEV = {"webshop", "infra"}


def main() -> None:
    parser = argparse.ArgumentParser()
    sets = sorted(path.stem for path in SETS.glob("*.jsonl"))
    parser.add_argument("--set", choices=sets, default="prompts", help="which labelled file")
    parser.add_argument("--split", choices=("dev", "held-out", "all"), default="all", help="of prompts.jsonl")
    parser.add_argument("--show", action="store_true", help="print the misses and false positives")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (SETS / f"{args.set}.jsonl").read_text().splitlines() if line.strip()]
    if args.set == "prompts" and args.split != "all":
        rows = [r for r in rows if (r["project"] in DEV) == (args.split == "dev")]
    tp = fp = fn = 0
    statements: list[Statement] = []
    cluster_of: dict[int, str] = {}
    for n, row in enumerate(rows):
        found = rules(row["prompt"])
        labelled = row["rule"] is not None
        if found and labelled:
            tp += 1
        elif found:
            fp += 1
            if args.show:
                print(f"FP {row['id']} {row['prompt']!r} -> {[r.text for r in found]}")
        elif labelled:
            fn += 1
            if args.show:
                print(f"FN {row['id']} {row['prompt']!r}")
        if found:
            statements.append(Statement(n, row["id"], row["project"], row["session"], None, found[0]))
            if labelled:
                cluster_of[n] = row["rule"]["cluster"]
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    grouped = preferences(statements)
    group_of = {s.event_id: p.id for p in grouped for s in p.statements}
    same_pred = same_true = both = 0
    for a, b in combinations(sorted(cluster_of), 2):
        pred = group_of[a] == group_of[b]
        true = cluster_of[a] == cluster_of[b]
        same_pred += pred
        same_true += true
        both += pred and true
    if args.show:
        for p in grouped:
            labels = [cluster_of.get(s.event_id, "-") for s in p.statements]
            if len(set(labels)) > 1 or any(cluster_of.get(s.event_id) for s in p.statements):
                print(
                    f"GROUP {p.id} sup={p.supersedes}: "
                    + "; ".join(
                        f"{lab}|{s.rule.favours}/{s.rule.rejects}" for lab, s in zip(labels, p.statements, strict=True)
                    )
                )
    by_id = {p.id: p for p in grouped}
    sup_total = sup_found = 0
    for n, row in enumerate(rows):
        rule = row["rule"]
        if not rule or not rule.get("supersedes"):
            continue
        sup_total += 1
        pref = by_id.get(group_of.get(n, ""))
        old = {cluster_of.get(s.event_id) for pid in (pref.supersedes if pref else []) for s in by_id[pid].statements}
        sup_found += rule["supersedes"] in old
    print(f"{args.set}.jsonl, split {args.split}: {len(rows)} prompts, {tp + fn} with a rule")
    print(f"extraction: precision {precision:.3f} recall {recall:.3f} (tp {tp}, fp {fp}, fn {fn})")
    pp = both / same_pred if same_pred else 1.0
    pr = both / same_true if same_true else 1.0
    print(f"grouping (pairs of found rule prompts): precision {pp:.3f} recall {pr:.3f}")
    print(f"supersession: {sup_found} of {sup_total} superseding statements supersede the labelled preference")


if __name__ == "__main__":
    main()
