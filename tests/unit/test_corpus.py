"""Tests for bench/corpus.py: determinism, structure, and truth counts re-derived from the written JSON."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
from collections import Counter
from contextlib import redirect_stdout
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CORPUS_PATH = Path(__file__).parents[2] / "bench" / "corpus.py"
N_EVENTS = 4000


def _load() -> ModuleType:
    name = "bench_corpus_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, CORPUS_PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses resolve string annotations through sys.modules
    spec.loader.exec_module(mod)
    return mod


corpus = _load()


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _encode(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("corpus")
    truth = corpus.generate(root, N_EVENTS, seed=7)
    return root, truth


def _count(root: Path) -> dict[str, Any]:
    """A deliberately simple, independent recount over the raw JSON lines."""
    c: Counter[str] = Counter()
    text_msg_ids: set[str] = set()
    per_session_events: Counter[str] = Counter()
    problems: list[str] = []
    for path in sorted((root / "projects").rglob("*.jsonl")):
        rel = path.relative_to(root / "projects")
        is_sub = rel.parts[-2] == "subagents"
        session_key = rel.parts[1] if is_sub else rel.stem
        c["files"] += 1
        if not is_sub:
            c["sessions"] += 1
        tool_uses: Counter[str] = Counter()
        tool_results: Counter[str] = Counter()
        first_user_seen = False
        lines = path.read_text(encoding="utf-8").splitlines()
        objs = [json.loads(line) for line in lines]  # every line must be valid JSON
        for i, d in enumerate(objs):
            assert isinstance(d, dict)
            t = d.get("type")
            if t == "user":
                content = d["message"]["content"]
                if isinstance(content, str):
                    if is_sub and not first_user_seen:
                        c["subagent_prompts"] += 1
                        per_session_events[session_key] += 1
                    elif d.get("isCompactSummary"):
                        c["compact_summaries"] += 1
                    elif d.get("isMeta"):
                        c["meta"] += 1
                    elif content.startswith("<task-notification>"):
                        c["task_notifications"] += 1
                    elif content.startswith("[Request interrupted by user"):
                        c["interrupted"] += 1
                    else:
                        c["user_prompts"] += 1
                        per_session_events[session_key] += 1
                        if not 5 <= len(content.split()) <= 80:
                            problems.append(f"{rel}:{i + 1}: prompt has {len(content.split())} words")
                else:
                    for block in content:
                        if block.get("type") == "tool_result":
                            tool_results[block["tool_use_id"]] += 1
                            c["tool_results"] += 1
                            out = block["content"]
                            n = len(out) if isinstance(out, str) else sum(len(b["text"]) for b in out)
                            if n > 3000:
                                problems.append(f"{rel}:{i + 1}: tool_result has {n} chars")
                first_user_seen = True
            elif t == "assistant":
                msg = d["message"]
                for block in msg["content"]:
                    if block["type"] == "text" and msg["id"] not in text_msg_ids:
                        text_msg_ids.add(msg["id"])
                        per_session_events[session_key] += 1
                        if not 10 <= len(block["text"].split()) <= 300:
                            problems.append(f"{rel}:{i + 1}: response has {len(block['text'].split())} words")
                    elif block["type"] == "tool_use":
                        tool_uses[block["id"]] += 1
                        c["tool_uses"] += 1
                        per_session_events[session_key] += 1
            elif t == "system" and d.get("subtype") == "compact_boundary":
                c["compactions"] += 1
                per_session_events[session_key] += 2
                nxt = objs[i + 1]
                if not (nxt.get("isCompactSummary") and nxt.get("parentUuid") == d["uuid"]):
                    problems.append(f"{rel}:{i + 1}: compact_boundary not followed by its summary")
        for tid, n in tool_uses.items():
            if n != 1 or tool_results.get(tid) != 1:
                problems.append(f"{rel}: tool_use {tid} has {tool_results.get(tid, 0)} results")
        for tid in tool_results:
            if tid not in tool_uses:
                problems.append(f"{rel}: orphan tool_result {tid}")
    c["agent_responses"] = len(text_msg_ids)
    return {"counts": c, "per_session": per_session_events, "problems": problems}


def test_truth_matches_independent_count(generated: tuple[Path, Any]) -> None:
    root, truth = generated
    res = _count(root)
    c = res["counts"]
    assert res["problems"] == []
    assert c["files"] == truth.files
    assert c["sessions"] == truth.sessions
    assert c["user_prompts"] == truth.user_prompts
    assert c["agent_responses"] == truth.agent_responses
    assert c["tool_uses"] == truth.tool_uses
    assert c["tool_results"] == truth.tool_uses
    assert c["compactions"] == truth.compactions == c["compact_summaries"]
    assert c["subagent_prompts"] == truth.subagent_prompts
    # noise the importer must skip is actually present
    assert c["meta"] > 0 and c["task_notifications"] > 0 and c["interrupted"] > 0


def test_event_total_within_one_session(generated: tuple[Path, Any]) -> None:
    _root, truth = generated
    per_session = _count(generated[0])["per_session"]
    assert sum(per_session.values()) == truth.events()
    assert N_EVENTS <= truth.events() <= N_EVENTS + max(per_session.values())


def test_layout_and_envelopes(generated: tuple[Path, Any]) -> None:
    root, _truth = generated
    projects = root / "projects"
    seen_types: Counter[str] = Counter()
    for path in projects.rglob("*.jsonl"):
        rel = path.relative_to(projects)
        folder = rel.parts[0]
        objs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert objs, rel
        uuids: set[str] = set()
        last_ts = ""
        if rel.parts[-2] == "subagents":
            assert len(rel.parts) == 4
            session_id = rel.parts[1]
            agent_id = path.stem.removeprefix("agent-")
            meta = json.loads(path.with_suffix(".meta.json").read_text(encoding="utf-8"))
            assert meta["agentType"] and meta["toolUseId"].startswith("toolu_")
            first = objs[0]
            assert first["type"] == "user" and isinstance(first["message"]["content"], str)
        else:
            assert len(rel.parts) == 2
            session_id = path.stem
            agent_id = None
        for d in objs:
            seen_types[d["type"]] += 1
            if "sessionId" in d:
                assert d["sessionId"] == session_id
            if "cwd" in d:
                assert _encode(d["cwd"]) == folder == corpus.encode_cwd(d["cwd"])
            if "timestamp" in d:
                ts = d["timestamp"]
                assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ts), ts
                assert ts >= last_ts
                last_ts = ts
            if "uuid" in d and d["type"] in ("user", "assistant", "system", "attachment", "progress"):
                assert d["parentUuid"] is None or d["parentUuid"] in uuids
                assert d["uuid"] not in uuids
                uuids.add(d["uuid"])
                assert d["isSidechain"] is (agent_id is not None)
                if agent_id is not None:
                    assert d["agentId"] == agent_id
    for t in (
        "user",
        "assistant",
        "system",
        "progress",
        "attachment",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
    ):
        assert seen_types[t] > 0, t


def test_assistant_lines_share_message_id(generated: tuple[Path, Any]) -> None:
    root, _truth = generated
    multi = 0
    for path in (root / "projects").rglob("*.jsonl"):
        by_id: dict[str, set[str]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            if d["type"] == "assistant":
                assert len(d["message"]["content"]) == 1
                by_id.setdefault(d["message"]["id"], set()).add(d["requestId"])
        for rids in by_id.values():
            assert len(rids) == 1
        multi += len(by_id)
    assert multi > 0


def test_mtime_applied(generated: tuple[Path, Any]) -> None:
    root, _truth = generated
    for p in root.rglob("*"):
        if p.is_file():
            assert p.stat().st_mtime == 1_700_000_000.0


def test_deterministic(tmp_path: Path, generated: tuple[Path, Any]) -> None:
    root, truth = generated
    again = corpus.generate(tmp_path / "a", N_EVENTS, seed=7)
    assert asdict(again) == asdict(truth)
    assert _tree(tmp_path / "a") == _tree(root)
    other = corpus.generate(tmp_path / "b", N_EVENTS, seed=8)
    assert _tree(tmp_path / "b") != _tree(root)
    assert other.events() >= N_EVENTS


def test_small_and_zero(tmp_path: Path) -> None:
    t0 = corpus.generate(tmp_path / "z", 0)
    assert t0.events() == 0 and t0.files == 0
    t1 = corpus.generate(tmp_path / "s", 50, seed=3, projects=1, mtime=None)
    assert t1.events() >= 50 and t1.sessions >= 1
    assert len(list((tmp_path / "s" / "projects").iterdir())) == 1


def test_encode_cwd() -> None:
    assert corpus.encode_cwd("/home/dev/My Project_v2.0") == "-home-dev-My-Project-v2-0"
    assert (
        corpus.encode_cwd("/Users/t/GitHub/projects/example-project/.worktrees/streaming")
        == "-Users-t-GitHub-projects-example-project--worktrees-streaming"
    )


def test_cli(tmp_path: Path) -> None:
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = corpus.main([str(tmp_path / "cli"), "--events", "300", "--seed", "5"])
    assert rc == 0
    out = json.loads(buf.getvalue())
    expected = corpus.generate(tmp_path / "cli2", 300, seed=5)
    assert out == asdict(expected) | {"events": expected.events()}
