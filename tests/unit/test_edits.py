"""core/edits.py: what an editing call inserted and removed, from Claude Code's own results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_memory.core.edits import MAX_HUNK_CHARS, EditHunk, edit_hunks

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "cart.jsonl"


def fixture_calls() -> list[tuple[str, dict[str, Any], dict[str, Any], bool]]:
    """(name, input, toolUseResult, failed) of every call in the project's cart transcript."""
    inputs: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for raw in FIXTURE.read_text(encoding="utf-8").splitlines():
        obj = json.loads(raw)
        content = (obj.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                inputs[block["id"]] = (block["name"], block["input"])
            elif block.get("type") == "tool_result" and block["tool_use_id"] in inputs:
                name, args = inputs[block["tool_use_id"]]
                out.append((name, args, obj.get("toolUseResult"), bool(block.get("is_error"))))
    return out


def test_the_fixture_write_edit_and_refused_edit() -> None:
    calls = [c for c in fixture_calls() if c[0] in ("Write", "Edit")]
    found = [edit_hunks(name, args, result, failed=failed) for name, args, result, failed in calls]
    write = next(h for (name, *_), h in zip(calls, found, strict=True) if name == "Write" and h)
    assert write[0].new_start == 1 and write[0].text.startswith("class Cart:") and not write[0].text.endswith("\n")
    # the Edit that added apply_discount: only its "+" lines (its new_string repeats total() as context)
    (added,) = next(h for (name, *_), h in zip(calls, found, strict=True) if name == "Edit" and h)
    assert added.text == "\n    def apply_discount(self, percent):\n        return self.total() * (100 - percent) / 100"
    assert added.new_start == 10 and added.removed == ""
    assert "return sum(price" not in added.text
    # the Edits Claude Code refused (e.g. string not found) inserted nothing
    refused = [h for (name, _a, _r, failed), h in zip(calls, found, strict=True) if name == "Edit" and failed]
    assert refused and all(h == [] for h in refused)


def test_a_patch_change_keeps_removed_and_inserted_lines_and_the_new_line_number() -> None:
    lines = [" a", "-old one", "-old two", "+new one", " b", "+added", "\\ No newline at end of file"]
    patch = [{"oldStart": 3, "oldLines": 4, "newStart": 3, "newLines": 4, "lines": lines}]
    hunks = edit_hunks(
        "Edit", {"file_path": "/p/f.py"}, {"filePath": "/p/f.py", "structuredPatch": patch}, failed=False
    )
    assert hunks == [
        EditHunk("/p/f.py", "new one", 4, removed="old one\nold two"),
        EditHunk("/p/f.py", "added", 6, removed=""),
    ]


def test_without_a_patch_edits_are_diffed_and_writes_are_whole() -> None:
    edit = {"file_path": "/p/f.py", "old_string": "x = 1\ny = 2\nz = 3", "new_string": "x = 1\ny = 20\nz = 3\nw = 4"}
    assert edit_hunks("Edit", edit, None, failed=False) == [
        EditHunk("/p/f.py", "y = 20", None, removed="y = 2"),
        EditHunk("/p/f.py", "w = 4", None, removed=""),
    ]
    multi = {
        "file_path": "/p/f.py",
        "edits": [{"old_string": "a", "new_string": "a\nb"}, {"old_string": "c", "new_string": "d"}],
    }
    assert [h.text for h in edit_hunks("MultiEdit", multi, None, failed=False)] == ["b", "d"]
    write = {"file_path": "/p/new.py", "content": "print(1)\n"}
    assert edit_hunks("Write", write, None, failed=False) == [EditHunk("/p/new.py", "print(1)", 1)]
    # a Write that changed nothing (an empty patch on an update) inserted nothing
    same = {"type": "update", "filePath": "/p/new.py", "content": "print(1)\n", "structuredPatch": []}
    assert edit_hunks("Write", write, same, failed=False) == []
    cell = {"notebook_path": "/p/n.ipynb", "new_source": "df.head()\n", "cell_id": "c1"}
    assert edit_hunks("NotebookEdit", cell, None, failed=False) == [EditHunk("/p/n.ipynb", "df.head()", None)]
    assert edit_hunks("NotebookEdit", {**cell, "edit_mode": "delete"}, None, failed=False) == []


def test_other_tools_failures_and_junk_give_nothing() -> None:
    assert edit_hunks("Bash", {"command": "ls"}, None, failed=False) == []
    assert edit_hunks("Write", {"file_path": "/p/f", "content": "x"}, None, failed=True) == []
    assert edit_hunks("Edit", "not a dict", None, failed=False) == []
    assert edit_hunks("Edit", {"old_string": "a", "new_string": "b"}, None, failed=False) == []  # no file
    junk = {"filePath": "/p/f", "structuredPatch": [None, {"lines": "nope"}, {"lines": [1, "+ok"]}]}
    assert [h.text for h in edit_hunks("Edit", {"file_path": "/p/f"}, junk, failed=False)] == ["ok"]


def test_a_huge_insert_is_capped_at_a_line_boundary() -> None:
    content = "\n".join(f"line {i:07d}" for i in range(30_000))
    (hunk,) = edit_hunks("Write", {"file_path": "/p/big", "content": content}, None, failed=False)
    assert len(hunk.text) <= MAX_HUNK_CHARS and hunk.text.endswith(hunk.text.split("\n")[-1])
    assert all(line.startswith("line ") and len(line) == 12 for line in hunk.text.split("\n"))
