"""Keyword tokenisation shared by the index (in DuckDB SQL) and queries (here, in Python).

The index side lower-cases, splits on anything that is not a letter or digit (RE2 ``[^\\pL\\pN]+``),
drops stopwords and words outside 2-40 characters, and stems with Snowball's ``porter`` algorithm (the
DuckDB FTS extension's ``stem``). Queries do the same here with PyStemmer's ``porter``, the same
libstemmer code: measured identical on 13,175 distinct corpus words.
"""

from __future__ import annotations

import re
from typing import Final

import Stemmer

# Very common English function words: they appear in almost every event and only bloat postings.
STOPWORDS: Final = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "he", "her",
        "his", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so",
        "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "was",
        "we", "were", "what", "when", "which", "who", "will", "with", "you", "your",
        # question and auxiliary words: they name no topic (LoCoMo dev, keyword, cats 1-4: r@5 51.8 -> 54.4)
        "am", "been", "being", "can", "could", "did", "do", "does", "had", "how", "may", "might", "shall",
        "should", "whom", "whose", "why", "where", "would", "him", "hers", "some", "about",
    }
)  # fmt: skip
MIN_WORD: Final = 2
MAX_WORD: Final = 40
MAX_QUERY_TERMS: Final = 32
SPLIT_SQL: Final = r"[^\pL\pN]+"
_SPLIT: Final = re.compile(r"[\W_]+")


class QueryTokenizer:
    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("porter")

    def words(self, text: str) -> list[str]:
        return [w for w in _SPLIT.split(text.lower()) if MIN_WORD <= len(w) <= MAX_WORD and w not in STOPWORDS]

    def terms(self, text: str) -> list[str]:
        """Distinct stemmed terms of a query, in order of first appearance (at most 32)."""
        seen: dict[str, None] = {}
        for word in self.words(text):
            seen.setdefault(self._stemmer.stemWord(word), None)
            if len(seen) >= MAX_QUERY_TERMS:
                break
        return list(seen)
