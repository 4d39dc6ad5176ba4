"""LoCoMo retrieval quality through the real CLI (import, then ``search --batch``), scored per the protocol in
../shared/bench/locomo/README.md (beside the repository; CLAUDE_MEMORY_SHARED points elsewhere).

    .venv/bin/python bench/locomo_eval.py [--split dev] [--data-dir DIR] [--modes keyword,semantic,hybrid]
                                          [--limit 100] [--json OUT]

Steps: import the split's ``claude_home`` into a fresh store (a temporary directory unless ``--data-dir``;
import is idempotent, so an already imported ``--data-dir`` is reused as is), write every question as one
batch file (query = question, project = the qrel's ``project``, which is the transcripts' ``cwd``), run
``claude-memory search --batch`` once per mode the CLI supports, map each result to the transcript line
uuid(s) it cites (``source.uuid`` plus every line of ``source.line_start..line_end``) and score:

- recall@5, recall@10: mean over questions of |evidence ∩ uuids of the top-k results| / |evidence|;
- recall within 1,000 / 2,000 tokens: results are taken in rank order while the running sum of their full
  transcript text (chars/4 of the cited lines' ``message.content``) stays within the budget; the first result
  that would exceed it ends the walk;
- MRR (first result citing any evidence turn) and NDCG@10 (binary gain for a result that cites an evidence
  turn not credited at an earlier rank; ideal = min(|evidence|, 10) hits at the top).

Per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial) and for categories 1-4
(the headline). Evidence = ``evidence_uuids``; a second table uses ``evidence_corrected_uuids`` where not null.
Questions with empty evidence are skipped and counted. The benchmark data is read in place, never copied.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import machine, percentile

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = Path(os.environ.get("CLAUDE_MEMORY_SHARED", ROOT.parent / "shared")) / "bench" / "locomo"
CLI = ROOT / ".venv" / "bin" / "claude-memory"
ALL_MODES = ("keyword", "semantic", "hybrid")
BUDGETS = (1000, 2000)
HEADLINE = (1, 2, 3, 4)
METRICS = ("r@5", "r@10", "r@1000tok", "r@2000tok", "mrr", "ndcg@10")


def run_cli(cli: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(cli), "--data-dir", str(data_dir), *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"claude-memory {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc


def supported_modes(cli: Path, data_dir: Path) -> tuple[bool, list[str]]:
    """(whether ``search`` has ``--mode``, the modes it accepts). Without ``--mode`` only keyword search exists."""
    help_text = run_cli(cli, data_dir, "search", "--help").stdout
    if "--batch" not in help_text:
        raise SystemExit("`claude-memory search --batch` is not available in this build.")
    if "--mode" not in help_text:
        return False, ["keyword"]
    return True, [mode for mode in ALL_MODES if re.search(rf"\b{mode}\b", help_text)]


class Transcripts:
    """Lines of transcript files, read on demand: uuid and message text per 1-based line number."""

    def __init__(self) -> None:
        self.files: dict[str, list[tuple[str | None, str]]] = {}

    def lines(self, path: str) -> list[tuple[str | None, str]]:
        if path not in self.files:
            rows: list[tuple[str | None, str]] = []
            with open(path, encoding="utf-8") as fh:
                for raw in fh:
                    try:
                        line = json.loads(raw)
                    except json.JSONDecodeError:
                        rows.append((None, ""))
                        continue
                    rows.append((line.get("uuid"), message_text(line)))
            self.files[path] = rows
        return self.files[path]

    def cited(self, result: dict[str, Any]) -> tuple[set[str], int]:
        """The line uuids a result cites and its full text length in characters."""
        source = result.get("source") or {}
        uuids = {source["uuid"]} if source.get("uuid") else set()
        path, start, end = source.get("path"), source.get("line_start"), source.get("line_end")
        if not (path and start and Path(path).is_file()):
            return uuids, len(result.get("text") or "")
        rows = self.lines(path)[start - 1 : (end or start)]
        uuids.update(uuid for uuid, _ in rows if uuid)
        return uuids, sum(len(text) for _, text in rows)


def message_text(line: dict[str, Any]) -> str:
    content = (line.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def score(evidence: set[str], ranked: list[tuple[set[str], int]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in (5, 10):
        hit = set().union(*(uuids for uuids, _ in ranked[:k])) & evidence
        out[f"r@{k}"] = len(hit) / len(evidence)
    for budget in BUDGETS:
        spent, seen = 0.0, set()
        for uuids, chars in ranked:
            spent += chars / 4
            if spent > budget:
                break
            seen |= uuids
        out[f"r@{budget}tok"] = len(seen & evidence) / len(evidence)
    out["mrr"] = next((1 / rank for rank, (uuids, _) in enumerate(ranked, 1) if uuids & evidence), 0.0)
    dcg, credited = 0.0, set()
    for rank, (uuids, _) in enumerate(ranked[:10], 1):
        new = (uuids & evidence) - credited
        if new:
            dcg += 1 / math.log2(rank + 1)
            credited |= new
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(evidence), 10) + 1))
    out["ndcg@10"] = dcg / ideal
    return out


def aggregate(rows: list[dict[str, float]]) -> dict[str, float]:
    agg: dict[str, float] = {"n": len(rows)}
    for metric in METRICS:
        agg[metric] = round(100 * sum(row[metric] for row in rows) / len(rows), 1) if rows else float("nan")
    return agg


def evaluate(
    qrels: list[dict[str, Any]], ranked: list[list[tuple[set[str], int]]], field: str
) -> tuple[dict[str, Any], int]:
    per_cat: dict[int, list[dict[str, float]]] = {}
    skipped = 0
    for qrel, results in zip(qrels, ranked, strict=True):
        evidence = set(qrel.get(field) or qrel["evidence_uuids"] or [])
        if not evidence:
            skipped += 1
            continue
        per_cat.setdefault(qrel["category"], []).append(score(evidence, results))
    table: dict[str, Any] = {"cats 1-4": aggregate([row for cat in HEADLINE for row in per_cat.get(cat, [])])}
    for cat in sorted(per_cat):
        table[f"cat {cat}"] = aggregate(per_cat[cat])
    table["all"] = aggregate([row for rows in per_cat.values() for row in rows])
    return table, skipped


def markdown(title: str, by_mode: dict[str, dict[str, Any]], names: dict[int, str]) -> str:
    header = "| mode | set | n | " + " | ".join(METRICS) + " |"
    lines = [f"### {title}", "", header, "|" + "---|" * (len(METRICS) + 3)]
    for mode, table in by_mode.items():
        for key, agg in table.items():
            label = key
            if key.startswith("cat ") and key[4:].isdigit():
                label = f"{key} {names.get(int(key[4:]), '')}".strip()
            cells = " | ".join(f"{agg[metric]:.1f}" for metric in METRICS)
            bold = "**" if key == "cats 1-4" else ""
            lines.append(f"| {mode} | {bold}{label}{bold} | {agg['n']} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--data-dir", type=Path, help="store to use (imported into if needed); default: a temp dir")
    parser.add_argument("--modes", default=",".join(ALL_MODES))
    parser.add_argument(
        "--limit", type=int, default=100, help="results per query (50 leaves ~3/4 of lists under 2,000 tokens)"
    )
    parser.add_argument("--json", type=Path, dest="json_out", help="also write everything as JSON here")
    parser.add_argument("--cli", type=Path, default=CLI, help="the claude-memory executable")
    args = parser.parse_args()

    split = LOCOMO / args.split
    claude_home = split / "claude_home"
    qrels = [json.loads(line) for line in (split / "qrels.jsonl").read_text().splitlines() if line.strip()]
    names = {q["category"]: q["category_name"] for q in qrels}
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="locomo-")
        data_dir = Path(tmp.name)
    else:
        data_dir = args.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)

    has_mode, available = supported_modes(args.cli, data_dir)
    requested = [m.strip() for m in args.modes.split(",") if m.strip()]
    modes = [m for m in requested if m in available]
    skipped_modes = [m for m in requested if m not in available]
    if skipped_modes:
        print(f"skipped modes (not supported by this CLI): {', '.join(skipped_modes)}")
    if not modes:
        raise SystemExit("none of the requested modes is supported")

    # 1. Import (idempotent: an already imported --data-dir reports 0 new events and is reused).
    started = time.perf_counter()
    proc = run_cli(args.cli, data_dir, "import", "--claude-home", str(claude_home), "--settle-seconds", "0", "--json")
    import_wall = time.perf_counter() - started
    report = json.loads(proc.stdout)
    fresh = report["events"]["new"] > 0
    print(
        f"import: {report['events']['parsed']} events parsed, {report['events']['new']} new, "
        f"{import_wall:.2f} s wall ({report.get('seconds')} s reported){'' if fresh else ' [store already imported]'}"
    )

    # 2. One batch file with every question, scoped to its project (the transcripts' cwd).
    cwds = {
        p.name: json.loads(next(iter(p.glob("*.jsonl"))).open().readline())["cwd"]
        for p in claude_home.glob("projects/*")
    }
    unknown = {q["project"] for q in qrels} - set(cwds.values())
    if unknown:
        raise SystemExit(f"qrel projects with no transcript cwd: {sorted(unknown)}")
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", prefix="locomo-queries-", delete=False) as fh:
        for q in qrels:
            fh.write(json.dumps({"query": q["question"], "project": q["project"], "limit": args.limit}) + "\n")
        batch_file = Path(fh.name)

    transcripts = Transcripts()
    results: dict[str, Any] = {}
    try:
        for mode in modes:
            extra = ["--mode", mode] if has_mode else []
            started = time.perf_counter()
            proc = run_cli(args.cli, data_dir, "search", "--batch", str(batch_file), *extra)
            wall = time.perf_counter() - started
            outputs = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
            if len(outputs) != len(qrels):
                raise SystemExit(f"{mode}: {len(outputs)} output lines for {len(qrels)} queries")
            errors = [out["error"] for out in outputs if "error" in out]
            ranked = [[transcripts.cited(r) for r in out.get("results", [])] for out in outputs]
            took = [out["meta"]["took_ms"] for out in outputs if "took_ms" in out.get("meta", {})]
            timing = {
                "batch_seconds": round(wall, 2),
                "per_query_ms_wall": round(1000 * wall / len(qrels), 2),
                "took_ms_p50": percentile(took, 50) if took else None,
                "took_ms_p95": percentile(took, 95) if took else None,
                "mean_results": round(sum(len(r) for r in ranked) / len(ranked), 1),
                "errors": len(errors),
                # questions whose results ran out before the largest budget was spent: raise --limit if many
                "under_budget": sum(1 for r in ranked if sum(chars for _, chars in r) / 4 <= max(BUDGETS)),
            }
            original, skipped = evaluate(qrels, ranked, "evidence_uuids")
            corrected, _ = evaluate(qrels, ranked, "evidence_corrected_uuids")
            results[mode] = {"timing": timing, "evidence": original, "corrected": corrected, "skipped": skipped}
            print(
                f"search --batch ({mode}): {len(qrels)} queries in {wall:.2f} s "
                f"({timing['per_query_ms_wall']} ms/query wall, took_ms p50 {timing['took_ms_p50']}, "
                f"p95 {timing['took_ms_p95']}), {timing['errors']} errors, {timing['mean_results']} results/query, "
                f"{timing['under_budget']} result lists shorter than {max(BUDGETS)} tokens"
            )
    finally:
        batch_file.unlink(missing_ok=True)

    skipped = next(iter(results.values()))["skipped"]
    n_corrected = sum(1 for q in qrels if q.get("evidence_corrected_uuids") is not None)
    print(f"\nsplit {args.split}: {len(qrels)} questions, {skipped} skipped (empty evidence); limit {args.limit}\n")
    headline = {m: {"cats 1-4": r["evidence"]["cats 1-4"]} for m, r in results.items()}
    print(markdown("Headline (categories 1-4, evidence_uuids)", headline, names))
    print()
    print(markdown("Per category (evidence_uuids)", {m: r["evidence"] for m, r in results.items()}, names))
    print()
    title = f"Corrected evidence ({n_corrected} questions use evidence_corrected_uuids, the rest evidence_uuids)"
    print(markdown(title, {m: r["corrected"] for m, r in results.items()}, names))
    facts = machine()
    print("\nmachine:", json.dumps(facts))

    if args.json_out:
        payload = {
            "split": args.split,
            "questions": len(qrels),
            "skipped_empty_evidence": skipped,
            "corrected_questions": n_corrected,
            "limit": args.limit,
            "modes_run": modes,
            "modes_skipped": skipped_modes,
            "import": {"wall_seconds": round(import_wall, 2), "fresh": fresh, "report": report},
            "results": results,
            "machine": facts,
        }
        args.json_out.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json_out}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
