"""Import a real ~/.claude tree (the project's own fixtures; the third-party one in ../shared when present) into a
real DuckDB file; counts derived independently."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from claude_memory.core.filters import EventFilters
from claude_memory.service.discovery import discover
from claude_memory.service.importer import ImportReport
from claude_memory.service.memory import Memory
from claude_memory.service.server import import_parts
from support import own_fixtures as fx

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


def check_counts_and_reimport(home: Path, store: Path, least: int) -> None:
    expected = expected_counts(home)
    assert sum(expected.values()) > least
    with Memory(store) as memory:
        report = memory.import_history(home, settle_seconds=0)
        assert dict(report.new_by_type) == dict(expected)
        assert report.events_new == sum(expected.values())
        assert report.lines_skipped == Counter()
        assert memory.stats()["events_by_type"] == dict(expected)
        again = memory.import_history(home, settle_seconds=0)
        assert again.events_new == 0 and again.files_unchanged == again.files_found
    # A fresh process, a forced full re-read (checkpoints dropped): still nothing new.
    con = duckdb.connect(str(store / "memory.duckdb"))
    con.execute("DELETE FROM ingest_checkpoints")
    con.close()
    with Memory(store) as memory:
        reread = memory.import_history(home, settle_seconds=0)
        assert reread.events_parsed == sum(expected.values())
        assert reread.events_new == 0


def test_fixture_import_counts_match_and_reimport_adds_nothing(fixtures_home: Path, store: Path) -> None:
    expected = expected_counts(fixtures_home)
    assert set(expected) == {"user_prompt", "agent_response", "tool_use", "subagent_prompt", "compaction",
                             "compact_summary"} and expected["compaction"] == 3  # fmt: skip
    check_counts_and_reimport(fixtures_home, store, 80)


@pytest.mark.covered_by(
    "tests/integration/test_import_fixtures.py::test_fixture_import_counts_match_and_reimport_adds_nothing"
)
def test_third_party_import_counts_match_and_reimport_adds_nothing(third_party_home: Path, store: Path) -> None:
    """Older versions (1.0.117-2.1.39: legacy summary lines, progress lines, a compaction summariser's own
    transcript), imported by the same rules."""
    check_counts_and_reimport(third_party_home, store, 600)


def test_sessions_projects_and_subagents_are_recorded(fixtures_home: Path, store: Path) -> None:
    with Memory(store) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        sessions = {s["session_id"]: s for s in memory.sessions(None, 100)}
        assert set(sessions) == set(fx.SESSIONS)
        assert {s["project"] for s in sessions.values()} == set(fx.PROJECTS)
        parent = sessions[fx.DELEGATED]
        assert parent["project"] == fx.WORK and parent["subagents"] == 1
        assert parent["transcript"].endswith(f"{fx.DELEGATED}.jsonl")
        (meta_file,) = (fixtures_home / "projects" / "-home-dev-work" / fx.DELEGATED / "subagents").glob("*.meta.json")
        agent_id = meta_file.name.removeprefix("agent-").removesuffix(".meta.json")
        meta = json.loads(meta_file.read_text())
        row = memory.con.execute(
            "SELECT agent_type, description FROM subagents WHERE agent_id = ?", [agent_id]
        ).fetchone()
        assert row == (meta["agentType"], meta["description"]) == ("general-purpose", "Count the files")
        # Subagent events belong to the parent session and carry the agent id.
        agent_events = memory.history(EventFilters(session_id=fx.DELEGATED), 100)
        assert {e.agent_id for e in agent_events} == {None, agent_id}
        spaced = memory.sessions(fx.SPACED, 10)
        assert [s["session_id"] for s in spaced] == [fx.RESUMED]
        # `claude --name` wrote a custom-title line: the session's title
        assert sessions[fx.COMPACTED]["title"] == "echo and compact" and sessions[fx.CART]["title"] == "shop cart"
        assert not sessions[fx.GREETING]["title"]


@pytest.mark.covered_by(
    "tests/unit/test_transcript.py::test_lines_of_older_versions_titles_progress_and_metadata_only_files"
)
def test_legacy_summary_line_is_the_title_of_a_third_party_session(third_party_home: Path, store: Path) -> None:
    with Memory(store) as memory:
        memory.import_history(third_party_home, settle_seconds=0)
        sessions = {s["session_id"]: s for s in memory.sessions(None, 100)}
        assert len(sessions) == 12
        legacy = sessions["0fae0449-64d3-4788-8622-d3a47d82c14b"]
        assert legacy["title"]  # the legacy {"type": "summary"} line became the session title


def test_the_compaction_summarisers_own_transcript_is_skipped(fixtures_home: Path, tmp_path: Path) -> None:
    home = shutil.copytree(fixtures_home, tmp_path / "claude")
    summariser = fx.add_summariser_transcript(home)
    with Memory(tmp_path / "data") as memory:
        report = memory.import_history(home, settle_seconds=0)
        assert report.files_skipped == {"compaction summariser transcript": 1}
        assert report.files_found == len(list((fixtures_home / "projects").rglob("*.jsonl")))
        stored = memory.con.execute("SELECT count(*) FROM events WHERE source_path = ?", [str(summariser)]).fetchone()
        assert stored == (0,)
        assert dict(report.new_by_type) == dict(expected_counts(fixtures_home))


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
        report = memory.import_history(fixtures_home, fx.SPACED, settle_seconds=0)
        assert report.files_found == 1
        assert {s["project"] for s in memory.sessions(None, 100)} == {fx.SPACED}


def test_truncated_or_replaced_file_is_read_again_without_duplicates(fixtures_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "claude"
    shutil.copytree(fixtures_home, home)
    target = home / "projects" / "-home-dev-work" / f"{fx.COMPACTED}.jsonl"
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
    parts = import_parts(found.files, 100_000)  # small parts: several files each, never a file split
    assert len(parts) > 2 and [f for part, _ in parts for f in part] == found.files
    assert any(len(part) > 1 for part, _ in parts)
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
