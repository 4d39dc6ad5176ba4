"""Split event text into pieces the embedding model sees whole.

all-MiniLM-L6-v2 reads at most 256 word pieces; 900 characters of English or code stay under that.
Chunks break at a paragraph, line or sentence end when one is near, overlap a little so a sentence cut
in two is still whole in one of them, and at most 8 are made per event (tool output can be huge; its
head says what it is).
"""

from __future__ import annotations

import hashlib
from typing import Final

CHUNK_CHARS: Final = 900
OVERLAP_CHARS: Final = 120
MAX_CHUNKS: Final = 8
MAX_TOOL_CHUNKS: Final = 2  # tool output is long and says little in prose: its head is enough
_BREAKS: Final = ("\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ")


def chunk_text(text: str, max_chunks: int = MAX_CHUNKS) -> list[str]:
    flat = text.strip()
    if len(flat) <= CHUNK_CHARS:
        return [flat] if flat else []
    chunks: list[str] = []
    start = 0
    while start < len(flat) and len(chunks) < max_chunks:
        end = min(len(flat), start + CHUNK_CHARS)
        if end < len(flat):
            window = flat[start + CHUNK_CHARS // 2 : end]
            for mark in _BREAKS:
                cut = window.rfind(mark)
                if cut >= 0:
                    end = start + CHUNK_CHARS // 2 + cut + len(mark)
                    break
        piece = flat[start:end].strip()
        if piece:
            chunks.append(piece)
        if end >= len(flat):
            break
        start = max(end - OVERLAP_CHARS, start + 1)
    return chunks


def chunk_hash(model_id: str, chunk: str) -> str:
    """The key of a chunk's vector: the same text under the same model is embedded once."""
    return hashlib.sha256(f"{model_id}\0{chunk}".encode()).hexdigest()
