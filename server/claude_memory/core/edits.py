"""What a successful file-editing tool call put into which file: its inserted text, hunk by hunk.

Read from the call's input and its ``toolUseResult`` (a transcript) or ``tool_response`` (a PostToolUse hook):

* ``structuredPatch`` when Claude Code reported one (``Edit``, ``MultiEdit``, ``Write`` over an existing file):
  each run of ``-`` and ``+`` lines is a hunk: the ``+`` lines inserted (with the line they start at in the file
  right after the call), the ``-`` lines removed;
* a ``Write`` that created the file (``type: create``): the whole content, from line 1;
* otherwise (older versions, ``NotebookEdit``, a hook without the result): the lines ``new_string`` adds to and
  removes from ``old_string`` (a line diff), or the whole ``new_source`` / ``content``, at an unknown line.

Context lines (unchanged text that ``new_string`` repeats) are never counted as inserted. Pure: no I/O.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

EDIT_TOOLS: Final = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
MAX_HUNK_CHARS: Final = 200_000  # a larger inserted text is kept up to here (blame still finds its start)


@dataclass(slots=True)
class EditHunk:
    """One change a call made to ``file`` (absolute path as the tool reported it): the lines it inserted there and
    the lines it removed there (either may be empty)."""

    file: str
    text: str  # the inserted lines, joined by newlines (no trailing newline)
    new_start: int | None  # 1-based line of its first line right after the call; None when not reported
    rel_path: str | None = None  # relative to the project root, set once the project is known
    removed: str = ""  # the lines it removed (blame: text an earlier call inserted and this one took out)


def edit_hunks(name: str, tool_input: Any, structured: Any, *, failed: bool) -> list[EditHunk]:
    """The changes a call made; none for other tools, failed calls and calls without a file."""
    if failed or name not in EDIT_TOOLS or not isinstance(tool_input, dict):
        return []
    result = structured if isinstance(structured, dict) else {}
    file = _first_str(result.get("filePath"), tool_input.get("file_path"), tool_input.get("notebook_path"))
    if not file:
        return []
    patch = result.get("structuredPatch")
    if isinstance(patch, list) and patch:
        hunks = list(_patch_hunks(file, patch))
    elif name == "Write":  # created, or written before Claude Code reported patches: all of it, from line 1
        content = _first_str(result.get("content"), tool_input.get("content"))
        unchanged = isinstance(patch, list) and result.get("type") == "update"  # an empty patch: same content
        hunks = [EditHunk(file, content.rstrip("\n"), 1)] if content and not unchanged else []
    elif name == "NotebookEdit":
        source = tool_input.get("new_source")
        deleting = tool_input.get("edit_mode") == "delete"
        hunks = [EditHunk(file, source.rstrip("\n"), None)] if isinstance(source, str) and not deleting else []
    else:
        edits = tool_input.get("edits") if name == "MultiEdit" else [tool_input]
        hunks = [
            EditHunk(file, added, None, removed=removed)
            for edit in (edits if isinstance(edits, list) else [])
            if isinstance(edit, dict)
            for removed, added in _changes(str(edit.get("old_string") or ""), str(edit.get("new_string") or ""))
        ]
    return [_capped(h) for h in hunks if h.text.strip() or h.removed.strip()]


def _first_str(*values: Any) -> str:
    return next((v for v in values if isinstance(v, str) and v), "")


def _patch_hunks(file: str, patch: list[Any]) -> Iterator[EditHunk]:
    """Each change of a unified-diff-like structured patch (a run of ``-`` and ``+`` lines between context lines),
    with the line its inserted text starts at in the new file."""
    for hunk in patch:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            continue
        line_no = hunk.get("newStart") if isinstance(hunk.get("newStart"), int) else None
        added: list[str] = []
        removed: list[str] = []
        start: int | None = None
        for line in [*hunk["lines"], " "]:  # (a context line at the end closes the last change)
            if not isinstance(line, str) or line.startswith("\\"):
                continue  # "\ No newline at end of file"
            if line.startswith("+"):
                if not added:
                    start = line_no
                added.append(line[1:])
                line_no = line_no + 1 if line_no is not None else None
            elif line.startswith("-"):
                removed.append(line[1:])
            else:
                if added or removed:
                    yield EditHunk(file, "\n".join(added), start if added else None, removed="\n".join(removed))
                    added, removed = [], []
                line_no = line_no + 1 if line_no is not None else None


def _changes(old: str, new: str) -> Iterator[tuple[str, str]]:
    """(removed, inserted) runs of lines between ``old`` and ``new`` (a line diff), each joined by newlines."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            yield "\n".join(old_lines[i1:i2]), "\n".join(new_lines[j1:j2])


def _capped(hunk: EditHunk) -> EditHunk:
    if len(hunk.text) > MAX_HUNK_CHARS:
        hunk.text = hunk.text[:MAX_HUNK_CHARS].rsplit("\n", 1)[0]
    if len(hunk.removed) > MAX_HUNK_CHARS:
        hunk.removed = hunk.removed[:MAX_HUNK_CHARS].rsplit("\n", 1)[0]
    return hunk
