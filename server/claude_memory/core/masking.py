"""Mask credentials: run the secret rules (``claude_memory.core.secrets``) and custom patterns over a
text and replace what they match by the secret marker (SEED_SPEC §7.2).

Overlapping or touching spans are masked as one; each masked span counts once.  A match whose value
is (almost) only markers is already masked and left alone, which keeps the filter idempotent.
Pure: no I/O, no module-level mutable state; composed with private-section removal by
``claude_memory.core.privacy``.

Speed (Python 3.11, 2-core dev container shared with other jobs, ``python -m timeit``, e.g.
``PYTHONPATH=server .venv/bin/python -m timeit -s "from claude_memory.core.privacy import
PrivacyFilter as F; f=F(); t=('The quick brown fox jumps over the lazy dog, then we refactor
the importer. '*8)[:500]" "f.filter(t)"``), for the whole privacy filter:
    * 500-char prose, nothing to mask ............................ ~11 µs per text
    * 500-char Python snippet, nothing to mask (3 ``api_key=None``) ~26 µs per text
    * ~500-char text with 3 credentials (token, URL pw, env var) .. ~34 µs per text
    * 500-char text with one private section ..................... ~18 µs per text
    * 100 KB of Python source: ~9 ms; 1 MB of prose: ~26 ms.
    * for comparison, detect-secrets' own ``scan_line`` (default plugins, inside
      ``default_settings()``) on the same 500-char prose: ~2,100 µs per text (~200× slower;
      ~4,800 µs on a text with credentials), so only its pattern lists are reused.
    How: every rule starts with a literal (CPython's ``re`` then uses a fast substring scan;
    a leading look-behind, IGNORECASE or a many-branch alternation costs 5-250 µs per text);
    rules run only when one of their anchor substrings is present; keyword rules run on the
    lower-cased text; token rules run only on the runs of >= 20 token characters.  Importing
    the detect-secrets package costs ~0.1-0.2 s once per process.

Custom patterns are trusted (no protection against catastrophic backtracking).
"""

from __future__ import annotations

import re

from claude_memory.core.secrets import KEY_BLOCK_RULES, RULES, VALUE_GROUPS, WORD_CHARS, Rule

__all__ = ["mask_custom", "mask_secrets", "mask_spans"]

_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:]{20,}")


def _anchor_table(token: bool, needs_sep: bool = False) -> tuple[tuple[str, frozenset[int]], ...]:
    """anchor → indices (in ``RULES``) of the rules it enables.  Keyword anchors are reduced to the
    shortest anchor they contain, so e.g. "private key", "private-" and "private" cost one test."""
    table: dict[str, set[int]] = {}
    for index, rule in enumerate(RULES):
        if rule.token == token and rule.needs_sep == needs_sep:
            for anchor in rule.anchors:
                table.setdefault(anchor if token else anchor.lower(), set()).add(index)
    if not token:
        for anchor in sorted(table, key=len):
            for other in list(table):
                if other != anchor and anchor in other and anchor in table:
                    table[anchor] |= table.pop(other)
    return tuple((anchor, frozenset(indices)) for anchor, indices in table.items())


_KEYWORD_ANCHORS = _anchor_table(token=False)
_SEPARATED_ANCHORS = _anchor_table(token=False, needs_sep=True)
_TOKEN_ANCHORS = _anchor_table(token=True)


def mask_secrets(text: str, markers: tuple[str, ...], marker: str, preserve: bool) -> tuple[str, int]:
    """``text`` with every credential the rules find replaced by ``marker`` (plus the newlines it
    held when ``preserve``), and the number of spans masked.  A value consisting (almost) only of
    ``markers`` is already masked."""
    masked = 0
    low = text.lower()
    # private-key blocks first: their body must go as a whole, before any token rule
    for rule in KEY_BLOCK_RULES:
        if any(anchor in low for anchor in rule.anchors):
            found = _match_rule(rule, text, low, 0, markers)
            if found:
                text, count = mask_spans(text, found, marker, preserve)
                masked += count
                low = text.lower()
    # token rules: only inside runs of >= 20 token characters
    runs = [(m.start(), m.group(0)) for m in _TOKEN_RUN.finditer(text)]
    if runs:
        joined = "\0".join(chunk for _, chunk in runs)
        enabled = {i for anchor, indices in _TOKEN_ANCHORS if anchor in joined for i in indices}
        spans: list[tuple[int, int]] = []
        for index in sorted(enabled):
            for start, chunk in runs:
                spans.extend(_match_rule(RULES[index], chunk, chunk, start, markers))
        if spans:
            text, count = mask_spans(text, spans, marker, preserve)
            masked += count
            low = ""
    # keyword rules: on the whole (lower-cased) text, one rule at a time
    low = low or text.lower()
    active: set[int] = set()
    for anchor, indices in _KEYWORD_ANCHORS:
        if anchor in low:
            active |= indices
    if "=" in text or ":" in text:
        for anchor, indices in _SEPARATED_ANCHORS:
            if anchor in low:
                active |= indices
    for index in sorted(active):
        low = low or text.lower()
        found = _match_rule(RULES[index], text, low, 0, markers)
        if found:
            text, count = mask_spans(text, found, marker, preserve)
            masked += count
            low = ""
    return text, masked


def mask_custom(
    text: str, patterns: tuple[re.Pattern[str], ...], protected: tuple[str, ...], marker: str, preserve: bool
) -> tuple[str, int]:
    """``text`` with the non-empty matches of each custom pattern in turn masked, except matches that
    overlap one of the ``protected`` strings (the markers); and the number of spans masked."""
    masked = 0
    for pattern in patterns:
        taken = _occurrences(text, protected)
        spans = [
            m.span()
            for m in pattern.finditer(text)
            if m.end() > m.start() and not any(s < m.end() and m.start() < e for s, e in taken)
        ]
        if spans:
            text, count = mask_spans(text, spans, marker, preserve)
            masked += count
    return text, masked


def mask_spans(text: str, spans: list[tuple[int, int]], marker: str, preserve: bool) -> tuple[str, int]:
    """Replace the union of ``spans`` (not empty; sorted in place) by ``marker``, one per connected
    span; returns the text and the number of connected spans."""
    spans.sort()
    out: list[str] = []
    last = 0
    cur_start, cur_end = spans[0]
    merged: list[tuple[int, int]] = []
    for start, end in spans[1:]:
        if start <= cur_end:
            cur_end = max(cur_end, end)
        else:
            merged.append((cur_start, cur_end))
            cur_start, cur_end = start, end
    merged.append((cur_start, cur_end))
    for start, end in merged:
        out.append(text[last:start])
        out.append(marker + ("\n" * text.count("\n", start, end) if preserve else ""))
        last = end
    out.append(text[last:])
    return "".join(out), len(merged)


def _match_rule(rule: Rule, text: str, low: str, offset: int, markers: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans (shifted by ``offset``) of ``text`` that ``rule`` masks; a value consisting
    (almost) only of ``markers`` is already masked."""
    pattern = rule.pattern
    haystack = text
    if rule.lower:
        if len(low) == len(text):
            haystack = low
        elif rule.fallback is not None:
            pattern = rule.fallback
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := pattern.search(haystack, pos)) is not None:
        span = _masked_span(rule, m, haystack, text, markers)
        if span is None:
            pos = m.start() + 1  # a rejected match must not hide a later one inside it
        else:
            spans.append((span[0] + offset, span[1] + offset))
            pos = max(m.end(), m.start() + 1)
    return spans


def _masked_span(
    rule: Rule, m: re.Match[str], haystack: str, text: str, markers: tuple[str, ...]
) -> tuple[int, int] | None:
    """The span of ``text`` that match ``m`` of ``rule`` masks, or None when it is rejected."""
    if rule.left_boundary and m.start() and haystack[m.start() - 1] in WORD_CHARS:
        return None
    if rule.group == 0:
        start, end = m.span()
    elif rule.group == "value":
        start = end = -1
        for name in VALUE_GROUPS:
            start, end = m.span(name)
            if start >= 0:
                break
        if start < 0:
            return None
    else:
        if m.group(rule.group) is None:
            return None
        start, end = m.span(rule.group)
    value = text[start:end]
    if not value:
        return None
    if rule.group != 0 and markers:
        core = value
        for mk in markers:
            core = core.replace(mk, "")
        if len(core.strip()) < 4:
            return None  # (almost) only markers: already masked
    if rule.check is not None and not rule.check(m, value):
        return None
    return start, end


def _occurrences(text: str, needles: tuple[str, ...]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for needle in needles:
        pos = text.find(needle)
        while pos != -1:
            spans.append((pos, pos + len(needle)))
            pos = text.find(needle, pos + len(needle))
    return spans
