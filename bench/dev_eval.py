"""Both dev benchmarks, one command: LoCoMo dev and LongMemEval dev through the real CLI and the real prompt hook,
beside a plain-BM25 baseline computed here on the same turns, and the hook's silence on prompts no memory answers.

    .venv/bin/python bench/dev_eval.py [--work bench/out/dev-eval] [--modes keyword,semantic,hybrid]
                                       [--sets locomo,lme] [--no-inject] [--json OUT]

Semantic and hybrid need the embedding model: ``CLAUDE_MEMORY_MODEL_PATH``, else ../shared/models/all-MiniLM-L6-v2-onnx.
Stores are kept under ``--work`` and reused (import is idempotent; embedding LongMemEval dev's 48,881 turns takes
about an hour on 2 cores, once). Steps, per benchmark:

1. ``claude-memory import`` of its Claude Code tree (LongMemEval dev is converted first, by its own script);
2. every question through one ``claude-memory search --batch`` per mode, scoped to the question's project;
   results mapped to transcript lines as the benchmarks' scorers do (``source.uuid`` and the lines
   ``line_start..line_end``);
3. the same questions through plain BM25 (Okapi k1 1.5, b 0.75, Lucene's 33 stopwords, Snowball English: the
   baseline of ``bench/plain_bm25.py`` and of LongMemEval's README) over the same turns, each question's project
   only;
4. scored: turn recall@5 / @10, recall within 1,000 / 2,000 tokens (results in rank order while the running sum of
   their transcript text, characters / 4, stays within the budget), MRR, NDCG@10 (`locomo_eval.score`), and for
   LongMemEval session any@5 / all@5;
   the headline (LoCoMo categories 1-4, LongMemEval all) and per category;
5. unless ``--no-inject``: a memory service on the store and the plugin's real hook command
   (``hooks/claude-memory-hook UserPromptSubmit``, one process per prompt, as Claude Code runs it) for every
   question, in a session of its own in the question's project: **evidence injected** (the share of a question's
   evidence turns cited in the hook's ``additionalContext``, averaged) and characters injected per prompt; then
   the prompts of ``bench/data/irrelevant_prompts.jsonl`` (written for this benchmark: acknowledgements,
   greetings, "continue", generic agent commands, off-topic questions) and ``irrelevant_first_person.jsonl``
   (questions in the first person that no past conversation answers), each in one of the store's projects in
   turn: the share of **silent hooks** (nothing injected). The irrelevant prompts also run against the project's
   own fixture history (../shared/fixtures/claude_home), the coding sessions a user would have.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import Stemmer

from common import machine, percentile
from locomo_eval import Transcripts
from locomo_eval import score as turn_scores
from plain_bm25 import Index, read_turns

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CLAUDE_MEMORY_SHARED", ROOT.parent / "shared"))
CLI = ROOT / ".venv" / "bin" / "claude-memory"
HOOK = ROOT / "hooks" / "claude-memory-hook"
IRRELEVANT = (  # the first-person questions were added later, by another writer (bench/data/README.md)
    ROOT / "bench" / "data" / "irrelevant_prompts.jsonl",
    ROOT / "bench" / "data" / "irrelevant_first_person.jsonl",
)
MODEL = SHARED / "models" / "all-MiniLM-L6-v2-onnx"
MODES = ("keyword", "semantic", "hybrid")
METRICS = ("r@5", "r@10", "r@1000tok", "r@2000tok", "mrr", "ndcg@10", "s_any@5", "s_all@5")
LIMIT = 100  # results per query: LoCoMo turns are short, and at 50 many lists hold under 2,000 tokens


@dataclass
class Bench:
    name: str
    home: Path  # a Claude home (projects/…/*.jsonl)
    qrels: list[dict[str, Any]]
    headline: Callable[[dict[str, Any]], bool]
    label: Callable[[dict[str, Any]], str]
    turns: dict[str, dict[str, Any]] = field(default_factory=dict)  # uuid -> {text, session, project}


# ------------------------------------------------------------------ data


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def benches(work: Path, wanted: list[str]) -> list[Bench]:
    out = []
    locomo = SHARED / "bench" / "locomo" / "dev"
    if "locomo" in wanted and locomo.is_dir():
        out.append(
            Bench(
                "LoCoMo dev",
                locomo / "claude_home",
                read_jsonl(locomo / "qrels.jsonl"),
                lambda q: q["category"] in (1, 2, 3, 4),
                lambda q: f"cat {q['category']} {q.get('category_name', '')}".strip(),
            )
        )
    lme = SHARED / "bench" / "longmemeval"
    if "lme" in wanted and (lme / "longmemeval_s_dev.json.gz").exists():
        tree = work / "lme" / "tree"
        if not (tree / "qrels.jsonl").exists():
            convert = [sys.executable, str(lme / "longmemeval_to_claude.py"), str(lme / "longmemeval_s_dev.json.gz")]
            subprocess.run([*convert, str(tree)], check=True, capture_output=True)
        out.append(
            Bench(
                "LongMemEval dev",
                tree / "claude_home",
                read_jsonl(tree / "qrels.jsonl"),
                lambda q: True,
                lambda q: str(q["category"]),
            )
        )
    for bench in out:
        bench.home = bench.home.resolve()  # the store records transcript paths as found
        bench.turns = read_turns(bench.home)
    return out


def asked_at(question_date: str) -> str:
    """LongMemEval's question date ('2023/05/20 (Sat) 02:21', UTC like its transcripts) as ISO-8601."""
    plain = re.sub(r"\s*\([^)]*\)\s*", " ", question_date.strip())
    return datetime.strptime(plain, "%Y/%m/%d %H:%M").replace(tzinfo=UTC).isoformat()


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# ------------------------------------------------------------------ the CLI


def cli(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [str(CLI), "--data-dir", str(data_dir), *args], capture_output=True, text=True, check=False, env=env
    )
    if proc.returncode != 0:
        raise SystemExit(f"claude-memory {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return proc.stdout


def import_store(store: Path, home: Path, env: dict[str, str]) -> dict[str, Any]:
    started = time.perf_counter()
    report = json.loads(cli(store, "import", "--claude-home", str(home), "--settle-seconds", "0", "--json", env=env))
    events = report["events"]
    print(
        f"  import: {events['parsed']} events, {events['new']} new, {events.get('embedded', 0)} embedded, "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return dict(report)


@dataclass
class Hit:
    uuids: set[str]
    chars: int
    session: str | None


def search_all(bench: Bench, store: Path, mode: str, env: dict[str, str]) -> tuple[list[list[Hit]], dict[str, Any]]:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        for q in bench.qrels:
            line = {"query": q["question"], "project": q["project"], "limit": LIMIT}
            if q.get("question_date"):  # LongMemEval's questions are dated: "a week ago" counts from then
                line["as_of"] = asked_at(q["question_date"])
            fh.write(json.dumps(line) + "\n")
        batch = Path(fh.name)
    started = time.perf_counter()
    try:
        out = cli(store, "search", "--batch", str(batch), "--mode", mode, env=env)
    finally:
        batch.unlink(missing_ok=True)
    wall = time.perf_counter() - started
    transcripts = Transcripts()
    ranked, took, modes = [], [], Counter()
    for row in (json.loads(line) for line in out.splitlines() if line.strip()):
        cited = ((transcripts.cited(result), result.get("session_id")) for result in row.get("results", []))
        ranked.append([Hit(uuids, chars, session) for (uuids, chars), session in cited])
        meta = row.get("meta") or {}
        if "took_ms" in meta:
            took.append(meta["took_ms"])
        modes[meta.get("mode", "error")] += 1
    if len(ranked) != len(bench.qrels):
        raise SystemExit(f"{bench.name} {mode}: {len(ranked)} result lines for {len(bench.qrels)} questions")
    timing = {"wall_s": round(wall, 1), "took_ms_p50": percentile(took, 50) if took else None, "modes": dict(modes)}
    return ranked, timing


def plain_bm25(bench: Bench) -> list[list[Hit]]:
    stem = Stemmer.Stemmer("english")
    by_project: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for uuid, turn in bench.turns.items():
        by_project[turn["project"]].append((uuid, turn["text"]))
    indexes: dict[str, Index] = {}
    ranked = []
    for q in bench.qrels:
        if q["project"] not in indexes:
            indexes[q["project"]] = Index(by_project.get(q["project"], []), stem)
        top = indexes[q["project"]].top(q["question"], LIMIT)
        ranked.append([Hit({u}, len(bench.turns[u]["text"]), bench.turns[u]["session"]) for u in top])
    return ranked


# ------------------------------------------------------------------ scores


def score(q: dict[str, Any], hits: list[Hit]) -> dict[str, float]:
    """LoCoMo's turn metrics (``locomo_eval.score``) where the question has evidence turns, and the session ones."""
    evidence = set(q.get("evidence_uuids") or ())
    out = turn_scores(evidence, [(h.uuids, h.chars) for h in hits]) if evidence else {}
    sessions = set(q.get("evidence_session_uuids") or ())
    if sessions:
        top = {h.session for h in hits[:5]}
        out["s_any@5"] = float(bool(sessions & top))
        out["s_all@5"] = float(sessions <= top)
    return out


def aggregate(rows: list[dict[str, float]]) -> dict[str, Any]:
    agg: dict[str, Any] = {"n": sum(1 for r in rows if "r@5" in r)}
    for metric in METRICS:
        values = [r[metric] for r in rows if metric in r]
        if values:
            agg[metric] = round(100 * sum(values) / len(values), 1)
    return agg


def tables(bench: Bench, ranked: list[list[Hit]]) -> dict[str, dict[str, Any]]:
    rows = [score(q, hits) for q, hits in zip(bench.qrels, ranked, strict=True)]
    out = {"headline": aggregate([r for q, r in zip(bench.qrels, rows, strict=True) if bench.headline(q)])}
    for label in sorted({bench.label(q) for q in bench.qrels}):
        out[label] = aggregate([r for q, r in zip(bench.qrels, rows, strict=True) if bench.label(q) == label])
    return out


def markdown(title: str, by_method: dict[str, dict[str, dict[str, Any]]]) -> str:
    metrics = [m for m in METRICS if any(m in agg for t in by_method.values() for agg in t.values())]
    head = "| method | set | n | " + " | ".join(metrics) + " |"
    lines = [f"### {title}", "", head, "|" + "---|" * (len(metrics) + 3)]
    for method, table in by_method.items():
        for key, agg in table.items():
            cells = " | ".join(f"{agg[m]:.1f}" if m in agg else "" for m in metrics)
            name = f"**{key}**" if key == "headline" else key
            lines.append(f"| {method} | {name} | {agg['n']} | {cells} |")
    return "\n".join(lines)


# ------------------------------------------------------------------ the prompt hook


class Service:
    """A memory service on ``store`` and the plugin's hook command against it."""

    def __init__(self, store: Path, env: dict[str, str]) -> None:
        self.env = {k: v for k, v in env.items() if k != "CLAUDE_CONFIG_DIR"}
        self.env |= {"CLAUDE_MEMORY_HOME": str(store), "CLAUDE_MEMORY_PYTHON": sys.executable}
        self.store = store
        self.empty_home = tempfile.TemporaryDirectory(prefix="dev-eval-home-")
        (Path(self.empty_home.name) / "projects").mkdir()
        self.session = 0

    def __enter__(self) -> Service:
        from claude_memory.client.connection import ServiceClient

        # A service the CLI started (it watches ~/.claude, and its code or model may be another) must go first;
        # ours watches nothing and has the model. The client only connects: it never starts one itself.
        subprocess.run([str(CLI), "--data-dir", str(self.store), "stop"], capture_output=True, env=self.env)
        serve = [sys.executable, "-m", "claude_memory", "serve", "--claude-home", self.empty_home.name]
        self.proc = subprocess.Popen([*serve, "--no-watch", "--quiet"], env=self.env)
        self.client = ServiceClient(self.store, timeout=600)
        deadline = time.monotonic() + 300
        while True:
            try:
                self.client.ping(timeout=5)
                break
            except Exception:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("The memory service did not start.") from None
                time.sleep(0.2)
        status = self.client.call("status")
        if not status["embedding"]["available"]:
            print(f"  note: the service has no model: {status['embedding']['reason']}", flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.client.call("shutdown")
            self.proc.wait(timeout=120)
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                self.proc.wait(timeout=60)
            self.empty_home.cleanup()

    def prompt(self, prompt: str, project: str) -> tuple[str, float]:
        """The hook's additionalContext ('' when it injects nothing) and its wall time in ms."""
        self.session += 1
        payload = {"session_id": f"dev-eval-{self.session}", "transcript_path": "", "cwd": project,
                   "hook_event_name": "UserPromptSubmit", "prompt": prompt}  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(
            [str(HOOK), "UserPromptSubmit"], input=json.dumps(payload).encode(), env=self.env, capture_output=True
        )
        ms = (time.perf_counter() - started) * 1000
        if not done.stdout.strip():
            return "", ms
        return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]), ms


_CITATION = re.compile(r"\[(mem:[A-Za-z0-9_-]+)\]")


def citations_of(store: Path) -> dict[str, str]:
    """citation -> the transcript line uuid of its event."""
    import duckdb

    con = duckdb.connect(str(store / "memory.duckdb"), read_only=True)
    try:
        rows = con.execute("SELECT citation, source_uuid FROM events WHERE citation IS NOT NULL").fetchall()
    finally:
        con.close()
    return {f"mem:{c}": u for c, u in rows if u}


def silence(service: Service, prompts: list[dict[str, Any]], projects: list[str]) -> dict[str, Any]:
    silent, chars, by_kind = 0, [], defaultdict(lambda: [0, 0])
    loud: list[str] = []
    for i, row in enumerate(prompts):
        text, _ = service.prompt(row["prompt"], projects[i % len(projects)])
        silent += not text
        chars.append(len(text))
        by_kind[row["kind"]][0] += not text
        by_kind[row["kind"]][1] += 1
        if text:
            loud.append(row["prompt"])
    return {
        "prompts": len(prompts),
        "silent_pct": round(100 * silent / len(prompts), 1),
        "chars_mean": round(sum(chars) / len(chars)),
        "silent_by_kind": {k: f"{s}/{n}" for k, (s, n) in sorted(by_kind.items())},
        "injected_for": loud[:20],
    }


def injection(bench: Bench, store: Path, env: dict[str, str], irrelevant: list[dict[str, Any]]) -> dict[str, Any]:
    uuid_of = citations_of(store)
    rows: list[dict[str, float]] = []
    chars, ms = [], []
    with Service(store, env) as service:
        for q in bench.qrels:
            text, took = service.prompt(q["question"], q["project"])
            chars.append(len(text))
            ms.append(took)
            evidence = set(q.get("evidence_uuids") or ())
            if evidence and bench.headline(q):
                cited = {uuid_of.get(c) for c in _CITATION.findall(text)}
                rows.append({"injected": len(cited & evidence) / len(evidence), "any": float(bool(text))})
        projects = sorted({q["project"] for q in bench.qrels})
        quiet = silence(service, irrelevant, projects)
    return {
        "questions": len(rows),
        "evidence_injected_pct": round(100 * sum(r["injected"] for r in rows) / len(rows), 1),
        "hooks_injecting_pct": round(100 * sum(r["any"] for r in rows) / len(rows), 1),
        "chars_per_prompt": round(sum(chars) / len(chars)),
        "hook_ms_p50": round(percentile(ms, 50), 1),
        "irrelevant": quiet,
    }


def fixture_silence(work: Path, env: dict[str, str], irrelevant: list[dict[str, Any]]) -> dict[str, Any] | None:
    home = SHARED / "fixtures" / "claude_home"
    if not home.is_dir():
        return None
    store = work / "fixtures" / "store"
    print("fixtures (../shared/fixtures/claude_home)", flush=True)
    import_store(store, home, env)
    projects = sorted({t["project"] for t in read_turns(home).values()})
    with Service(store, env) as service:
        return silence(service, irrelevant, projects)


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "out" / "dev-eval")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--sets", default="locomo,lme")
    parser.add_argument("--no-inject", action="store_true", help="skip the prompt hook and the irrelevant prompts")
    parser.add_argument("--no-model", action="store_true", help="keyword only: no model for the CLI or the service")
    parser.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.no_model:  # a model folder that is not there: the store's recorded model is not looked for either
        env |= {"CLAUDE_MEMORY_MODEL_PATH": str(args.work / "no-model"), "CLAUDE_MEMORY_OFFLINE": "1"}
        modes = ["keyword"]
    else:
        env.setdefault("CLAUDE_MEMORY_MODEL_PATH", str(MODEL))
        modes = [m for m in args.modes.split(",") if m]
    irrelevant = [row for path in IRRELEVANT for row in read_jsonl(path)]
    report: dict[str, Any] = {"machine": machine(), "sets": {}}
    for bench in benches(args.work, args.sets.split(",")):
        print(f"{bench.name}: {len(bench.qrels)} questions, {len(bench.turns)} turns", flush=True)
        store = args.work / slug(bench.name) / "store"
        result: dict[str, Any] = {"import": import_store(store, bench.home, env)["events"], "methods": {}}
        result["methods"]["plain BM25"] = {"tables": tables(bench, plain_bm25(bench))}
        for mode in modes:
            ranked, timing = search_all(bench, store, mode, env)
            result["methods"][mode] = {"tables": tables(bench, ranked), "timing": timing}
            print(f"  {mode}: {timing}", flush=True)
        if not args.no_inject:
            result["injection"] = injection(bench, store, env, irrelevant)
        report["sets"][bench.name] = result
    if not args.no_inject:
        report["fixtures"] = fixture_silence(args.work, env, irrelevant)

    for name, result in report["sets"].items():
        methods = result["methods"]
        print()
        print(markdown(f"{name}: headline", {m: {"headline": r["tables"]["headline"]} for m, r in methods.items()}))
        print()
        print(markdown(f"{name}: per category", {m: r["tables"] for m, r in methods.items()}))
        base = methods["plain BM25"]["tables"]["headline"]
        for mode in modes:
            head = methods[mode]["tables"]["headline"]
            margin = {k: round(head[k] - base[k], 1) for k in ("r@5", "r@10")}
            print(f"{mode} minus plain BM25 (headline): r@5 {margin['r@5']:+}, r@10 {margin['r@10']:+}")
        if "injection" in result:
            print("prompt hook:", json.dumps(result["injection"]))
    if report.get("fixtures"):
        print("\nfixtures, irrelevant prompts:", json.dumps(report["fixtures"]))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
