"""Citations: a short, persistent, human-typable id per event, ``mem:`` + 6 base62 characters.

The first candidate is derived from the event id, so the same event gets the same citation in every
store built from the same transcripts; the writer checks each candidate against every citation ever
issued (forgotten ones included) and moves on to the next attempt on a collision. 62^6 = 56.8 billion
ids: about one collision per 570,000 events at a million events, so the check matters, rarely.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

ALPHABET: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
LENGTH: Final = 6
PREFIX: Final = "mem:"
MAX_ATTEMPTS: Final = 64
_REF: Final = re.compile(r"^\[?(?:mem:)?([0-9A-Za-z]{6})\]?$")
IN_TEXT: Final = re.compile(r"(?<![\w:])\[?mem:([0-9A-Za-z]{6})\b\]?")


def candidate(event_id: int, attempt: int = 0) -> str:
    """The citation to try for ``event_id`` on its ``attempt``-th try (without the prefix)."""
    digest = hashlib.sha256(f"{event_id}:{attempt}".encode()).digest()
    value = int.from_bytes(digest[:8], "big")
    chars = []
    for _ in range(LENGTH):
        value, digit = divmod(value, 62)
        chars.append(ALPHABET[digit])
    return "".join(chars)


def parse(ref: str) -> str | None:
    """``mem:AbC123``, ``[mem:AbC123]`` or ``AbC123`` -> ``AbC123``; anything else -> None."""
    match = _REF.match(ref.strip())
    return match.group(1) if match else None


def render(citation: str) -> str:
    return f"{PREFIX}{citation}"
