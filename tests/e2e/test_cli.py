"""The real ``claude-memory`` command, run as a user would, against the real fixture tree (tests/fixtures)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from support import own_fixtures as fx

Cli = Callable[..., subprocess.CompletedProcess[str]]


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path, cli: Cli) -> Path:
    tmp = tmp_path_factory.mktemp("cli")
    home = shutil.copytree(fixtures_home, tmp / "claude")
    fx.add_summariser_transcript(home)
    data = tmp / "data"
    report = as_json(cli(data, "import", "--claude-home", str(home), "--json", "--settle-seconds", "0"))
    assert report["events"]["new"] > 80
    transcripts = len(list((fixtures_home / "projects").rglob("*.jsonl")))
    assert report["files"]["found"] == transcripts  # not counting the summariser's
    assert report["files"]["skipped"] == {"compaction summariser transcript": 1}
    assert report["skipped_lines"]["total"] == 0
    return data


def test_search_json_shape_and_project_scope(imported: Path, cli: Cli) -> None:
    out = as_json(cli(imported, "search", fx.ECHO_WORD, "--project", fx.WORK, "--limit", "3", "--json"))
    assert set(out) == {"results", "meta"}
    assert 1 <= len(out["results"]) <= 3 and out["meta"]["count"] == len(out["results"])
    for result in out["results"]:
        assert {"id", "score", "type", "timestamp", "session_id", "project", "text", "source"} <= set(result)
        assert result["project"] == fx.WORK
        assert {"path", "line_start", "line_end", "uuid"} <= set(result["source"])
        assert Path(result["source"]["path"]).is_file()
        assert "hello" in result["text"].lower()
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)
    other = as_json(cli(imported, "search", fx.ECHO_WORD, "--project", fx.INFRA, "--json"))
    assert other["results"] == []


def test_search_filters_by_type_and_time(imported: Path, cli: Cli) -> None:
    tools = as_json(cli(imported, "search", fx.TOPIC, "--type", "tool_use", "--json", "--limit", "20"))
    assert tools["results"] and {r["type"] for r in tools["results"]} == {"tool_use"}
    early = as_json(cli(imported, "search", fx.TOPIC, "--until", "2000-01-01", "--json"))
    assert early["results"] == []


def test_history_sessions_stats(imported: Path, cli: Cli) -> None:
    sessions = as_json(cli(imported, "sessions", "--json", "--limit", "50"))["sessions"]
    assert len(sessions) == len(fx.SESSIONS)
    session = sessions[0]["session_id"]
    events = as_json(cli(imported, "history", "--session", session, "--json", "--limit", "500"))["events"]
    assert events and {e["session_id"] for e in events} == {session}
    stamps = [e["timestamp"] for e in events]
    assert stamps == sorted(stamps, reverse=True)
    stats = as_json(cli(imported, "stats", "--json"))
    assert stats["events"] == sum(stats["events_by_type"].values()) > 80
    assert stats["sessions"] == len(fx.SESSIONS) and stats["schema_version"] >= 2
    human = cli(imported, "stats")
    assert human.returncode == 0 and "Events:" in human.stdout


def test_errors_are_one_sentence_with_meaningful_exit_codes(imported: Path, tmp_path: Path, cli: Cli) -> None:
    missing = cli(tmp_path / "d", "import", "--claude-home", str(tmp_path / "nope"))
    assert missing.returncode == 1 and missing.stderr.startswith("Error: ") and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad_type = cli(imported, "search", "x", "--type", "nonsense")
    assert bad_type.returncode == 2 and "nonsense" in bad_type.stderr
    nothing = cli(imported, "forget", "--session", "no-such-session", "--yes")
    assert nothing.returncode == 4 and "Nothing matches" in nothing.stderr
    unconfirmed = cli(imported, "forget", "--project", fx.WORK)
    assert unconfirmed.returncode == 1 and "--yes" in unconfirmed.stderr
    bad_date = cli(imported, "forget", "--before", "yesterdayish", "--yes")
    assert bad_date.returncode == 2 and "yesterdayish" in bad_date.stderr
    con = duckdb.connect(str(imported / "memory.duckdb"))  # another process holds the store
    try:
        busy = cli(imported, "--wait", "1", "stats")  # (it waits its turn, 600 s unless told)
    finally:
        con.close()
    waiting, error = busy.stderr.splitlines()
    assert waiting == "Waiting for another claude-memory process to finish with the store..."
    assert busy.returncode == 3 and "in use by another process" in error and error.endswith("(waited 1 s).")


def test_forget_session_with_yes(imported: Path, cli: Cli) -> None:
    before = as_json(cli(imported, "stats", "--json"))["events"]
    out = as_json(cli(imported, "forget", "--session", fx.GREETING, "--yes", "--json"))
    assert out["forgotten"] > 0
    after = as_json(cli(imported, "stats", "--json"))
    assert after["events"] == before - out["forgotten"] and after["forgotten_events"] >= out["forgotten"]
    history = as_json(cli(imported, "history", "--session", fx.GREETING, "--json"))
    assert history["events"] == []


def test_batch_search_show_and_forget_by_citation(imported: Path, tmp_path: Path, cli: Cli) -> None:
    batch = tmp_path / "queries.jsonl"
    batch.write_text(
        f'{{"query": "{fx.ECHO_WORD}", "project": "{fx.WORK}", "limit": 2}}\n'
        "this is not json\n"
        f'{{"query": "{fx.TOPIC}", "limit": 3}}\n'
        '{"query": ""}\n'
    )
    run = cli(imported, "search", "--batch", str(batch))
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(lines) == 4
    first, bad, third, empty = lines
    assert 1 <= len(first["results"]) <= 2 and {r["project"] for r in first["results"]} == {fx.WORK}
    assert "line 2" in bad["error"] and "error" in empty
    assert len(third["results"]) == 3 and third["meta"]["line"] == 3
    single = as_json(cli(imported, "search", fx.TOPIC, "--limit", "3", "--json"))
    assert [r["id"] for r in single["results"]] == [r["id"] for r in third["results"]]
    citation = first["results"][0]["citation"]
    assert citation.startswith("mem:") and len(citation) == 10
    shown = as_json(cli(imported, "show", citation, "--json"))
    assert shown["citation"] == citation and shown["source"]["path"] == first["results"][0]["source"]["path"]
    assert fx.ECHO_WORD in shown["text"]
    human = cli(imported, "show", citation)
    assert human.returncode == 0 and citation in human.stdout and "Source " in human.stdout
    gone = as_json(cli(imported, "forget", citation, "--yes", "--json"))
    assert gone == {"forgotten": 1}
    missing = cli(imported, "show", citation)
    assert missing.returncode == 4 and "No memory" in missing.stderr


def test_batch_search_counts_relative_dates_from_each_lines_as_of(imported: Path, tmp_path: Path, cli: Cli) -> None:
    """A dated question ("as_of") gets its relative date as a time window from that day; without one, from now; a
    line whose as_of is not a time gets an error of its own."""
    batch = tmp_path / "dated.jsonl"
    batch.write_text(
        f'{{"query": "what did we {fx.TOPIC} yesterday", "as_of": "2026-03-02T10:00:00Z"}}\n'
        f'{{"query": "what did we {fx.TOPIC} a week ago"}}\n'
        f'{{"query": "{fx.TOPIC}", "as_of": "last week"}}\n'
    )
    days = {(datetime.now(UTC) - timedelta(days=9)).date().isoformat()}  # a week ago, less its 2 days of slack
    run = cli(imported, "search", "--batch", str(batch))
    days.add((datetime.now(UTC) - timedelta(days=9)).date().isoformat())  # (the run may cross midnight)
    assert run.returncode == 0, run.stderr
    dated, undated, bad = (json.loads(line) for line in run.stdout.splitlines())
    window = dated["meta"]["time_window"]
    assert (
        window["text"] == "yesterday"
        and window["start"].startswith("2026-02-28")
        and window["end"].startswith("2026-03-03")
    )
    assert undated["meta"]["time_window"]["text"] == "a week ago"
    assert undated["meta"]["time_window"]["start"][:10] in days
    assert "line 3" in bad["error"] and "as_of" in bad["error"]
