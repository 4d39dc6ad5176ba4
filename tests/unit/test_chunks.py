from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from claude_memory.core.chunks import CHUNK_CHARS, MAX_CHUNKS, chunk_hash, chunk_text


def test_short_text_is_one_chunk_and_empty_text_none() -> None:
    assert chunk_text("  hello world  ") == ["hello world"]
    assert chunk_text("   ") == []


def test_long_text_breaks_at_sentences_with_overlap_and_a_cap() -> None:
    sentences = [f"Sentence number {i} talks about the zebra migration plan." for i in range(200)]
    chunks = chunk_text(" ".join(sentences))
    assert 1 < len(chunks) <= MAX_CHUNKS
    assert all(len(c) <= CHUNK_CHARS for c in chunks)
    assert all(c.endswith(".") for c in chunks[:-1])  # cut at a sentence end
    assert chunks[0].startswith("Sentence number 0 ")
    assert len(chunk_text(" ".join(sentences), 2)) == 2


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=5000))
def test_chunks_cover_the_start_and_stay_bounded(text: str) -> None:
    chunks = chunk_text(text)
    if text.strip():
        assert chunks and text.strip().startswith(chunks[0][:50])
    assert all(0 < len(c) <= CHUNK_CHARS for c in chunks) and len(chunks) <= MAX_CHUNKS


def test_hash_depends_on_model_and_text() -> None:
    assert chunk_hash("m1", "a") == chunk_hash("m1", "a")
    assert len({chunk_hash("m1", "a"), chunk_hash("m2", "a"), chunk_hash("m1", "b")}) == 3
