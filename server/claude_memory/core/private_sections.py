"""Remove the sections a person marked private (SEED_SPEC §7.1); the first step of the privacy filter.

Formats ``xml`` (``<private>…</private>``), ``bracket`` (``[private]…[/private]``) and ``comment``
(``<!-- private -->…<!-- /private -->``), case-insensitive, spanning newlines, strict tag spelling.
Fenced code blocks and inline code spans are swapped for placeholders built from a Private-Use-Area
character absent from the text (so they cannot collide) and restored afterwards.  Tags are paired
with a stack: a nested section is removed as a whole (the outermost pair wins) and an unclosed
opening tag never swallows a later closed section.  Unmatched tags (opening or closing) are left in
place and flagged.  Removal repeats until nothing changes (removing a section can join fragments
into a new tag).  A removed section is replaced by a marker token (empty when the section was
blank), followed by its newlines when the line count is preserved.

Pure: no I/O, no module-level mutable state.  Composed with the secret rules by
``claude_memory.core.privacy``.

Known limitations
    * Only ```` ``` ```` fences and single-line inline spans protect tags (not ``~~~`` fences).
    * With the ``bracket`` format and the default marker, re-filtering an output re-reads
      ``[PRIVATE]`` as an opening tag (flagged; text unchanged unless a stray ``[/private]``
      follows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["FORMATS", "PrivatePass", "remove_private_sections", "sentinel"]

FORMATS = ("xml", "bracket", "comment")

# Matched against the lower-cased text (literal first character: fast scan); group 1 is "/" for
# a closing tag.  The IGNORECASE twins are used when str.lower() changes the text's length.
_TAG_SOURCES = {
    "xml": r"<(/?)private>",
    "bracket": r"\[(/?)private\]",
    "comment": r"<!--\s*(/?)private\s*-->",
}
_TAGS = {name: re.compile(src) for name, src in _TAG_SOURCES.items()}
_TAGS_CI = {name: re.compile(src, re.IGNORECASE) for name, src in _TAG_SOURCES.items()}
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_PRIVATE_USE = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))
_MAX_PRIVATE_PASSES = 8


def sentinel(text: str) -> str:
    """A private-use character that does not occur in ``text`` (normally U+E000)."""
    for first, last in _PRIVATE_USE:
        for cp in range(first, last + 1):
            if chr(cp) not in text:
                return chr(cp)
    # only a text holding all 137,468 private-use characters gets here
    raise ValueError("text contains every private-use character; cannot build a placeholder")


@dataclass
class PrivatePass:
    """The text after removal, how many sections went, and whether an unmatched tag remains."""

    text: str
    sections: int
    unmatched: bool


def remove_private_sections(text: str, formats: tuple[str, ...], preserve: bool, marker_token: str) -> PrivatePass:
    """Remove the private sections of ``formats`` (in that order) from ``text`` until none is left.

    Each removed section becomes ``marker_token`` (nothing for a blank section), plus its newlines
    when ``preserve``.  ``unmatched`` is that of the last pass.  A text without "private" (in any
    case) has no tag: callers skip the call for it, as ``PrivacyFilter`` does."""
    out = text
    sections = 0
    unmatched = False
    for _ in range(_MAX_PRIVATE_PASSES):
        result = _remove_sections_once(out, formats, preserve, marker_token)
        out = result.text
        unmatched = result.unmatched
        sections += result.sections
        if not result.sections or "private" not in out.lower():
            break
    return PrivatePass(out, sections, unmatched)


def _remove_sections_once(text: str, formats: Iterable[str], preserve: bool, marker_token: str) -> PrivatePass:
    placeholder = sentinel(text + marker_token)
    codes: list[str] = []

    def _protect(m: re.Match[str]) -> str:
        # the placeholder keeps the code's newlines so that preserve_line_count can count them
        code = m.group(0)
        codes.append(code)
        return f"{placeholder}{len(codes) - 1}{chr(10) * code.count(chr(10))}{placeholder}"

    work = _CODE.sub(_protect, text) if "`" in text else text
    sections = 0
    unmatched = False
    for fmt in formats:
        low = work.lower()
        same = len(low) == len(work)
        pattern = _TAGS[fmt] if same else _TAGS_CI[fmt]
        stack: list[re.Match[str]] = []
        pairs: list[tuple[int, int, int, int]] = []
        for m in pattern.finditer(low if same else work):
            if not m.group(1):
                stack.append(m)
            elif stack:
                opening = stack.pop()
                pairs.append((opening.start(), opening.end(), m.start(), m.end()))
            else:
                unmatched = True  # stray closing tag
        if stack:
            unmatched = True
        if not pairs:
            continue
        pairs.sort()
        out: list[str] = []
        last = 0
        for start, inner_start, inner_end, end in pairs:
            if start < last:  # nested inside an outer section already removed
                continue
            out.append(work[last:start])
            replacement = marker_token if work[inner_start:inner_end].strip() else ""
            if preserve:
                replacement += "\n" * work.count("\n", start, end)
            out.append(replacement)
            sections += 1
            last = end
        out.append(work[last:])
        work = "".join(out)
    if codes:
        parts = work.split(placeholder)
        # odd parts are placeholder indices (a placeholder is only ever removed whole)
        for i in range(1, len(parts), 2):
            parts[i] = codes[int(parts[i].rstrip("\n"))]
        work = "".join(parts)
    return PrivatePass(work, sections, unmatched)
