"""The MCP tools' formatting (mcp.text): citations shown, ids as strings, every answer bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from claude_memory.mcp import text as mcp_text
from claude_memory.mcp.text import MAX_CHARS

BIG_ID = 9_211_674_511_123_225_733  # 63 bits: a JavaScript number would round it


def hit(rank: int, **over: Any) -> dict[str, Any]:
    return {
        "rank": rank,
        "id": BIG_ID + rank,
        "citation": f"mem:Ab{rank:04d}",
        "summary": f"Bash: echo hello {rank}",
        "score": 1.5 - rank / 100,
        "confidence": "high",
        "type": "tool_use",
        "timestamp": "2026-11-22T05:57:11.844000Z",
        "session_id": "dc75efdc-6adf-4400-9099-a7992cc138fc",
        "project": "/home/dev/work",
        "tokens": 29,
        **over,
    }


def event(n: int, *, target: bool = False, preview: str = "Please RUN_TOOL now") -> dict[str, Any]:
    return {
        "id": BIG_ID - n,
        "citation": f"mem:Tl{n:04d}",
        "type": "user_prompt",
        "timestamp": "2026-11-22T05:57:11.560000Z",
        "session_id": "dc75efdc-6adf-4400-9099-a7992cc138fc",
        "position": n,
        "preview": preview,
        "is_target": target,
    }


def detail(n: int, text: str, **over: Any) -> dict[str, Any]:
    return {
        "id": BIG_ID - n,
        "citation": f"mem:Dt{n:04d}",
        "type": "tool_use",
        "timestamp": "2026-11-22T05:57:11.844000Z",
        "session_id": "dc75efdc-6adf-4400-9099-a7992cc138fc",
        "project": "/home/dev/work",
        "agent_id": None,
        "tool_name": "Bash",
        "files": ["/home/dev/work/notes.txt"],
        "text": text,
        "source": {"path": "/p/s.jsonl", "line_start": 26, "line_end": 27},
        "metadata": {},
        "tools": [{"name": "Bash", "input": {"description": "Print a greeting"}, "status": "ok"}],
        **over,
    }


# ---------------------------------------------------------------------- pieces


def test_fence_is_longer_than_any_backtick_run_inside() -> None:
    assert mcp_text.fence("plain") == "```text\nplain\n```\n"
    inner = "before\n````python\ncode\n````\nafter"
    fenced = mcp_text.fence(inner)
    assert fenced.startswith("`````text\n") and fenced.endswith("\n`````\n") and inner in fenced


def test_share_shows_short_texts_whole_and_splits_the_rest() -> None:
    assert mcp_text.share([10, 5_000, 20, 9_000], 1_030) == [10, 500, 20, 500]
    assert mcp_text.share([100, 200], 1_000) == [100, 200]
    assert sum(mcp_text.share([7_000] * 20, 14_000)) <= 14_000
    assert mcp_text.share([], 100) == [] and mcp_text.share([50], -5) == [0]


def test_clip_text_says_whether_it_cut() -> None:
    assert mcp_text.clip_text("short", 10) == ("short", False)
    cut, clipped = mcp_text.clip_text("word " * 100, 50)
    assert clipped and len(cut) <= 50 and cut.endswith("…")


def test_when_and_ref() -> None:
    assert mcp_text.when("2026-01-31T14:02:03.5Z") == "2026-01-31 14:02" and mcp_text.when(None) == "?"
    assert mcp_text.ref({"citation": "mem:AbC123", "id": 1}) == "[mem:AbC123]"
    assert mcp_text.ref({"citation": None, "id": 7}) == "[id 7]"


# ---------------------------------------------------------------------- search


def test_search_lines_carry_citations_and_string_ids() -> None:
    data = {"results": [hit(1), hit(2)], "meta": {"mode": "hybrid", "confidence": "high", "count": 2, "took_ms": 3}}
    out = mcp_text.search(data, query="hello", scope="/home/dev/work")
    assert "## Memory search" in out.text and "2 hits in project /home/dev/work" in out.text
    assert "1. [mem:Ab0001] tool_use · 2026-11-22 05:57 · session dc75efdc" in out.text
    assert "(high)" in out.text and "Bash: echo hello 2" in out.text and "[mem:XXXXXX]" in out.text
    assert "/home/dev/work · score" not in out.text  # the project is only named per hit across projects
    results = out.data["results"]
    assert [r["citation"] for r in results] == ["mem:Ab0001", "mem:Ab0002"]
    assert results[0]["id"] == str(BIG_ID + 1) and out.data["scope"] == "/home/dev/work"
    assert out.data["meta"] == {"mode": "hybrid", "confidence": "high", "count": 2, "took_ms": 3}


def test_search_across_projects_names_each_project_and_flags_weak_hits() -> None:
    data = {"results": [hit(1, confidence="none")], "meta": {"confidence": "none", "mode": "hybrid"}}
    out = mcp_text.search(data, query="q", scope=None)
    assert "in all projects" in out.text and "· /home/dev/work · score" in out.text
    assert "weak matches" in out.text and "all_projects=true" not in out.text
    scoped = mcp_text.search(data, query="q", scope="/x")
    assert "all_projects=true" in scoped.text


def test_search_without_hits_suggests_widening() -> None:
    out = mcp_text.search({"results": [], "meta": {}}, query="nothing", scope="/home/dev/work")
    assert "No memories match in project /home/dev/work" in out.text and "all_projects=true" in out.text
    assert out.data["results"] == []
    everywhere = mcp_text.search({"results": [], "meta": {}}, query="nothing", scope=None)
    assert "all projects" in everywhere.text and "all_projects=true" not in everywhere.text


def test_search_is_bounded() -> None:
    data = {"results": [hit(i, summary="x" * 5_000) for i in range(1, 60)], "meta": {}}
    out = mcp_text.search(data, query="q" * 5_000, scope=None)
    assert len(out.text) <= MAX_CHARS and len(out.data["results"]) <= mcp_text.MAX_RESULTS


# ---------------------------------------------------------------------- timeline


def test_timeline_marks_targets_and_lists_missing() -> None:
    data = {
        "windows": [
            {
                "session_id": "dc75efdc-6adf-4400-9099-a7992cc138fc",
                "project": "/home/dev/work",
                "events": [event(1), event(2, target=True, preview="Bash: echo hello-from-mock")],
            }
        ],
        "targets": ["mem:Tl0002"],
        "missing": ["mem:zzzzzz"],
    }
    out = mcp_text.timeline(data)
    assert "### Session dc75efdc-6adf-4400-9099-a7992cc138fc · /home/dev/work" in out.text
    assert "- [mem:Tl0001] 2026-11-22 05:57 user_prompt · Please RUN_TOOL now" in out.text
    assert "- **▶ [mem:Tl0002] 2026-11-22 05:57 user_prompt · Bash: echo hello-from-mock**" in out.text
    assert "Not found (forgotten, or never stored): mem:zzzzzz." in out.text
    events = out.data["windows"][0]["events"]
    assert [e["id"] for e in events] == [str(BIG_ID - 1), str(BIG_ID - 2)]
    assert out.data["targets"] == ["mem:Tl0002"] and out.data["omitted_events"] == 0


def test_timeline_is_bounded_with_a_note() -> None:
    windows = [
        {"session_id": f"s{w}", "project": "/p", "events": [event(n, preview="y" * 200) for n in range(41)]}
        for w in range(20)
    ]
    out = mcp_text.timeline({"windows": windows, "targets": [], "missing": []})
    assert len(out.text) <= MAX_CHARS
    shown = sum(len(w["events"]) for w in out.data["windows"])
    assert out.data["omitted_events"] == 20 * 41 - shown > 0
    assert f"{out.data['omitted_events']} more events not shown" in out.text


# ---------------------------------------------------------------------- details


def test_details_show_full_text_source_and_tool_facts() -> None:
    text = "Bash: echo hello-from-mock\nPrint a greeting\nhello-from-mock"
    out = mcp_text.details({"details": [detail(1, text)], "missing": ["mem:zzzzzz"]})
    assert out.text.startswith("## [mem:Dt0001] tool_use · 2026-11-22 05:57\n")
    assert "Source: /p/s.jsonl:26-27" in out.text and "Files: /home/dev/work/notes.txt" in out.text
    assert 'Tool: Bash · ok · input {"description": "Print a greeting"}' in out.text
    assert f"```text\n{text}\n```" in out.text and "clipped" not in out.text
    assert "Not found (forgotten, or never stored): mem:zzzzzz." in out.text
    [obs] = out.data["observations"]
    assert obs["text"] == text and obs["clipped"] is False and obs["id"] == str(BIG_ID - 1)
    assert "metadata" not in obs and out.data["missing"] == ["mem:zzzzzz"]


def test_details_clip_long_texts_fairly_and_stay_bounded() -> None:
    items = [detail(1, "short answer")] + [detail(n, ("word " * 20_000).strip()) for n in range(2, 21)]
    out = mcp_text.details({"details": items, "missing": []})
    assert len(out.text) <= MAX_CHARS
    observations = out.data["observations"]
    assert len(observations) == 20 and observations[0]["text"] == "short answer"
    assert all(o["clipped"] and o["text_chars"] == 99_999 for o in observations[1:])
    assert out.text.count("[clipped: the first") == 19
    assert len({len(o["text"]) for o in observations[1:]}) <= 2  # the long ones share equally


def test_details_mention_text_clipped_at_import() -> None:
    item = detail(1, "out…", metadata={"text_truncated": True, "text_chars": 250_000})
    out = mcp_text.details({"details": [item], "missing": []})
    assert "already clipped at import (the tool output had 250,000 characters)" in out.text


# ---------------------------------------------------------------------- forget, stats


def test_forget_dry_run_and_confirmed() -> None:
    dry = mcp_text.forget({"matching": 1, "forgotten": 0}, ["mem:AbC123"], confirmed=False)
    assert dry.text.startswith("1 memory would be forgotten (mem:AbC123). Nothing was removed")
    assert "confirm=true" in dry.text
    assert dry.data == {"refs": ["mem:AbC123"], "matching": 1, "forgotten": 0, "confirmed": False}
    done = mcp_text.forget({"matching": 2, "forgotten": 2}, ["mem:a", "mem:b"], confirmed=True)
    assert done.text.startswith("Forgot 2 memories for good (mem:a, mem:b)") and done.data["forgotten"] == 2


def test_stats() -> None:
    data = {
        "events": 661,
        "events_by_type": {"agent_response": 245, "tool_use": 368},
        "sessions": 12,
        "projects": 5,
        "first_event": "2025-09-19T17:34:29Z",
        "last_event": "2026-11-22T05:57:12Z",
        "forgotten_events": 1,
        "store_bytes": 6_303_744,
        "schema_version": 6,
        "data_dir": "/d",
    }
    out = mcp_text.stats(data)
    assert "- Events: 661 in 12 sessions across 5 projects" in out.text
    assert "agent_response 245, tool_use 368" in out.text and "(6.3 MB, schema 6)" in out.text
    assert out.data == data


# ---------------------------------------------------------------------- the face's pure helpers


def test_event_type_literal_matches_the_store() -> None:
    from typing import get_args

    from claude_memory.core.events import EVENT_TYPES
    from claude_memory.mcp import server as mcp_server

    assert get_args(mcp_server.EventType) == tuple(EVENT_TYPES)


def test_default_project_prefers_claude_project_dir(tmp_path: Path) -> None:
    from claude_memory.mcp import server as mcp_server

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert mcp_server.default_project({"CLAUDE_PROJECT_DIR": str(repo / "src")}) == str(repo)
    assert mcp_server.default_project({}, cwd=str(repo / "src")) == str(repo)
    assert mcp_server.default_project({"CLAUDE_PROJECT_DIR": "  "}, cwd="/no/such/dir") == "/no/such/dir"


def test_argument_errors_are_one_sentence() -> None:
    from claude_memory.mcp import server as mcp_server

    class Args(BaseModel):
        query: str
        limit: int = 10

    with pytest.raises(ValidationError) as missing:
        Args.model_validate({})
    assert mcp_server.argument_error(missing.value) == "The argument query is required."
    with pytest.raises(ValidationError) as bad:
        Args.model_validate({"query": "x", "limit": "many"})
    message = mcp_server.argument_error(bad.value)
    assert message.startswith("Invalid argument limit: ") and message.endswith(".") and "\n" not in message
