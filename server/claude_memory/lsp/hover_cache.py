"""The language server's caches: code hovers, least recently used, each entry with the store generation it was
computed at (the service answers ``unchanged`` while that generation is current); and line blames, per document
version, for a few seconds."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

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


FRESH_SECONDS: Final = 5.0  # a blame of an unchanged buffer is asked again after this long (new edit records)
KEPT_BLAMES: Final = 32  # documents whose blame is kept


@dataclass(frozen=True, slots=True)
class _Kept:
    version: int | None
    source_hash: int
    at: float
    blame: dict[str, Any]


class BlameCache:
    """Blames by document URI, for the document version (and text) they were made of."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, _Kept] = OrderedDict()

    def get(self, uri: str, version: int | None, source: str) -> dict[str, Any] | None:
        kept = self._items.get(uri)
        if kept is None or kept.version != version or kept.source_hash != hash(source):
            return None
        if time.monotonic() - kept.at > FRESH_SECONDS:
            return None
        return kept.blame

    def put(self, uri: str, version: int | None, source: str, blame: dict[str, Any]) -> None:
        self._items[uri] = _Kept(version, hash(source), time.monotonic(), blame)
        self._items.move_to_end(uri)
        while len(self._items) > KEPT_BLAMES:
            self._items.popitem(last=False)

    def drop(self, uri: str) -> None:
        self._items.pop(uri, None)

    def clear(self) -> None:
        self._items.clear()
