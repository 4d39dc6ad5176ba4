"""The language server's cache of code hovers: least recently used, each entry with the store generation it
was computed at (the service answers ``unchanged`` while that generation is current)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

CACHE_ENTRIES: Final = 512


@dataclass(frozen=True, slots=True)
class CachedHover:
    generation: str
    markdown: str | None


class HoverCache:
    """Least recently used code hovers, keyed by (path, symbol, project), each with its generation."""

    def __init__(self, size: int = CACHE_ENTRIES) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, str | None, str | None], CachedHover] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, str | None, str | None]) -> CachedHover | None:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: tuple[str, str | None, str | None], value: CachedHover) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()
