"""Mask credentials: run the secret rules (``claude_memory.core.secrets``) and custom patterns over a
text and replace what they match by the secret marker (SEED_SPEC §7.2).

Overlapping or touching spans are masked as one; each masked span counts once, under the ``kind``
of the first rule (in ``RULES`` order) that matched in it.  A match whose value is (almost) only
markers is already masked and left alone, which keeps the filter idempotent.  Pure: no I/O, no
module-level mutable state; composed with private-section removal by ``claude_memory.core.privacy``.

How it stays fast with ~180 rules: CPython's ``re`` has no multi-pattern search, so no text is
scanned once per rule.  Keyword rules start with a literal and run only when one of their 18
anchor substrings occurs in the lower-cased text.  Token rules run only on the runs of >= 20 token
characters (found on a byte copy of the text: one ``translate`` and a substring test show that
most prose has none), joined into one string that each enabled rule searches once; a token rule
is enabled when a word of the runs starts with its anchor, looked up by the word's first two
characters in a table, so the cost grows with the words of the runs, not with the number of
provider formats.  A leading look-behind, IGNORECASE, a many-branch alternation or a Python check
called on every match costs 5-250 µs per text: rules avoid them.  A candidate that a check rejects
is searched again from its next character, so patterns bound their lengths (a 100 KB run of
``sk-sk-…`` took ~90 s with the old unbounded ``sk-`` pattern, ~0.6 s now).  Importing the
detect-secrets package costs ~0.1-0.2 s once per process.

Speed of the whole privacy filter, ``PrivacyFilter().filter``, per text (``PYTHONPATH=server
.venv/bin/python bench/privacy_filter.py``: 2,000 texts of ~500 characters, each filtered 5 times,
median kept; Python 3.11 on the 2-core dev container, shared with other jobs, so ±10 % between
runs; "before" is the previous rule table, ~40 rules, run in turns with this one on the same texts):

    ====================================  ======================  ======================
    texts (333 each)                      before p50 / p95 (µs)   after p50 / p95 (µs)
    ====================================  ======================  ======================
    prose, nothing to mask                35 / 36                 31-32 / 34
    Python source of this repository      45-50 / 65-69           42-45 / 66-70
    tool output: hashes, UUIDs, digests   60-67 / 71-72           53-57 / 64-66
    package-lock.json lines               66-72 / 76-80           65-68 / 82-86
    prose or tool output, 1-3 secrets     100-102 / 169-176       101-110 / 161-179
    windows of real transcripts           39-41 / 66-67           32-36 / 66-71
    all 2,000                             56-60 / 124-129         51-55 / 127-135
    ====================================  ======================  ======================

The secrets row masks 561 spans after, 516 before (Hugging Face, Discord, Azure, … formats).  Larger
texts, same container: 100 KB of Python source ~8.5 ms (before ~9.9 ms); 1 MB of prose ~23 ms
(before ~41 ms).  For comparison (measured earlier, same container), detect-secrets' own
``scan_line`` (default plugins, inside ``default_settings()``) took ~2,100 µs on a 500-character
prose text (~4,800 µs with credentials), which is why only its pattern lists are reused.

Custom patterns are trusted (no protection against catastrophic backtracking).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from operator import itemgetter
from types import MappingProxyType

from claude_memory.core.secrets import KEY_BLOCK_RULES, RULES, VALUE_GROUPS, WORD_CHARS, Rule

__all__ = ["RUN_CHARS", "mask_custom", "mask_secrets", "mask_spans"]

Span = tuple[int, int, str]  # start, end, kind

RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.:%~")
# A text is scanned for runs as bytes, one byte per character ("?" for non-ASCII ones), with every
# byte that is not a run character blanked; the runs are then the words of at least 20 bytes.
_RUN_BYTES = bytes(c if chr(c) in RUN_CHARS else 0x20 for c in range(256))
_RUN_FLAGS = bytes(0x61 if chr(c) in RUN_CHARS else 0x20 for c in range(256))  # run character → "a"
_LONG_RUN = b"a" * 20
_RUN = re.compile(rb" [^ ]{20,}")
_WORD_BYTES = bytes(c if chr(c) in WORD_CHARS else 0x20 for c in range(256))
_FIRST_TWO = itemgetter(slice(None, 2))


def _keyword_gates() -> tuple[tuple[str, frozenset[int], frozenset[int]], ...]:
    """(anchor, indices in ``RULES`` of the keyword rules it enables, of those that also need "=" or
    ":" in the text).  Anchors are reduced to the shortest anchor they contain (within each of the two
    groups), so e.g. "private key", "private-" and "private" cost one test."""
    gates: dict[str, list[set[int]]] = {}
    for slot, needs_sep in enumerate((False, True)):
        table: dict[str, set[int]] = {}
        for index, rule in enumerate(RULES):
            if not rule.token and rule.needs_sep == needs_sep:
                for anchor in rule.anchors:
                    table.setdefault(anchor.lower(), set()).add(index)
        for anchor in sorted(table, key=len):
            for other in list(table):
                if other != anchor and anchor in other and anchor in table:
                    table[anchor] |= table.pop(other)
        for anchor, indices in table.items():
            gates.setdefault(anchor, [set(), set()])[slot] |= indices
    return tuple((anchor, frozenset(plain), frozenset(sep)) for anchor, (plain, sep) in gates.items())


def _word_keys(anchor: str) -> list[bytes]:
    """The keys (first two characters of a word) under which a word-start anchor is looked up: those
    of the word it starts, after any separators it begins with (":AA" is looked up under "AA")."""
    head = anchor.encode("ascii").lstrip(bytes(c for c in range(128) if chr(c) not in WORD_CHARS))
    word = 0
    while word < len(head) and chr(head[word]) in WORD_CHARS:
        word += 1
    if word >= 2:
        return [head[:2]]
    if word == 1 and len(head) > 1:  # one word character then a separator ("x-"): the word is that one character
        return [head[:1]]
    if word == 1:  # a one-character anchor: every word it can start
        return [head] + [head + c.encode() for c in sorted(WORD_CHARS)]
    raise ValueError(f"token anchor {anchor!r} has no word character")


def _token_tables() -> tuple[
    MappingProxyType[bytes, tuple[tuple[str, frozenset[int]], ...]], tuple[tuple[str, frozenset[int]], ...]
]:
    """Word-start anchors of the token rules by word key, each with the indices in ``RULES`` of the
    rules it enables (an anchor that extends a shorter one of the same key is folded into it: "sk-"
    enables the "sk-ant-" rules too); and the anchors of the inner-anchored token rules."""
    keyed: dict[bytes, dict[str, set[int]]] = {}
    inner: dict[str, set[int]] = {}
    for index, rule in enumerate(RULES):
        if not rule.token:
            continue
        for anchor in rule.anchors:
            if rule.inner:
                inner.setdefault(anchor, set()).add(index)
            else:
                for key in _word_keys(anchor):
                    keyed.setdefault(key, {}).setdefault(anchor, set()).add(index)
    table: dict[bytes, tuple[tuple[str, frozenset[int]], ...]] = {}
    for key, anchors in keyed.items():
        folded: dict[str, set[int]] = {}
        for anchor in sorted(anchors, key=len):
            shorter = next((a for a in folded if anchor.startswith(a)), None)
            folded.setdefault(shorter or anchor, set()).update(anchors[anchor])
        table[key] = tuple((a, frozenset(i)) for a, i in folded.items())
    return MappingProxyType(table), tuple((a, frozenset(i)) for a, i in inner.items())


_KEYWORD_GATES = _keyword_gates()
_TOKEN_KEYS, _INNER_ANCHORS = _token_tables()


def mask_secrets(text: str, markers: tuple[str, ...], marker: str, preserve: bool) -> tuple[str, dict[str, int]]:
    """``text`` with every credential the rules find replaced by ``marker`` (plus the newlines it
    held when ``preserve``), and the number of spans masked per kind (``Rule.kind``).  A value
    consisting (almost) only of ``markers`` is already masked."""
    kinds: dict[str, int] = {}
    low = text.lower()
    # private-key blocks first: their body must go as a whole, before any token rule
    for rule in KEY_BLOCK_RULES:
        if any(anchor in low for anchor in rule.anchors):
            found = _match_rule(rule, text, low, markers)
            if found:
                text = _mask(text, [(s, e, rule.kind) for s, e in found], marker, preserve, kinds)
                low = text.lower()
    # token rules: only inside runs of >= 20 token characters
    spans = _token_spans(text, markers)
    if spans:
        text = _mask(text, spans, marker, preserve, kinds)
        low = ""
    # keyword rules: on the whole (lower-cased) text, one rule at a time
    low = low or text.lower()
    active: set[int] = set()
    separated = "=" in text or ":" in text
    for anchor, plain, needs_sep in _KEYWORD_GATES:
        if anchor in low:
            active |= plain
            if separated:
                active |= needs_sep
    for index in sorted(active):
        rule = RULES[index]
        low = low or text.lower()
        found = _match_rule(rule, text, low, markers)
        if found:
            text = _mask(text, [(s, e, rule.kind) for s, e in found], marker, preserve, kinds)
            low = ""
    return text, kinds


def mask_custom(
    text: str, patterns: tuple[re.Pattern[str], ...], protected: tuple[str, ...], marker: str, preserve: bool
) -> tuple[str, int]:
    """``text`` with the non-empty matches of each custom pattern in turn masked, except matches that
    overlap one of the ``protected`` strings (the markers); and the number of spans masked."""
    masked = 0
    for pattern in patterns:
        taken = _occurrences(text, protected)
        spans = [
            (*m.span(), "custom")
            for m in pattern.finditer(text)
            if m.end() > m.start() and not any(s < m.end() and m.start() < e for s, e in taken)
        ]
        if spans:
            text, kinds = mask_spans(text, spans, marker, preserve)
            masked += kinds["custom"]
    return text, masked


def mask_spans(text: str, spans: list[Span], marker: str, preserve: bool) -> tuple[str, dict[str, int]]:
    """Replace the union of ``spans`` (not empty; listed by priority) by ``marker``, one per connected
    span; returns the text and the number of connected spans per kind, each counted under the kind of
    the first-listed span it contains."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1]))
    merged: list[list[int]] = []  # [start, end, index of its first-listed span]
    for i in order:
        start, end, _ = spans[i]
        if merged and start <= merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            last[2] = min(last[2], i)
        else:
            merged.append([start, end, i])
    out: list[str] = []
    kinds: dict[str, int] = {}
    last_end = 0
    for start, end, i in merged:
        out.append(text[last_end:start])
        out.append(marker + ("\n" * text.count("\n", start, end) if preserve else ""))
        last_end = end
        kind = spans[i][2]
        kinds[kind] = kinds.get(kind, 0) + 1
    out.append(text[last_end:])
    return "".join(out), kinds


def _mask(text: str, spans: list[Span], marker: str, preserve: bool, kinds: dict[str, int]) -> str:
    text, found = mask_spans(text, spans, marker, preserve)
    for kind, count in found.items():
        kinds[kind] = kinds.get(kind, 0) + count
    return text


def _token_runs(text: str) -> list[tuple[int, str]]:
    """The maximal runs of >= 20 token characters, with their offsets."""
    data = text.encode("ascii", "replace")  # one byte per character
    if _LONG_RUN not in data.translate(_RUN_FLAGS):
        return []  # the common case for prose: no run at all
    blanked = b" " + data.translate(_RUN_BYTES)
    return [(m.start(), text[m.start() : m.end() - 1]) for m in _RUN.finditer(blanked)]


def _token_spans(text: str, markers: tuple[str, ...]) -> list[Span]:
    """The spans the token rules mask, in rule order.  The runs are joined by NUL (which no token
    rule matches) and each enabled rule searches them all at once."""
    runs = _token_runs(text)
    if not runs:
        return []
    joined = "\0".join(chunk for _, chunk in runs)
    enabled: set[int] = set()
    words = set(map(_FIRST_TWO, joined.encode("ascii").translate(_WORD_BYTES).split()))
    for key in words & _TOKEN_KEYS.keys():
        for anchor, indices in _TOKEN_KEYS[key]:
            if anchor in joined:
                enabled |= indices
    for anchor, indices in _INNER_ANCHORS:
        if anchor in joined:
            enabled |= indices
    if not enabled:
        return []
    joined_starts: list[int] = []
    offset = 0
    for _, chunk in runs:
        joined_starts.append(offset)
        offset += len(chunk) + 1
    spans: list[Span] = []
    for index in sorted(enabled):
        rule = RULES[index]
        for start, end in _match_rule(rule, joined, joined, markers):
            run = bisect_right(joined_starts, start) - 1
            shift = runs[run][0] - joined_starts[run]
            spans.append((start + shift, end + shift, rule.kind))
    return spans


def _match_rule(rule: Rule, text: str, low: str, markers: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans of ``text`` that ``rule`` masks; a value consisting (almost) only of ``markers`` is
    already masked."""
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
            spans.append(span)
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


def _occurrences(text: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for needle in needles:
        pos = text.find(needle)
        while pos != -1:
            spans.append((pos, pos + len(needle)))
            pos = text.find(needle, pos + len(needle))
    return spans
