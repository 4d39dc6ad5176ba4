"""Every kind of bad transcript input is skipped and reported with its file and line; the import finishes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from claude_memory.core.filters import EventFilters
from claude_memory.service.memory import Memory

Cli = Callable[..., subprocess.CompletedProcess[str]]


def _prompt(uuid: str, text: str) -> bytes:
    return (
        json.dumps(
            {
                "type": "user",
                "uuid": uuid,
                "sessionId": "bad-1",
                "timestamp": "2026-04-01T09:00:00.000Z",
                "cwd": "/nonexistent/bad",
                "message": {"role": "user", "content": text},
            }
        ).encode()
        + b"\n"
    )


def write_bad_home(home: Path) -> Path:
    folder = home / "projects" / "-nonexistent-bad"
    folder.mkdir(parents=True)
    path = folder / "bad-1.jsonl"
    with path.open("wb") as fh:
        fh.write(_prompt("u1", "before the bad lines"))  # line 1
        fh.write(b'{"type":"user","message":{"content":"half a li\n')  # 2: truncated JSON
        fh.write(b"\xc3\x28\xa0\xa1 not utf-8 \xff\n")  # 3: invalid UTF-8
        fh.write(bytes(range(0, 10)) + bytes(range(11, 256)) + b"\n")  # 4: binary garbage (every byte but \n)
        fh.write(b'{"type":"user","message":{"content":"' + b"A" * (20 << 20) + b'"}}\n')  # 5: a 20 MB line
        fh.write(b'{"type":"hologram","uuid":"h1","payload":{}}\n')  # 6: a line type from the future
        fh.write(b"42\n")  # 7: JSON, but not an object
        fh.write(b"\n")  # 8: blank
        fh.write(_prompt("u2", "after the bad lines"))  # 9
        fh.write(b'{"type":"assistant","uuid":"a9","message":{"id":"m9","content":[{"type":"te')  # 10: cut off at EOF
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "notes.txt").write_text("not a transcript")
    return path


def test_bad_lines_are_skipped_reported_and_the_import_finishes(tmp_path: Path) -> None:
    home = tmp_path / "claude"
    path = write_bad_home(home)
    with Memory(tmp_path / "data") as memory:
        report = memory.import_history(home, settle_seconds=0)
        texts = sorted(e.text for e in memory.history(EventFilters(), 100))
    assert texts == ["after the bad lines", "before the bad lines"]
    issues = {(i.path, i.line_no): i.reason for i in report.issues}
    assert issues == {
        (str(path), 2): "malformed JSON",
        (str(path), 3): "line is not valid UTF-8",
        (str(path), 4): "line is not valid UTF-8",
        (str(path), 5): "line too long; skipped",
        (str(path), 7): "line is not a JSON object",
        (str(path), 10): "last line has no newline yet; read it later",
    }
    assert report.unknown_line_types == {"hologram": 1}
    assert report.lines_skipped["unknown line type hologram"] == 1
    assert sum(report.lines_skipped.values()) == 7
    assert report.files_found == 2 and report.events_new == 2


def test_cli_reports_bad_lines_in_json_and_exits_zero(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "claude"
    write_bad_home(home)
    run = cli(tmp_path / "data", "import", "--claude-home", str(home), "--json", "--settle-seconds", "0")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["skipped_lines"]["total"] == 7
    lines = sorted(item["line"] for item in report["skipped_lines"]["first"])
    assert lines == [2, 3, 4, 5, 7, 10]
    assert all(item["path"].endswith("bad-1.jsonl") for item in report["skipped_lines"]["first"])
    assert "half a li" not in run.stdout  # reasons never quote the content


def test_unfinished_last_line_of_a_live_file_is_left_for_later(tmp_path: Path) -> None:
    """A file written seconds ago may be mid-line: the partial line is not an error, it is read next time."""
    home = tmp_path / "claude"
    folder = home / "projects" / "-nonexistent-live"
    folder.mkdir(parents=True)
    path = folder / "live-1.jsonl"
    full = _prompt("l2", "second prompt, written in two parts")
    path.write_bytes(_prompt("l1", "first prompt") + full[:30])
    with Memory(tmp_path / "data") as memory:
        first = memory.import_history(home, settle_seconds=3600)  # the file is fresh: not settled
        assert first.events_new == 1 and not first.issues
        with path.open("ab") as fh:
            fh.write(full[30:])
        second = memory.import_history(home, settle_seconds=3600)
        assert second.events_new == 1 and not second.issues
        assert sorted(e.text for e in memory.history(EventFilters(), 100)) == [
            "first prompt",
            "second prompt, written in two parts",
        ]


def _tool_lines(result: bool) -> bytes:
    call = {
        "type": "assistant",
        "uuid": "a1",
        "sessionId": "slow-1",
        "timestamp": "2026-04-01T09:00:00.000Z",
        "cwd": "/nonexistent/bad",
        "message": {
            "id": "m1",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": "Task",
                    "input": {"description": "analyse", "prompt": "do it"},
                }
            ],
        },
    }
    answer = {
        "type": "user",
        "uuid": "r1",
        "sessionId": "slow-1",
        "timestamp": "2026-04-01T10:30:00.000Z",
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": "FINAL REPORT: the bug is in parser.py"}
            ]
        },
    }
    return (json.dumps(call) + "\n").encode() + ((json.dumps(answer) + "\n").encode() if result else b"")


def test_a_tool_call_waiting_for_hours_is_not_closed_early(tmp_path: Path) -> None:
    """A subagent or a question to the user can take hours: the call waits for its result."""
    import time

    from claude_memory.core.privacy import PrivacyFilter
    from claude_memory.service.discovery import discover
    from claude_memory.service.importer import Importer, ImportOptions

    home = tmp_path / "claude"
    folder = home / "projects" / "-nonexistent-bad"
    folder.mkdir(parents=True)
    path = folder / "slow-1.jsonl"
    path.write_bytes(_tool_lines(result=False))
    now = [time.time() + 3 * 3600]  # the file has been idle for three hours
    with Memory(tmp_path / "data") as memory:
        importer = Importer(memory.writer, PrivacyFilter(), ImportOptions(settle_seconds=60), clock=lambda: now[0])
        assert importer.run(discover(home).files).events_new == 0  # still waiting for the result
        path.write_bytes(_tool_lines(result=True))
        assert importer.run(discover(home).files).events_new == 1
        (event,) = memory.history(EventFilters(), 10)
        assert "FINAL REPORT" in event.text and "result" not in event.metadata
    other = tmp_path / "other"
    (other / "projects" / "-nonexistent-bad").mkdir(parents=True)
    (other / "projects" / "-nonexistent-bad" / "slow-1.jsonl").write_bytes(_tool_lines(result=False))
    with Memory(tmp_path / "data2") as memory:
        later = Importer(memory.writer, PrivacyFilter(), ImportOptions(), clock=lambda: time.time() + 2 * 86400)
        assert later.run(discover(other).files).events_new == 1  # two days idle: stored without a result
        (event,) = memory.history(EventFilters(), 10)
        assert event.metadata["result"] == "missing"


def test_bytes_appended_while_reading_wait_for_the_next_run(tmp_path: Path) -> None:
    import io

    from claude_memory.core.lines import iter_lines

    data = _prompt("u1", "seen") + b'{"type":"user","uuid":"u2","message":{"content":"appended while rea'
    seen = len(_prompt("u1", "seen")) + 10  # the size when the file was looked at
    got = list(iter_lines(io.BytesIO(data), start_offset=0, start_line=1, max_line_bytes=1 << 20, end_offset=seen))
    assert [g.terminated for g in got] == [True, False]
    assert got[1].end == seen
