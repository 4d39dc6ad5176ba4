"""core/blame.py, core/why.py and core/outline.py: lines attributed to the calls that wrote them, through a
person's changes; the words that tell it."""

from __future__ import annotations

import pytest

from claude_memory.core.blame import Attribution, Record, blame, file_lines
from claude_memory.core.outline import definitions
from claude_memory.core.why import before_edit_note, line_hover, touched_lines, why_markdown
from support import own_fixtures as fx

CART = fx.CART_V1.rstrip("\n")
DISCOUNT = """
    def apply_discount(self, percent):
        return self.total() * (100 - percent) / 100"""
WRITE, EDIT = 1, 2
RECORDS = [Record(EDIT, [(DISCOUNT, 10, "")]), Record(WRITE, [(CART, 1, "")])]  # newest first


def owners(text: str, records: list[Record] = RECORDS) -> list[int | None]:
    """The record of each line (blank lines: None, they are never counted)."""
    out: list[int | None] = []
    for a in blame(text, records):
        out += [a.record] * (a.end - a.start + 1)
    return out


def test_as_written_every_line_is_the_call_that_wrote_it() -> None:
    text = CART + "\n" + DISCOUNT + "\n"
    ranges = blame(text, RECORDS)
    assert ranges == [Attribution(1, 9, WRITE, 0, 1.0, "exact"), Attribution(10, 12, EDIT, 0, 1.0, "exact")]
    assert sum(a.end - a.start + 1 for a in ranges) == len(file_lines(text)) == 12


def test_attribution_survives_reindenting_moves_renames_and_inserted_lines() -> None:
    text = """# a header a person wrote
class Cart:
  def __init__(self):
    self.items=[]

    # checked by hand on 2026-03-12

  def apply_discount(self, percent):
    return self.total() * (100 - percent) / 100

  def add(self, item_name, price):
    self.items.append((item_name, price))

  def total(self):
    return sum(price for _, price in self.items)
"""
    got = owners(text)
    lines = text.splitlines()
    mine = {lines[i].strip(): got[i] for i in range(len(lines)) if lines[i].strip()}
    assert mine["# a header a person wrote"] is None and mine["# checked by hand on 2026-03-12"] is None
    assert mine["def apply_discount(self, percent):"] == EDIT  # moved above add()
    assert mine["return self.total() * (100 - percent) / 100"] == EDIT
    assert mine["self.items=[]"] == WRITE  # re-spaced and re-indented
    assert mine["def add(self, item_name, price):"] == WRITE  # renamed: a fuzzy match
    assert mine["self.items.append((item_name, price))"] == WRITE
    fuzzy = [a for a in blame(text, RECORDS) if a.method == "fuzzy"]
    assert fuzzy and all(0.6 <= a.confidence < 0.95 for a in fuzzy)


def test_a_wrapped_line_is_still_found() -> None:
    text = CART.replace(
        "        return sum(price for _, price in self.items)",
        "        return sum(\n            price for _, price in self.items\n        )",
    )
    got = owners(text, [Record(WRITE, [(CART, 1, "")])])
    assert got[-3:] == [WRITE, WRITE, WRITE]


def test_lines_claude_never_wrote_and_lone_braces_are_not_claimed() -> None:
    records = [Record(7, [("}\n\nreturn x", None, "")])]
    text = "function f() {\n  let y = 2\n}\n"
    assert owners(text, records) == [None, None, None]
    assert blame("", records) == [Attribution(1, 1, None, None, 0.0, None)]


def test_the_newest_call_owns_a_line_and_a_line_a_later_call_removed_is_gone() -> None:
    first = Record(1, [("total = compute_total(cart_items)\nprint(total)", 1, "")])
    # a later call replaced the first line: it owns the new one, and the old text (still quoted elsewhere by a
    # person, say) is not the first call's any more
    later = Record(2, [("total = compute_total(cart_items, tax=True)", 1, "total = compute_total(cart_items)")])
    text = "total = compute_total(cart_items, tax=True)\nprint(total)\n# was: \ntotal = compute_total(cart_items)\n"
    assert owners(text, [later, first]) == [2, 1, None, None]


def test_identical_text_from_two_calls_goes_to_each_once() -> None:
    block = "def helper_function_one(a, b):\n    return a + b"
    text = block + "\n\n" + block + "\n"
    got = owners(text, [Record(2, [(block, 4, "")]), Record(1, [(block, 1, "")])])
    assert sorted(x for x in got if x) == [1, 1, 2, 2]


BLAME = {
    "path": "/p/src/shop/cart.py",
    "lines": 12,
    "claude_lines": 11,
    "edit_records": 2,
    "sessions": 2,
    "ranges": [
        {"start": 1, "end": 9, "edit": 1, "confidence": 1.0, "method": "exact"},
        {"start": 10, "end": 10, "edit": None, "confidence": 0.0, "method": None},
        {"start": 11, "end": 12, "edit": 2, "confidence": 0.88, "method": "fuzzy"},
    ],
    "edits": [
        {"id": 1, "citation": "mem:AAAAAA", "tool": "Write", "session_id": "s-old-0001", "agent_id": None,
         "timestamp": "2026-03-11T09:00:01Z", "model": "claude-sonnet-4-5",
         "prompt": {"citation": "mem:PPPPPP", "text": "Create the cart module", "timestamp": None},
         "answer": {"citation": "mem:RRRRRR", "text": "Creating src/shop/cart.py.", "timestamp": None}},
        {"id": 2, "citation": "mem:BBBBBB", "tool": "Edit", "session_id": "s-new-0002", "agent_id": None,
         "timestamp": "2026-03-12T10:00:00Z", "model": None, "prompt": None, "answer": None},
    ],
}  # fmt: skip


def test_why_markdown_tells_each_range_and_labels_fuzzy_matches() -> None:
    text = why_markdown(BLAME, 8, 12)
    assert text.startswith("### cart.py, lines 8-12")
    assert (
        "Lines 8-9 (exact): Write [mem:AAAAAA] on 2026-03-11" in text
        and "“Create the cart module” [mem:PPPPPP]" in text
    )
    assert "Line 10: not written by Claude." in text
    assert "Lines 11-12 (fuzzy match, 88%: changed since)" in text
    assert why_markdown({**BLAME, "ranges": [BLAME["ranges"][1]]}, 10, 10).endswith(
        "as far as the remembered edits show).\n"
    )
    assert "No Claude Code edit" in why_markdown({**BLAME, "edit_records": 0, "ranges": [BLAME["ranges"][1]]}, 10, 10)


def test_line_hover_only_on_claude_lines() -> None:
    hover = line_hover(BLAME, 3)
    assert hover is not None and hover.startswith("**Claude wrote lines 1-9** (exact): Write [mem:AAAAAA]")
    assert "(claude-sonnet-4-5)" in hover and "[mem:RRRRRR]" in hover
    assert line_hover(BLAME, 10) is None and line_hover(BLAME, 99) is None


def test_touched_lines_of_an_edit_and_a_write() -> None:
    text = "a\nb\nc\nd\n"
    assert touched_lines(text, "Edit", {"old_string": "b\nc"}) == [(2, 3)]
    assert touched_lines(text, "Edit", {"old_string": "zzz"}) == []
    assert touched_lines(text, "MultiEdit", {"edits": [{"old_string": "a"}, {"old_string": "d"}]}) == [(1, 1), (4, 4)]
    assert touched_lines(text, "Write", {"content": "x"}) == [(1, 4)]


@pytest.mark.parametrize(
    ("spans", "session", "expected"),
    [
        (
            [(2, 3)],
            "s-current",
            "Lines 2-3: Write [mem:AAAAAA] on 2026-03-11 for “Create the cart module” [mem:PPPPPP].",
        ),
        ([(2, 3)], "s-old-0001", ""),  # the session asking wrote them: Claude has that in context already
        ([(11, 12)], "s-current", ""),  # a fuzzy match below the confidence a note needs
        ([(10, 10)], "s-current", ""),  # lines Claude did not write
    ],
)
def test_the_pre_edit_note(spans: list[tuple[int, int]], session: str, expected: str) -> None:
    note = before_edit_note(BLAME, spans, session)
    assert (expected in note and note.startswith("Memory of cart.py")) if expected else note == ""
    assert len(note) <= 800


def test_outline_finds_definitions_and_their_extent() -> None:
    lines = (CART + "\n" + DISCOUNT).split("\n")
    found = [(d.name, d.start, d.end) for d in definitions(lines)]
    assert found == [("Cart", 1, 12), ("__init__", 2, 3), ("add", 5, 6), ("total", 8, 9), ("apply_discount", 11, 12)]
    ts = ["export async function load(a: string) {", "  return a", "}", "const f = (x) => {", "  return x", "};"]
    assert [(d.name, d.start, d.end) for d in definitions(ts)] == [("load", 1, 3), ("f", 4, 6)]
