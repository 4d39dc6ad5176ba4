"""The transcript parser, on real Claude Code transcripts (the project's own in tests/fixtures; third-party ones
of older versions in ../shared when present) and on hand-made lines."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from claude_memory.core import events as ev
from claude_memory.core.events import ParsedEvent
from claude_memory.core.lines import iter_lines
from claude_memory.core.transcript import TranscriptParser
from support.own_fixtures import CART_FILE, DELEGATED, ECHO_WORD, HOOK_CONTEXT, SESSIONS

BIG = 16 << 20


def parse_bytes(
    data: bytes,
    *,
    path: str = "t.jsonl",
    agent_id: str | None = None,
    start: tuple[int, int] = (0, 1),
    max_line: int = BIG,
) -> tuple[list[ParsedEvent], TranscriptParser]:
    parser = TranscriptParser(path, session_hint="hint-session", agent_id=agent_id)
    parser.start_at(*start)
    out: list[ParsedEvent] = []
    for raw in iter_lines(io.BytesIO(data), start_offset=start[0], start_line=start[1], max_line_bytes=max_line):
        out += parser.feed(raw)
    out += parser.finish()
    return out, parser


def parse_file(path: Path, agent_id: str | None = None) -> tuple[list[ParsedEvent], TranscriptParser]:
    return parse_bytes(path.read_bytes(), path=str(path), agent_id=agent_id)


def by_type(events: list[ParsedEvent], kind: str) -> list[ParsedEvent]:
    return [e for e in events if e.type == kind]


def test_one_api_message_over_three_lines_is_one_response_and_tool_call_is_paired(transcripts: Path) -> None:
    path = transcripts / "greeting.jsonl"
    events, parser = parse_file(path)
    lines = path.read_bytes().split(b"\n")
    # The first API response is written as three lines (thinking, text, tool_use) sharing one message id.
    calls = [json.loads(line) for line in lines if b'"type":"tool_use"' in line and line.startswith(b'{"parentUuid"')]
    (call,) = [c for c in calls if c["type"] == "assistant"]
    siblings = [json.loads(line) for line in lines if call["message"]["id"].encode() in line]
    assert [b["type"] for s in siblings for b in s["message"]["content"]] == ["thinking", "text", "tool_use"]
    tools = by_type(events, ev.TOOL_USE)
    assert len(tools) == 1
    tool = tools[0]
    assert tool.tool_name == "Bash" and tool.tool_use_id and tool.tool_use_id.startswith("toolu_")
    assert tool.text.startswith(f"Bash: echo {ECHO_WORD}")  # the call
    assert tool.text.rstrip().endswith(ECHO_WORD)  # the result, paired with the call
    # The source range runs from the tool_use line to the tool_result line.
    first = json.loads(lines[tool.source.line_start - 1])
    last = json.loads(lines[tool.source.line_end - 1])
    assert first["type"] == "assistant" and first["message"]["content"][0]["type"] == "tool_use"
    assert last["type"] == "user" and last["message"]["content"][0]["type"] == "tool_result"
    assert last.get("toolUseResult", {}).get("stdout") is not None
    # Byte offsets point at exactly those lines.
    data = path.read_bytes()
    assert (
        data[tool.source.byte_start : tool.source.byte_end].count(b"\n")
        == tool.source.line_end - tool.source.line_start + 1
    )
    responses = by_type(events, ev.AGENT_RESPONSE)
    assert [r.text for r in responses] == ["I will run the command.", f"The command printed {ECHO_WORD}. Done."]
    message_ids = [r.message_id for r in responses]
    assert len(message_ids) == len(set(message_ids))
    assert parser.issues == []


def line_numbers(path: Path, test: Callable[[dict[str, Any]], bool]) -> list[int]:
    """The 1-based numbers of the lines of ``path`` for which ``test`` holds."""
    return [n for n, raw in enumerate(path.read_bytes().splitlines(), start=1) if test(json.loads(raw))]


def is_boundary(line: dict[str, Any]) -> bool:
    return line.get("type") == "system" and line.get("subtype") == "compact_boundary"


def test_compaction_boundary_and_summary_are_their_own_events(transcripts: Path) -> None:
    manual = transcripts / "compacted.jsonl"  # `/compact focus on the echo command`
    events, _ = parse_file(manual)
    (boundary,) = by_type(events, ev.COMPACTION)
    (summary,) = by_type(events, ev.COMPACT_SUMMARY)
    (boundary_line,) = line_numbers(manual, is_boundary)
    (summary_line,) = line_numbers(manual, lambda line: bool(line.get("isCompactSummary")))
    assert boundary.source.line_start == boundary_line and boundary.metadata["trigger"] == "manual"
    assert summary.source.line_start == summary_line == boundary_line + 1 and len(summary.text) > 50
    assert "/compact focus on the echo command" in [e.text for e in by_type(events, ev.USER_PROMPT)]

    automatic = transcripts / "images.jsonl"  # a reply reported a context near the window: Claude Code compacted
    auto, _ = parse_file(automatic)
    (auto_boundary,) = by_type(auto, ev.COMPACTION)
    (line_no,) = line_numbers(automatic, is_boundary)
    raw = json.loads(automatic.read_bytes().splitlines()[line_no - 1])
    assert auto_boundary.source.line_start == line_no
    assert auto_boundary.metadata == {
        "trigger": "auto",
        "pre_tokens": raw["compactMetadata"]["preTokens"],
        "post_tokens": raw["compactMetadata"]["postTokens"],
        "logical_parent_uuid": raw["logicalParentUuid"],
    }
    assert auto_boundary.metadata["pre_tokens"] > 100_000 and len(by_type(auto, ev.COMPACT_SUMMARY)) == 1


@pytest.mark.covered_by("tests/unit/test_transcript.py::test_compaction_boundary_and_summary_are_their_own_events")
def test_auto_compaction_of_older_versions(third_party_transcripts: Path) -> None:
    """Claude Code 2.1.39 (marot/spotter): the same two lines, far into a long session."""
    path = third_party_transcripts / "marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    auto, _ = parse_file(path)
    (real_boundary,) = by_type(auto, ev.COMPACTION)
    assert real_boundary.source.line_start == 754
    assert real_boundary.metadata == {
        "trigger": "auto",
        "pre_tokens": 170251,
        "logical_parent_uuid": json.loads(path.read_bytes().split(b"\n")[753])["logicalParentUuid"],
    }


def assert_nothing_injected(events: list[ParsedEvent], name: str) -> None:
    for event in events:
        assert HOOK_CONTEXT not in event.text and "MEMORY-CONTEXT injected" not in event.text, name
        assert "<system-reminder>" not in event.text, name
        assert "hook additional context" not in event.text, name
        if event.type in (ev.USER_PROMPT, ev.SUBAGENT_PROMPT):
            assert not event.text.startswith(("<task-notification>", "<command-name>", "<local-command")), name
            assert not event.text.startswith("[Request interrupted"), name


def test_injected_hook_context_and_machine_text_never_become_events(transcripts: Path) -> None:
    injected = 0
    for path in sorted(transcripts.glob("*.jsonl")):
        injected += path.read_text(encoding="utf-8").count(HOOK_CONTEXT)
        events, _ = parse_file(path, agent_id="x" if "__agent-" in path.name else None)
        assert_nothing_injected(events, path.name)
    assert injected > 50  # every run's hooks returned context, which Claude Code recorded several ways


def test_meta_hook_context_is_dropped() -> None:
    """Claude Code 2.1.38/39 recorded hook context as an isMeta user line (it is a system reminder now)."""
    meta = {
        **_user("m1", "<system-reminder>\nPostToolUse:Edit hook additional context: recall this\n</system-reminder>"),
        "isMeta": True,
    }
    events, parser = parse_bytes(_line(_user("u1", "a real prompt")) + _line(meta))
    assert [e.text for e in events] == ["a real prompt"]
    assert parser.stats.dropped["meta line"] == 1


@pytest.mark.covered_by("tests/unit/test_transcript.py::test_meta_hook_context_is_dropped")
def test_meta_hook_context_of_older_versions_is_dropped(third_party_transcripts: Path) -> None:
    path = (
        third_party_transcripts
        / "marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-acompact-e1f845.jsonl"
    )
    events, parser = parse_file(path, agent_id="acompact-e1f845")
    assert parser.stats.dropped["meta line"] >= 1
    assert all("hook additional context" not in e.text for e in events)


def test_task_notification_prompt_is_not_a_user_prompt(transcripts: Path) -> None:
    path = transcripts / "delegated.jsonl"
    events, parser = parse_file(path)
    prompts = by_type(events, ev.USER_PROMPT)
    assert [p.text for p in prompts] == ["Ask a helper agent to count the files in this project"]
    assert "<task-notification>" in path.read_text(encoding="utf-8")
    assert parser.stats.dropped["machine-written prompt"] >= 1
    (agent_call,) = [e for e in by_type(events, ev.TOOL_USE) if e.tool_name == "Agent"]
    assert agent_call.metadata["result_meta"]["status"] == "async_launched"


def test_subagent_transcript_links_to_parent_session(transcripts: Path) -> None:
    (path,) = transcripts.glob("delegated__agent-*.jsonl")
    agent_id = path.stem.split("__agent-")[1]
    events, _ = parse_file(path, agent_id=agent_id)
    assert events, "subagent transcript produced no events"
    assert {e.session_id for e in events} == {DELEGATED}
    assert {e.agent_id for e in events} == {agent_id}
    assert all(e.is_sidechain for e in events)
    (task,) = by_type(events, ev.SUBAGENT_PROMPT)
    assert task.text == "Count the files in the project with ls and report the number."
    assert not by_type(events, ev.USER_PROMPT)
    (count,) = by_type(events, ev.TOOL_USE)
    assert count.tool_name == "Bash" and count.text.startswith("Bash: ls -1 | wc -l")


def test_tool_error_and_missing_file_are_recorded(transcripts: Path) -> None:
    events, _ = parse_file(transcripts / "resumed.jsonl")
    errors = [e for e in by_type(events, ev.TOOL_USE) if e.metadata.get("is_error")]
    assert len(errors) == 1
    assert errors[0].tool_name == "Read" and "does not exist" in errors[0].text
    assert errors[0].files == ["/home/dev/My Project_v2.0/does-not-exist.txt"]
    # A call Claude Code refused before running it (its input did not fit the file) is an error too.
    cart, _ = parse_file(transcripts / "cart.jsonl")
    (refused,) = [e for e in by_type(cart, ev.TOOL_USE) if e.metadata.get("is_error")]
    assert refused.tool_name == "Edit" and refused.files == [CART_FILE]
    assert "String to replace not found" in refused.text


def check_every_file(paths: list[Path]) -> int:
    """Each transcript parses without issues, with unique keys and sound sources; the number of events."""
    total = 0
    for path in paths:
        subagent = "__agent-" in path.name or "__subagents__" in path.name
        events, parser = parse_file(path, agent_id="x" if subagent else None)
        assert parser.issues == [], path.name
        keys = [e.dedupe_key for e in events]
        assert len(keys) == len(set(keys)), path.name
        for e in events:
            assert e.text.strip()
            assert 1 <= e.source.line_start <= e.source.line_end
            assert e.source.byte_start < e.source.byte_end
            assert e.type in ev.EVENT_TYPES
        total += len(events)
    return total


def test_every_fixture_parses_without_issues_and_keys_are_unique(transcripts: Path) -> None:
    paths = sorted(transcripts.glob("*.jsonl"))
    assert len(paths) == len(SESSIONS) + 1  # and one subagent
    assert check_every_file(paths) > 80


@pytest.mark.covered_by("tests/unit/test_transcript.py::test_every_fixture_parses_without_issues_and_keys_are_unique")
def test_third_party_transcripts_parse_cleanly_and_hide_injections(third_party_transcripts: Path) -> None:
    """Public transcripts of Claude Code 1.0.117 to 2.1.39 (and generated 2.1.330 ones) in ../shared."""
    paths = sorted(third_party_transcripts.glob("*.jsonl"))
    assert check_every_file(paths) > 600
    for path in paths:
        events, _ = parse_file(path, agent_id="x" if "__subagents__" in path.name else None)
        assert_nothing_injected(events, path.name)


def _line(obj: dict[str, object]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _user(uuid: str, text: str) -> dict[str, object]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/w",
        "message": {"role": "user", "content": text},
    }


def test_malformed_lines_are_reported_with_line_numbers_and_parsing_continues() -> None:
    huge = b'{"type":"user","x":"' + b"a" * 3000 + b'"}\n'
    data = b"".join(
        [
            _line(_user("u1", "first prompt")),
            b'{"type":"user","message":{"content":"trunc\n',  # truncated JSON
            b"\xff\xfe\x00garbage\x80\n",  # binary / not UTF-8
            b"[1,2,3]\n",  # JSON but not an object
            huge,  # longer than the limit below
            _line({"type": "brand-new-type", "uuid": "n1"}),  # unknown type: skipped, not an error
            _line({"type": "user", "uuid": "u2", "message": "not-an-object"}),  # wrong structure
            _line(_user("u3", "last prompt")),
            b'{"type":"user","uuid":"u4","message":{"content":"cut off',  # unterminated final line
        ]
    )
    events, parser = parse_bytes(data, max_line=2000)
    assert [e.text for e in events] == ["first prompt", "last prompt"]
    reasons = {i.line_no: i.reason for i in parser.issues}
    assert reasons == {
        2: "malformed JSON",
        3: "line is not valid UTF-8",
        4: "line is not a JSON object",
        5: "line too long; skipped",
        7: "unexpected structure in a user line",
        9: "malformed JSON",
    }
    assert parser.stats.unknown_types["brand-new-type"] == 1
    for issue in parser.issues:
        assert "trunc" not in issue.reason and "garbage" not in issue.reason


def test_line_reader_handles_lines_across_chunk_boundaries() -> None:
    lines = [b"x" * n for n in (0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 5, 7)]
    data = b"\n".join(lines) + b"\n"
    got = list(iter_lines(io.BytesIO(data), start_offset=0, start_line=1, max_line_bytes=1 << 21))
    assert [g.data for g in got] == lines
    assert all(data[g.offset : g.end] == g.data + b"\n" for g in got if g.data is not None)
    capped = list(iter_lines(io.BytesIO(data), start_offset=0, start_line=1, max_line_bytes=1 << 20))
    assert [g.data is None for g in capped] == [False, False, False, False, True, False]
    assert capped[-1].data == b"x" * 7 and capped[-1].line_no == 6


def test_file_paths_touched_by_tools() -> None:
    call = {
        "type": "assistant",
        "uuid": "a1",
        "sessionId": "s1",
        "cwd": "/repo",
        "message": {
            "id": "m1",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "cat src/app.py && pytest tests/test_x.py -q"},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "Edit",
                    "input": {"file_path": "/repo/README.md", "old_string": "a", "new_string": "b"},
                },
                {"type": "tool_use", "id": "t3", "name": "Grep", "input": {"pattern": "foo"}},
            ],
        },
    }
    result = {
        "type": "user",
        "uuid": "r1",
        "sessionId": "s1",
        "cwd": "/repo",
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "edited"},
                {"type": "tool_result", "tool_use_id": "t3", "content": "lib/a.py\nlib/b.py"},
            ]
        },
        "toolUseResult": {"filenames": ["/repo/lib/a.py", "/repo/lib/b.py"]},
    }
    events, _ = parse_bytes(_line(call) + _line(result))
    files = {e.tool_use_id: e.files for e in events}
    assert files["t1"] == ["/repo/src/app.py", "/repo/tests/test_x.py"]
    assert files["t2"] == ["/repo/README.md"]
    assert files["t3"] == ["/repo/lib/a.py", "/repo/lib/b.py"]


def test_tool_call_without_result_is_kept_open_until_finish() -> None:
    call = {
        "type": "assistant",
        "uuid": "a1",
        "sessionId": "s1",
        "message": {
            "id": "m1",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 1"}}],
        },
    }
    parser = TranscriptParser("t.jsonl", session_hint="s1")
    raws = list(
        iter_lines(io.BytesIO(_line(_user("u0", "go")) + _line(call)), start_offset=0, start_line=1, max_line_bytes=BIG)
    )
    emitted = [e for raw in raws for e in parser.feed(raw)]
    assert [e.type for e in emitted] == [ev.USER_PROMPT]
    assert parser.safe_offset() == (raws[1].offset, 2)  # held back at the open tool call
    (dangling,) = parser.finish()
    assert dangling.type == ev.TOOL_USE and dangling.metadata["result"] == "missing"


def _canonical(events: list[ParsedEvent]) -> dict[str, tuple[object, ...]]:
    return {
        e.dedupe_key: (
            e.type,
            e.text,
            e.source.line_start,
            e.source.line_end,
            e.source.byte_start,
            e.source.byte_end,
            e.files,
            json.dumps(e.metadata, sort_keys=True),
        )
        for e in events
    }


def check_resuming_at_any_cut(data: bytes) -> None:
    """The importer's crash-safety rests on this: stop anywhere, resume at safe_offset(), and the union
    of what was emitted before and after equals one clean parse, event for event."""
    clean = _canonical(parse_bytes(data)[0])
    raws = list(iter_lines(io.BytesIO(data), start_offset=0, start_line=1, max_line_bytes=BIG))
    cuts = range(len(raws) + 1) if len(raws) <= 150 else random.Random(7).sample(range(len(raws) + 1), 60)
    for cut in cuts:
        parser = TranscriptParser("t.jsonl", session_hint="hint-session")
        before = [e for raw in raws[:cut] for e in parser.feed(raw)]
        offset, line_no = parser.safe_offset()
        after, _ = parse_bytes(data, start=(offset, line_no))
        # The store keeps the first version of a key (a result re-read without its call, when resuming
        # between the two, duplicates an event already stored and is dropped the same way).
        merged = _canonical(before)
        for key, value in _canonical(after).items():
            merged.setdefault(key, value)
        assert merged == clean, f"cut at line {cut}"


@pytest.mark.parametrize("name", ["compacted.jsonl", "resumed.jsonl", "cart.jsonl", "delegated.jsonl"])
def test_resuming_from_safe_offset_at_any_cut_reproduces_a_clean_parse(transcripts: Path, name: str) -> None:
    check_resuming_at_any_cut((transcripts / name).read_bytes())


@pytest.mark.covered_by(
    "tests/unit/test_transcript.py::test_resuming_from_safe_offset_at_any_cut_reproduces_a_clean_parse"
)
def test_resuming_at_any_cut_of_long_third_party_transcripts(third_party_transcripts: Path) -> None:
    """The same over 1,500 and 460 lines of older versions (marot/spotter 2.1.39, obra 1.0.117/120)."""
    for name in (
        "obra-episodic-memory__large-conversation.jsonl",
        "marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    ):
        check_resuming_at_any_cut((third_party_transcripts / name).read_bytes())


def test_a_bad_line_does_not_take_completed_events_with_it() -> None:
    answer = {
        "type": "assistant",
        "uuid": "a1",
        "sessionId": "s1",
        "message": {"id": "m1", "content": [{"type": "text", "text": "IMPORTANT ANSWER"}]},
    }
    call = {
        "type": "assistant",
        "uuid": "a2",
        "sessionId": "s1",
        "message": {
            "id": "m2",
            "content": [{"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": 5}}],
        },
    }
    result = {
        "type": "user",
        "uuid": "r1",
        "sessionId": "s1",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    }
    bad_user = {"type": "user", "uuid": "u9", "sessionId": "s1", "message": "oops"}
    events, parser = parse_bytes(_line(answer) + _line(bad_user) + _line(call) + _line(result))
    assert [e.type for e in events] == [ev.AGENT_RESPONSE, ev.TOOL_USE]
    assert events[0].text == "IMPORTANT ANSWER" and events[1].tool_name == "TodoWrite"
    assert [i.line_no for i in parser.issues] == [2]


def test_commands_a_person_typed_are_kept_and_wrappers_dropped() -> None:
    compact = (
        "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
        "<command-args>focus on the echo command</command-args>"
    )
    bare = (
        "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"
    )
    bang = "<bash-input>git status</bash-input>"
    out = "<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>"
    lines = b"".join(_line(_user(f"u{i}", text)) for i, text in enumerate([compact, bare, bang, out]))
    events, parser = parse_bytes(lines)
    assert [e.text for e in events] == ["/compact focus on the echo command", "! git status"]
    assert all(e.metadata.get("command") for e in events)
    assert parser.stats.dropped["machine-written prompt"] == 2


def test_reports_never_repeat_unrecognisable_type_names() -> None:
    lines = (
        _line({"type": "AKIAIOSFODNN7EXAMPLE"})
        + _line({"type": "brand-new-thing"})
        + _line({"type": {"pw": "hunter2-SECRET"}, "message": 1})
    )
    _, parser = parse_bytes(lines)
    assert dict(parser.stats.unknown_types) == {"(unrecognisable)": 1, "brand-new-thing": 1}
    assert [i.reason for i in parser.issues] == ["unexpected structure in a (unrecognisable) line"]
    assert "hunter2" not in repr(parser.issues) and "AKIA" not in repr(parser.stats)


def test_lines_of_older_versions_titles_progress_and_metadata_only_files() -> None:
    """What Claude Code 1.0.x-2.1.3x wrote and 2.1.330 no longer does, as hand-made lines in their shapes:
    a legacy ``summary`` title line (not compaction content), ``progress`` lines mirroring a subagent's
    work, ``file-history-snapshot`` bookkeeping, and a file that holds nothing else."""
    summary = {"type": "summary", "summary": "Fix the flaky upload test", "leafUuid": "u2"}
    progress = {
        "type": "progress", "uuid": "p1", "sessionId": "s1", "parentToolUseID": "t1",
        "data": {"type": "agent_progress", "agentId": "a1", "message": {"type": "user", "message": "look"}},
    }  # fmt: skip
    snapshot = {
        "type": "file-history-snapshot", "messageId": "m0", "isSnapshotUpdate": False,
        "snapshot": {"messageId": "m0", "trackedFileBackups": {}, "timestamp": "2025-10-01T00:00:00.000Z"},
    }  # fmt: skip
    task = {
        "type": "assistant", "uuid": "a1", "sessionId": "s1", "version": "1.0.117",
        "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "t1", "name": "Task",
             "input": {"description": "Find the test", "prompt": "find it", "subagent_type": "general-purpose"}},
        ]},
    }  # fmt: skip
    result = {
        "type": "user", "uuid": "r1", "sessionId": "s1", "version": "1.0.120",
        "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "found"}]},
        ]},
    }  # fmt: skip
    prompt = _user("u1", "why is the upload test flaky?")
    data = b"".join(_line(o) for o in (summary, snapshot, prompt, task, progress, result))
    events, parser = parse_bytes(data)
    assert [(e.type, e.tool_name) for e in events] == [(ev.USER_PROMPT, None), (ev.TOOL_USE, "Task")]
    assert "found" in events[1].text and parser.issues == []
    assert parser.titles == {"hint-session": "Fix the flaky upload test"}  # the summary line has no session id
    assert parser.stats.ignored_by_type["progress"] == 1 and parser.stats.ignored_by_type["file-history-snapshot"] == 1
    assert not by_type(events, ev.COMPACTION) and not by_type(events, ev.COMPACT_SUMMARY)

    only_metadata, quiet = parse_bytes(_line(snapshot) * 3 + _line(summary))
    assert only_metadata == [] and quiet.issues == [] and quiet.stats.unknown_types == {}
