"""Import the real ~/.claude fixture tree into a real DuckDB file; counts derived independently."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from claude_memory.service.discovery import discover
from claude_memory.service.importer import ImportReport
from claude_memory.service.memory import Memory
from claude_memory.service.server import import_parts
from claude_memory.store.keyword import KeywordFilters

SYNTHETIC = re.compile(
    r"^\s*(<task-notification>|<local-command-|<command-name>|<command-message>|\[Request interrupted|Caveat: )"
)
COMMAND_ARGS = re.compile(r"<command-args>\s*\S.*?</command-args>", re.S)  # a slash command given arguments
REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def expected_counts(home: Path) -> Counter[str]:
    """Count what the fixture files contain, by simple rules written independently of the parser."""
    counts: Counter[str] = Counter()
    for path in sorted((home / "projects").rglob("*.jsonl")):
        if path.name.startswith("agent-acompact-"):
            continue  # the compaction summariser's own transcript is not imported
        is_subagent = path.parent.name == "subagents"
        message_ids_with_text: set[str] = set()
        tool_ids: set[str] = set()
        for raw in path.read_bytes().splitlines():
            line = json.loads(raw)
            kind = line.get("type")
            if kind == "system" and line.get("subtype") == "compact_boundary":
                counts["compaction"] += 1
            if kind == "assistant":
                message = line["message"]
                for block in message.get("content") or []:
                    if block.get("type") == "text" and block["text"].strip() and message.get("model") != "<synthetic>":
                        message_ids_with_text.add(message["id"])
                    if block.get("type") == "tool_use":
                        tool_ids.add(block["id"])
            if kind != "user":
                continue
            if line.get("isCompactSummary"):
                counts["compact_summary"] += 1
                continue
            content = line["message"]["content"]
            if isinstance(content, list):
                if any(b.get("type") == "tool_result" for b in content):
                    continue
                content = "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
            typed = bool(COMMAND_ARGS.search(content))
            if line.get("isMeta") or (SYNTHETIC.match(content) and not typed) or not REMINDER.sub("", content).strip():
                continue
            counts["subagent_prompt" if is_subagent else "user_prompt"] += 1
        counts["agent_response"] += len(message_ids_with_text)
        counts["tool_use"] += len(tool_ids)
    return counts


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_fixture_import_counts_match_and_reimport_adds_nothing(fixtures_home: Path, store: Path) -> None:
    expected = expected_counts(fixtures_home)
    assert sum(expected.values()) > 600
    with Memory(store) as memory:
        report = memory.import_history(fixtures_home, settle_seconds=0)
        assert dict(report.new_by_type) == dict(expected)
        assert report.events_new == sum(expected.values())
        assert report.lines_skipped == Counter()
        assert memory.stats()["events_by_type"] == dict(expected)
        again = memory.import_history(fixtures_home, settle_seconds=0)
        assert again.events_new == 0 and again.files_unchanged == again.files_found
    # A fresh process, a forced full re-read (checkpoints dropped): still nothing new.
    con = duckdb.connect(str(store / "memory.duckdb"))
    con.execute("DELETE FROM ingest_checkpoints")
    con.close()
    with Memory(store) as memory:
        reread = memory.import_history(fixtures_home, settle_seconds=0)
        assert reread.events_parsed == sum(expected.values())
        assert reread.events_new == 0


def test_sessions_projects_and_subagents_are_recorded(fixtures_home: Path, store: Path) -> None:
    with Memory(store) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        sessions = {s["session_id"]: s for s in memory.sessions(None, 100)}
        assert len(sessions) == 12
        parent = sessions["87c4f06a-04bd-488c-b05b-784bbc76b781"]
        assert parent["project"] == "/home/dev/work" and parent["subagents"] == 1
        assert parent["transcript"].endswith("87c4f06a-04bd-488c-b05b-784bbc76b781.jsonl")
        row = memory.con.execute(
            "SELECT agent_type, description FROM subagents WHERE agent_id = 'a2e220ff5cef73496'"
        ).fetchone()
        assert row == ("general-purpose", "Say hi")
        # Subagent events belong to the parent session and carry the agent id.
        agent_events = memory.history(KeywordFilters(session_id="87c4f06a-04bd-488c-b05b-784bbc76b781"), 100)
        assert {e.agent_id for e in agent_events} == {None, "a2e220ff5cef73496"}
        spaced = memory.sessions("/home/dev/My Project_v2.0", 10)
        assert [s["session_id"] for s in spaced] == ["3b8a7f97-b03d-49ee-9354-b2c561361444"]
        legacy = sessions["0fae0449-64d3-4788-8622-d3a47d82c14b"]
        assert legacy["title"]  # the legacy {"type": "summary"} line became the session title


def test_every_event_points_at_its_transcript_lines(fixtures_home: Path, store: Path) -> None:
    with Memory(store) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        rows = memory.con.execute(
            "SELECT source_path, line_start, line_end, byte_start, byte_end, source_uuid FROM events"
        ).fetchall()
    assert rows
    cache: dict[str, bytes] = {}
    for path, line_start, line_end, byte_start, byte_end, uuid in rows:
        data = cache.setdefault(path, Path(path).read_bytes())
        chunk = data[byte_start:byte_end]
        assert data[:byte_start].count(b"\n") + 1 == line_start
        assert chunk.count(b"\n") == line_end - line_start + 1
        if uuid:
            assert uuid.encode() in chunk


def test_project_scoped_import(fixtures_home: Path, store: Path) -> None:
    with Memory(store) as memory:
        report = memory.import_history(fixtures_home, "/home/dev/My Project_v2.0", settle_seconds=0)
        assert report.files_found == 1
        assert {s["project"] for s in memory.sessions(None, 100)} == {"/home/dev/My Project_v2.0"}


def test_truncated_or_replaced_file_is_read_again_without_duplicates(fixtures_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "claude"
    shutil.copytree(fixtures_home, home)
    target = next((home / "projects" / "-home-dev-work").glob("f31c*.jsonl"))
    with Memory(tmp_path / "data") as memory:
        first = memory.import_history(home, settle_seconds=0)
        # Replace the file by a shorter copy (as a rewrite would), then restore it: no event twice.
        original = target.read_bytes()
        target.write_bytes(original[: len(original) // 2].rsplit(b"\n", 1)[0] + b"\n")
        shrunk = memory.import_history(home, settle_seconds=0)
        assert shrunk.files_restarted == 1 and shrunk.events_new == 0
        target.unlink()
        target.write_bytes(original)
        restored = memory.import_history(home, settle_seconds=0)
        assert restored.events_new == 0
        assert memory.stats()["events"] == first.events_new


def test_an_import_in_parts_reports_what_one_run_reports(fixtures_home: Path, tmp_path: Path) -> None:
    """The service imports a history in parts of about 4 MB (one worker task each, so requests run in
    between) and adds the parts' reports up: the sum must be the report of a single run."""
    found = discover(fixtures_home)
    parts = import_parts(found.files, 20_000)  # small parts: several files each, never a file split
    assert len(parts) > 2 and [f for part, _ in parts for f in part] == found.files
    assert [size for _, size in parts] == [sum(f.path.stat().st_size for f in part) for part, _ in parts]
    with Memory(tmp_path / "whole") as memory:
        whole = memory.import_history(fixtures_home, settle_seconds=0).to_json()
    total = ImportReport(files_skipped=dict(found.skipped))
    with Memory(tmp_path / "parts") as memory:
        for part, _ in parts:
            total.merge(memory.import_files(part, settle_seconds=0))
        assert memory.stats()["events"] == whole["events"]["new"]
    summed = total.to_json()
    whole.pop("seconds"), summed.pop("seconds")
    assert summed == whole
