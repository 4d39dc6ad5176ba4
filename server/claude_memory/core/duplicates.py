"""Near-duplicate collapse: events whose text is the same or nearly the same (the same command's output in three
sessions, a prompt asked again) are shown as one, with a count and every citation. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from rapidfuzz import fuzz

# Two texts are one when they are equal once normalised (case, spaces, and what changes from run to run of the same
# command: ids, hashes, times, durations), or, both at least LONG_TEXT characters and with the same first line (the
# same call, the same opening), when their rapidfuzz ratio (0-100) is at least NEAR_DUPLICATE: a short text that
# differs by a word or a number says something else ("build 1", "build 2"), and so does another command with the same
# output ("git push" and "git push --force"); a long output that differs by a line is the same output
# (bench/bench_duplicates.py).
NEAR_DUPLICATE: Final = 95.0
LONG_TEXT: Final = 300
COMPARED_CHARS: Final = 2_000  # long texts are compared on their first characters
# Every alternative starts with a digit, a hex letter or "/": the look-ahead lets the regex engine skip every other
# position at once (2.5-3 times faster than trying each alternative everywhere; the same substitutions).
_VOLATILE = re.compile(
    r"(?=[0-9a-f/])(?:"
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"  # uuids
    r"|\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b"  # hashes, hex ids
    r"|\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?z?\b|\b\d{1,2}:\d{2}:\d{2}\b"  # times
    r"|\b\d+(\.\d+)?\s?(ms|s|sec|seconds|m|min|minutes)\b"  # durations
    r"|/tmp/[\w./-]+"  # temporary paths
    r")"
)


def normalise(text: str) -> str:
    return " ".join(_VOLATILE.sub("#", text.lower()).split())[:COMPARED_CHARS]  # spaces: runs of one, none at the ends


def first_line(text: str) -> str:
    return normalise(text.strip().split("\n", 1)[0])


def fold(texts: Sequence[str], threshold: float = NEAR_DUPLICATE) -> list[list[int]]:
    """Groups of indices into ``texts`` that are the same text or nearly, each led by its first index (so the best
    ranked stands for its group), in order of their leaders."""
    groups: list[list[int]] = []
    leaders: list[tuple[str, str]] = []  # (normalised text, normalised first line)
    for n, text in enumerate(texts):
        mine, opening = normalise(text), first_line(text)
        for group, (leader, leader_opening) in zip(groups, leaders, strict=True):
            if mine == leader or (
                opening == leader_opening
                and min(len(mine), len(leader)) >= LONG_TEXT
                and min(len(mine), len(leader)) >= threshold / 100 * max(len(mine), len(leader))
                and fuzz.ratio(mine, leader, score_cutoff=threshold) >= threshold
            ):
                group.append(n)
                break
        else:
            groups.append([n])
            leaders.append((mine, opening))
    return groups
