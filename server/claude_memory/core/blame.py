"""Blame: which edit record wrote each line of a file as it is now. Pure: no I/O, no state.

The records come newest first; each hunk (the text one call inserted) claims the lines of the file that are still
its own, and a line claimed by a newer record is never claimed again, so every line goes to the latest call that
produced it. A line a newer call removed (its hunk's ``removed`` text) is no longer an older call's: the older
hunk's copy of it claims nothing. A hunk is found in three steps:

1. **blocks**: its lines and the file's free lines, compared with all whitespace removed (re-indenting and
   re-spacing do not matter), by longest matching blocks (difflib's algorithm over free lines only); a block counts
   only with ``MIN_BLOCK_CHARS`` characters of substance, so a lone ``}`` or blank line is never claimed on its own.
   Blocks are found wherever they are (a moved function), in up to ``ROUNDS`` rounds (parts moved apart);
2. **gaps**: between two blocks of the hunk, and just before its first and after its last, its remaining lines and
   the file's free lines are paired in order by a small dynamic programme over rapidfuzz similarities: one line
   with one at ``GAP_SIMILARITY`` (a renamed variable, an edited literal: the blocks around vouch for the place),
   one with two or three or the reverse at ``LINE_SIMILARITY`` (a formatter split or joined it); a person's line
   inserted there stays free;
3. **lone lines**: a substantial line still unpaired goes to the most similar free line of the file at
   ``LINE_SIMILARITY`` (0.85, the evidence aligner's fuzzy threshold).

Measured on bench/bench_provenance.py (docs/lsp.md): line by line like this, blame beat aligning each hunk's whole
text with the evidence aligner (``core.evidence``), which claimed a person's lines near a hunk whose own lines had
all gone. Lines no record claims are reported as not written by Claude (as far as the records know).
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from rapidfuzz import fuzz, process

MIN_BLOCK_CHARS: Final = 12  # non-space characters a matching block needs to be trusted alone
MIN_LONE_CHARS: Final = 16  # ... and a single line looked for anywhere in the file
LINE_SIMILARITY: Final = 0.85  # a lone line's, as the evidence aligner's fuzzy threshold
GAP_SIMILARITY: Final = 0.6  # a line's between (or beside) blocks of its hunk
MIN_REMOVED_CHARS: Final = 8  # a removed line shorter than this (a brace, a blank) cancels nothing
ROUNDS: Final = 3  # of block matching per hunk
SLACK: Final = 3  # file lines looked at beyond the hunk's length before its first block and after its last
MAX_GAP_CELLS: Final = 40_000  # a gap larger than this (hunk lines x file lines) is not aligned line by line
NORMALIZED_CONFIDENCE: Final = 0.95  # a line equal but for whitespace

Method = Literal["exact", "normalized", "fuzzy"]
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Record:
    """An edit record as blame sees it: an id and its changes, each the text it inserted, the line that text started
    at right after the call (kept for the faces; blame finds text wherever it went) and the text it removed."""

    id: int
    hunks: Sequence[tuple[str, int | None, str]]  # (inserted text, its first line after the call, removed text)


@dataclass(frozen=True, slots=True)
class Attribution:
    """Lines ``start``..``end`` (1-based, inclusive): written by ``record`` (its ``hunk``), or by no record."""

    start: int
    end: int
    record: int | None
    hunk: int | None
    confidence: float  # the weakest line's
    method: Method | None


@dataclass(slots=True)
class _Claim:
    record: int
    hunk: int
    confidence: float
    method: Method


def _loose(line: str) -> str:
    return _SPACE.sub("", unicodedata.normalize("NFKC", line))


def _norm(line: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", line).split())


def file_lines(text: str) -> list[str]:
    """The lines of a file's text as editors number them (a final newline starts no extra line)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


def blame(text: str, records: Sequence[Record]) -> list[Attribution]:
    """Attribute every line of ``text`` to the newest of ``records`` (newest first) that wrote it, or to none."""
    state = _File(file_lines(text))
    removed_later: Counter[str] = Counter()  # lines newer calls took out: an older call's copy of them is gone
    for record in records:
        for number, (inserted, _start, _removed) in enumerate(record.hunks):
            if inserted.strip():
                state.claim_hunk(record.id, number, file_lines(inserted), removed_later)
        for _inserted, _start, removed in record.hunks:
            removed_later.update(k for k in map(_loose, file_lines(removed)) if len(k) >= MIN_REMOVED_CHARS)
    return _ranges(state.claims)


class _File:
    """The file's lines, their comparison forms, and who has claimed each."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.loose = [_loose(line) for line in lines]
        self.norm = [_norm(line) for line in lines]
        self.claims: list[_Claim | None] = [None] * len(lines)
        self._where: dict[str, list[int]] = {}  # loose key -> the free lines that have it, in order
        for j, key in enumerate(self.loose):
            self._where.setdefault(key, []).append(j)

    def _take(self, j: int, record: int, hunk: int, confidence: float, method: Method) -> None:
        if self.claims[j] is not None:
            return  # (two hunk lines joined into one file line: claimed once)
        self.claims[j] = _Claim(record, hunk, confidence, method)
        where = self._where[self.loose[j]]
        del where[bisect.bisect_left(where, j)]

    def _longest(self, keys: list[str | None], alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int]:
        """The longest run of hunk lines ``keys[alo:ahi]`` equal to free file lines in ``blo:bhi`` (difflib's
        find_longest_match, over free lines only)."""
        best = (alo, blo, 0)
        run: dict[int, int] = {}
        for i in range(alo, ahi):
            key = keys[i]
            grown: dict[int, int] = {}
            places = self._where.get(key, []) if key is not None else []
            for j in places[bisect.bisect_left(places, blo) :]:
                if j >= bhi:
                    break
                k = grown[j] = run.get(j - 1, 0) + 1
                if k > best[2]:
                    best = (i - k + 1, j - k + 1, k)
            run = grown
        return best

    def _blocks(self, keys: list[str | None]) -> list[tuple[int, int, int]]:
        """Matching blocks of hunk and free file lines, in order in both (difflib's get_matching_blocks)."""
        todo = [(0, len(keys), 0, len(self.lines))]
        found = []
        while todo:
            alo, ahi, blo, bhi = todo.pop()
            i, j, k = self._longest(keys, alo, ahi, blo, bhi)
            if k:
                found.append((i, j, k))
                if alo < i and blo < j:
                    todo.append((alo, i, blo, j))
                if i + k < ahi and j + k < bhi:
                    todo.append((i + k, ahi, j + k, bhi))
        return sorted(found)

    def free(self, j: int) -> bool:
        return 0 <= j < len(self.lines) and self.claims[j] is None

    def claim_hunk(self, record: int, hunk: int, h_lines: list[str], removed_later: Counter[str]) -> None:
        h = _Hunk(record, hunk, h_lines)
        for i, key in enumerate(h.loose):
            if removed_later[key] > 0:  # a newer call removed this line: whatever looks like it now is not it
                removed_later[key] -= 1
                h.paired[i] = -1
        for _ in range(ROUNDS):  # a later round finds the parts of a hunk that moved apart
            keys = [k if i not in h.paired else None for i, k in enumerate(h.loose)]
            blocks = [
                b for b in self._blocks(keys) if sum(len(k) for k in h.loose[b[0] : b[0] + b[2]]) >= MIN_BLOCK_CHARS
            ]
            if not blocks:
                break
            for i, j, size in blocks:
                for k in range(size):
                    if self.free(j + k):
                        exact = h.lines[i + k].strip() == self.lines[j + k].strip()
                        self._pair(h, i + k, [j + k], 1.0 if exact else NORMALIZED_CONFIDENCE)
            # blocks are in order in both the hunk and the file: pair what lies between and around them
            (i0, j0, _), (i9, j9, s9) = blocks[0], blocks[-1]
            self._gap(h, range(0, i0), range(max(0, j0 - i0 - SLACK), j0))
            for (i1, j1, s1), (i2, j2, _s2) in itertools.pairwise(blocks):
                self._gap(h, range(i1 + s1, i2), range(j1 + s1, j2))
            self._gap(
                h,
                range(i9 + s9, len(h.lines)),
                range(j9 + s9, min(len(self.lines), j9 + s9 + len(h.lines) - i9 - s9 + SLACK)),
            )
        self._lone(h)

    def _pair(self, h: _Hunk, i: int, js: list[int], confidence: float, method: Method | None = None) -> None:
        chosen: Method = method or (
            "exact" if confidence == 1.0 else "normalized" if confidence == NORMALIZED_CONFIDENCE else "fuzzy"
        )
        for j in js:
            self._take(j, h.record, h.number, confidence, chosen)
        h.paired[i] = js[0]

    def _gap(self, h: _Hunk, h_range: range, f_range: range) -> None:
        """Pair the hunk's unpaired lines in ``h_range`` with the file's free lines in ``f_range``, in order, by the
        best total similarity (a dynamic programme): one line with one (an edited line), one with two or three (a
        line a formatter split) or two or three with one (joined). One with one needs ``GAP_SIMILARITY``, weaker
        than a lone line's because the blocks on either side vouch for the place; a split or a join needs
        ``LINE_SIMILARITY``."""
        hs = [i for i in h_range if i not in h.paired]
        fs = [j for j in f_range if self.free(j)]
        if not hs or not fs or len(hs) * len(fs) > MAX_GAP_CELLS:
            return
        sim = _Similarity(h, self, hs, fs)
        n, m = len(hs), len(fs)
        best = [[0.0] * (m + 1) for _ in range(n + 1)]
        move: list[list[tuple[int, int, float]]] = [[(0, 0, 0.0)] * (m + 1) for _ in range(n + 1)]
        for a in range(n + 1):
            for b in range(m + 1):
                if a == 0 and b == 0:
                    continue
                options: list[tuple[float, tuple[int, int, float]]] = []
                if a:
                    options.append((best[a - 1][b], (1, 0, 0.0)))
                if b:
                    options.append((best[a][b - 1], (0, 1, 0.0)))
                for da, db in ((1, 1), (1, 2), (2, 1), (1, 3), (3, 1)):
                    if a >= da and b >= db:
                        score = sim.score(a - da, da, b - db, db)
                        if score >= (GAP_SIMILARITY if da == db else LINE_SIMILARITY):
                            options.append((best[a - da][b - db] + score * max(da, db), (da, db, score)))
                best[a][b], move[a][b] = max(options, key=lambda o: o[0])
        a, b = n, m
        while a or b:
            da, db, score = move[a][b]
            if da and db:
                exact = score >= 1.0
                js = [fs[b - db + k] for k in range(db)]
                for k in range(da):
                    self._pair(h, hs[a - da + k], js, 1.0 if exact else min(score, NORMALIZED_CONFIDENCE),
                               "exact" if exact else "fuzzy")  # fmt: skip
            a, b = a - da, b - db

    def _lone(self, h: _Hunk) -> None:
        """A substantial line of the hunk still unpaired: the most similar free line of the file, if similar enough."""
        wanted = [i for i, line in enumerate(h.norm) if i not in h.paired and len(h.loose[i]) >= MIN_LONE_CHARS]
        if not wanted:
            return
        free = [j for j in range(len(self.lines)) if self.claims[j] is None and len(self.loose[j]) >= MIN_LONE_CHARS]
        if not free:
            return
        choices = [self.norm[j] for j in free]
        for i in wanted:
            found = process.extractOne(h.norm[i], choices, scorer=fuzz.ratio, score_cutoff=LINE_SIMILARITY * 100)
            if found is not None and self.claims[free[found[2]]] is None:
                score = found[1] / 100.0
                self._pair(
                    h,
                    i,
                    [free[found[2]]],
                    1.0 if score >= 1.0 else min(score, NORMALIZED_CONFIDENCE),
                    "exact" if score >= 1.0 else "fuzzy",
                )


class _Hunk:
    """One hunk's lines, their comparison forms, and which file line each was paired with."""

    def __init__(self, record: int, number: int, lines: list[str]) -> None:
        self.record = record
        self.number = number
        self.lines = lines
        self.loose = [_loose(line) for line in lines]
        self.norm = [_norm(line) for line in lines]
        self.paired: dict[int, int] = {}


class _Similarity:
    """Similarity of runs of hunk lines with runs of file lines (joined by a space), memoised for one gap."""

    def __init__(self, h: _Hunk, f: _File, hs: list[int], fs: list[int]) -> None:
        self._h, self._f, self._hs, self._fs = h, f, hs, fs
        self._memo: dict[tuple[int, int, int, int], float] = {}

    def score(self, a: int, da: int, b: int, db: int) -> float:
        key = (a, da, b, db)
        found = self._memo.get(key)
        if found is None:
            left = " ".join(self._h.norm[self._hs[a + k]] for k in range(da))
            right = " ".join(self._f.norm[self._fs[b + k]] for k in range(db))
            if not left or not right:
                found = 1.0 if left == right and da == db == 1 else 0.0
            elif left == right:
                found = 1.0
            else:
                found = fuzz.ratio(left, right) / 100.0
                if da != db:  # a split or joined line: the formatter may have added or dropped a comma
                    found = max(found, fuzz.ratio(left.replace(" ,", ","), right.replace(" ,", ",")) / 100.0)
            self._memo[key] = found
        return found


def _ranges(claims: list[_Claim | None]) -> list[Attribution]:
    """Runs of lines with the same owner (record and hunk) matched the same way, 1-based; a run's confidence is its
    weakest line's."""
    out: list[Attribution] = []
    for j, claim in enumerate(claims):
        key = (claim.record, claim.hunk, claim.method) if claim else (None, None, None)
        last = out[-1] if out else None
        if last is not None and (last.record, last.hunk, last.method) == key and last.end == j:
            confidence = min(last.confidence, claim.confidence) if claim else 0.0
            out[-1] = Attribution(last.start, j + 1, key[0], key[1], confidence, key[2])
        else:
            out.append(Attribution(j + 1, j + 1, key[0], key[1], claim.confidence if claim else 0.0, key[2]))
    return out
