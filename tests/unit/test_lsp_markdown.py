"""The language server's pure parts: finding citations and words at a column, and what hovers and lenses say."""

from __future__ import annotations

import pytest

from claude_memory.lsp import markdown as md


@pytest.mark.parametrize(
    ("line", "column", "expected"),
    [
        ("See [mem:AbC123] here", 4, ("mem:AbC123", 4, 16)),
        ("See [mem:AbC123] here", 15, ("mem:AbC123", 4, 16)),
        ("See [mem:AbC123] here", 16, ("mem:AbC123", 4, 16)),  # just after it
        ("# as in mem:AbC123.", 10, ("mem:AbC123", 8, 18)),
        ("See [mem:AbC123] here", 18, None),
        ("xmem:AbC123 and mem:AbC1234", 2, None),  # glued to a word; seven characters
        ("two: mem:aaaaaa mem:bbbbbb", 20, ("mem:bbbbbb", 16, 26)),
    ],
)
def test_citation_at(line: str, column: int, expected: tuple[str, int, int] | None) -> None:
    assert md.citation_at(line, column) == expected


def test_word_at_and_symbols() -> None:
    line = "  def handle_event(name, $el) do"
    assert md.word_at(line, 8) == ("handle_event", 6, 18)
    assert md.word_at(line, 18) == ("handle_event", 6, 18)
    assert md.word_at(line, 25) == ("$el", 25, 28)
    assert md.word_at(line, 0) is None
    assert md.word_at("x = 1", 4) is None  # a number is no identifier
    assert md.symbol_of("handle_event") == "handle_event"
    assert md.symbol_of("def") is None and md.symbol_of("Return") is None and md.symbol_of("ab") is None


def test_fence_escape_and_lens_title() -> None:
    assert md.fence("a ``` b") == "````text\na ``` b\n````"
    assert md.fence("plain") == "```text\nplain\n```"
    assert md.escape("a_b *c* [d](e) `f`") == r"a\_b \*c\* \[d\]\(e\) \`f\`"
    assert md.lens_title(1, "2026-02-12T21:00:30Z") == "1 memory · last touched 2026-02-12"
    assert md.lens_title(24, "2026-02-12T21:00:30Z") == "24 memories · last touched 2026-02-12"
    assert md.lens_title(3, None) == "3 memories"


def event(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "citation": "mem:AAAAAA",
        "type": "tool_use",
        "tool_name": "Edit",
        "timestamp": "2026-02-12T21:00:30.169000Z",
        "files": ["/p/lib/a.ex"],
        "text": "Edit: /p/lib/a.ex\nchanged `x`",
    }
    return {**base, **kw}


def test_code_hover_newest_first_as_given_with_what_each_did() -> None:
    history = {
        "file_events": 2,
        "events": [
            event(),
            event(
                citation="mem:BBBBBB", type="agent_response", tool_name=None, files=[], text="I renamed run_it. Done."
            ),
            event(citation="mem:CCCCCC", tool_name="Read"),
        ],
    }
    assert md.code_hover("/p/lib/a.ex", "run_it", history, 2) == "\n".join(
        [
            "**Memory of `a.ex`** · 2 events touched this file",
            "",
            r"- 2026-02-12 21:00 · edited · `[mem:AAAAAA]` Edit: /p/lib/a.ex",
            r"- 2026-02-12 21:00 · said (mentions `run_it`) · `[mem:BBBBBB]` I renamed run\_it.",
        ]
    )
    assert md.code_hover("/p/lib/a.ex", None, {"file_events": 0, "events": []}, 5) is None
    assert md.verb(event(tool_name="Bash")) == "ran" and md.verb(event(tool_name="Task")) == "used Task"
    assert md.verb(event(type="user_prompt", tool_name=None)) == "asked"


def test_citation_hover_clips_and_points_to_the_source() -> None:
    details = {
        **event(text="word " * 50),
        "session_id": "s-1",
        "project": "/p",
        "source": {"path": "/t/s-1.jsonl", "line_start": 3, "line_end": 4},
    }
    text = md.citation_hover(details, 80)
    assert text.startswith("**`[mem:AAAAAA]`** · tool_use (Edit) · 2026-02-12 21:00 UTC · session `s-1`\n\n```text\n")
    assert "\n```\n\nSource: `/t/s-1.jsonl:3-4` · project `/p`\n\n250 characters in full" in text
    used = md.citation_hover({**details, "citation_uses": 7, "sessions_used": 3, "level": 2}, 80)
    assert "project `/p`\nLevel L2: used in 3 sessions\n" in used
    assert "Level" not in md.citation_hover({**details, "citation_uses": 7, "level": 0}, 80)
    assert md.missing_citation("mem:zzzzzz") == "No memory `[mem:zzzzzz]`: forgotten, or never stored here."
