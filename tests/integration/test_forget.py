"""Forget removes content from the events table, the keyword index, the vectors (rows and hnswlib index)
and the bytes of the files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import hnswlib
import numpy as np
import pytest

from claude_memory.core.filters import EventFilters
from claude_memory.service import memory as memory_module
from claude_memory.service.memory import REBUILD_INDEX_AFTER_FORGET, ForgetSelector, Memory
from claude_memory.store.vector_copy import SCALE_BYTES, decode_rows
from claude_memory.store.vector_index import COPY_FILE, INDEX_FILE, META_FILE


def _line(obj: dict[str, object]) -> str:
    return json.dumps(obj) + "\n"


def _prompt(uuid: str, session: str, text: str, ts: str) -> dict[str, object]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": session,
        "timestamp": ts,
        "cwd": "/nonexistent/proj",
        "message": {"role": "user", "content": text},
    }


def write_home(home: Path) -> None:
    folder = home / "projects" / "-nonexistent-proj"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(
        _line(_prompt("u1", "s1", "the zebraquokka migration plan for the payments table", "2026-01-01T10:00:00.000Z"))
        + _line(_prompt("u2", "s1", "keep the canarykeeper note about retries", "2026-03-01T10:00:00.000Z"))
    )
    (folder / "s2.jsonl").write_text(
        _line(_prompt("u3", "s2", "session two talks about flamingoflux caching", "2026-02-01T10:00:00.000Z"))
    )


def raw_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())


def test_forget_event_removes_it_everywhere_and_reimport_does_not_restore_it(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    with Memory(data) as memory:
        # Store uncompressed so that a raw byte scan can see text at all (DuckDB compresses strings).
        memory.con.execute("SET force_compression = 'uncompressed'")
        memory.import_history(home, settle_seconds=0)
        memory.con.execute("CHECKPOINT")
        assert b"zebraquokka" in raw_bytes(data)  # the scan can see stored text
        (hit, *_follow_ups), _ = memory.search("zebraquokka", EventFilters(), 5)
        assert memory.count_matching(ForgetSelector(event_ids=(hit.event.id,))) == 1
        assert memory.forget(ForgetSelector(event_ids=(hit.event.id,))) == 1
        hits, _ = memory.search("zebraquokka", EventFilters(), 5)
        assert hits == []
        postings = memory.con.execute("SELECT count(*) FROM kw_main WHERE event_id = ?", [hit.event.id]).fetchone()
        postings_delta = memory.con.execute(
            "SELECT count(*) FROM kw_delta WHERE event_id = ?", [hit.event.id]
        ).fetchone()
        assert postings == (0,) and postings_delta == (0,)
        assert memory.stats()["forgotten_events"] == 1
        memory.con.execute("DELETE FROM ingest_checkpoints")  # force a full re-read of the transcripts
        again = memory.import_history(home, settle_seconds=0)
        assert again.events_new == 0
        assert [h.event.text for h in memory.search("canarykeeper", EventFilters(), 5)[0]]
    data_bytes = raw_bytes(data)
    assert b"canarykeeper" in data_bytes  # control: kept text is still visible to this scan
    assert b"zebraquokka" not in data_bytes
    assert b"zebraquo" not in data_bytes


def test_forget_by_session_and_before_date(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        assert memory.forget(ForgetSelector(session_id="s2")) == 1
        assert [s["session_id"] for s in memory.sessions(None, 10)] == ["s1"]
        assert memory.forget(ForgetSelector(before=datetime(2026, 2, 1, tzinfo=UTC))) == 1
        remaining = [e.text for e in memory.history(EventFilters(), 10)]
        assert remaining == ["keep the canarykeeper note about retries"]
        assert memory.forget(ForgetSelector(project="/elsewhere")) == 0
        assert memory.forget(ForgetSelector(project="/nonexistent/proj")) == 1
        assert memory.stats()["events"] == 0


def test_a_crash_between_forget_and_the_file_rewrite_is_finished_at_the_next_open(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "it's data"  # a quote in the path, too
    write_home(home)
    with Memory(data) as memory:
        memory.con.execute("SET force_compression = 'uncompressed'")
        memory.import_history(home, settle_seconds=0)
        (hit, *_follow_ups), _ = memory.search("zebraquokka", EventFilters(), 5)
        # Committed; then the process "dies" before rewriting.
        assert memory.writer.forget(ForgetSelector(event_ids=(hit.event.id,)))[0] == 1
        memory.con.execute("CHECKPOINT")
        assert b"zebraquokka" in raw_bytes(data)  # the deleted text is still in freed blocks
    with Memory(data) as memory:  # the next open finishes the job
        assert memory.search("zebraquokka", EventFilters(), 5)[0] == []
        pending = memory.con.execute("SELECT count(*) FROM store_flags").fetchone()
        assert pending == (0,)
    assert b"zebraquokka" not in raw_bytes(data)
    assert b"canarykeeper" in raw_bytes(data)


# ---------------------------------------------------------------------- vectors (the real model)


def _saved_index(data: Path) -> hnswlib.Index:
    """The hnswlib file as saved, read without the product's code."""
    meta = json.loads((data / META_FILE).read_text())
    index = hnswlib.Index(space="cosine", dim=int(meta["dim"]))
    index.load_index(str(data / INDEX_FILE))
    return index


def _live(index: hnswlib.Index, label: int) -> bool:
    try:
        index.get_items([label])
    except RuntimeError:  # hnswlib: "Label not found" for a label absent or marked deleted
        return False
    return True


def _embedded_home(tmp_path: Path) -> tuple[Path, Path, int, dict[str, list[int]], dict[int, bytes]]:
    """The three-prompt store, embedded: (home, data, zebraquokka event id, labels by fate, vector bytes)."""
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        assert memory.embed_pending() == 3
        (hit, *_follow_ups), _ = memory.search("zebraquokka", EventFilters(), 5, mode="keyword")
        top, _ = memory.search("a migration plan for the payments table", EventFilters(), 1, mode="semantic")
        assert top[0].event.id == hit.event.id  # semantic search finds it before the forget
        rows = memory.con.execute("SELECT label, event_id FROM chunks ORDER BY label").fetchall()
    labels = {"doomed": [int(r[0]) for r in rows if r[1] == hit.event.id],
              "kept": [int(r[0]) for r in rows if r[1] != hit.event.id]}  # fmt: skip
    assert labels["doomed"] and labels["kept"]
    index = _saved_index(data)
    vectors = {
        label: np.asarray(index.get_items([label]), dtype=np.float32).tobytes() for r in rows for label in [r[0]]
    }
    return home, data, hit.event.id, labels, vectors


def _assert_vectors_gone(data: Path, event_id: int, labels: dict[str, list[int]], vectors: dict[int, bytes]) -> None:
    with Memory(data) as memory:
        assert memory.con.execute("SELECT count(*) FROM chunks WHERE event_id = ?", [event_id]).fetchone() == (0,)
        orphans = memory.con.execute(
            "SELECT count(*) FROM vectors WHERE content_hash NOT IN (SELECT content_hash FROM chunks)"
        ).fetchone()
        assert orphans == (0,)
        vector_rows = memory.con.execute("SELECT count(*) FROM vectors").fetchone()
        assert vector_rows == (len(labels["kept"]),)  # the three prompts share no chunk text
        index = memory.vector_index()
        assert index.live_count == len(labels["kept"])
        for query in ("a migration plan for the payments table", "zebraquokka migration plan"):
            hits, meta = memory.search(query, EventFilters(), 5, mode="semantic")
            assert meta["mode"] == "semantic" and hits
            assert event_id not in [h.event.id for h in hits]
            hits, _ = memory.search(query, EventFilters(), 5, mode="hybrid")
            assert event_id not in [h.event.id for h in hits]
    dim = len(vectors[labels["kept"][0]]) // 4
    copy = decode_rows(np.fromfile(data / COPY_FILE, dtype=np.uint8).reshape(-1, dim + SCALE_BYTES))
    for label in labels["kept"]:  # control: the copy search reads holds the kept vectors ...
        assert np.abs(copy - np.frombuffer(vectors[label], dtype=np.float32)).max(axis=1).min() < 3e-3
    for label in labels["doomed"]:  # ... and not the forgotten one, even where the index only marked it deleted
        assert np.abs(copy - np.frombuffer(vectors[label], dtype=np.float32)).max(axis=1).min() > 0.05
    saved = _saved_index(data)
    assert not any(_live(saved, label) for label in labels["doomed"])
    assert all(_live(saved, label) for label in labels["kept"])
    found = saved.knn_query(np.frombuffer(vectors[labels["doomed"][0]], dtype=np.float32), k=len(labels["kept"]))
    assert set(found[0][0].tolist()) == set(labels["kept"])


@pytest.mark.parametrize("rebuild_below", [REBUILD_INDEX_AFTER_FORGET, 0], ids=["rebuilt", "marked-deleted"])
def test_forget_removes_the_vectors_and_the_index_entries(
    tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch, rebuild_below: int
) -> None:
    monkeypatch.setattr(memory_module, "REBUILD_INDEX_AFTER_FORGET", rebuild_below)
    _, data, event_id, labels, vectors = _embedded_home(tmp_path)
    with Memory(data) as memory:
        assert memory.vector_index().live_count == 3  # loaded before, as in a long-running service
        assert memory.forget(ForgetSelector(event_ids=(event_id,))) == 1
        assert memory.vector_index().rebuilt == bool(rebuild_below)
    _assert_vectors_gone(data, event_id, labels, vectors)
    index_bytes = (data / INDEX_FILE).read_bytes()
    assert vectors[labels["kept"][0]] in index_bytes  # control: the scan sees vectors in the file
    if rebuild_below:
        assert vectors[labels["doomed"][0]] not in index_bytes
    else:  # only marked deleted (an index too big to rebuild at once): `reindex` drops the bytes
        assert vectors[labels["doomed"][0]] in index_bytes
        with Memory(data) as memory:
            assert memory.reindex() == len(labels["kept"])
        assert vectors[labels["doomed"][0]] not in (data / INDEX_FILE).read_bytes()
        _assert_vectors_gone(data, event_id, labels, vectors)


def test_a_forget_in_a_process_that_had_not_loaded_the_index_does_not_build_it_again(
    tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `forget` from the command line with no service running: the index is loaded before the delete (after it,
    the missing labels would look like a crash's, and the whole index would be built again: 11 min at 1M events)."""
    monkeypatch.setattr(memory_module, "REBUILD_INDEX_AFTER_FORGET", 0)
    _, data, event_id, labels, vectors = _embedded_home(tmp_path)
    with Memory(data) as memory:
        assert memory.forget(ForgetSelector(event_ids=(event_id,))) == 1
        index = memory.vector_index()
        assert not index.rebuilt and index.live_count == len(labels["kept"])
    _assert_vectors_gone(data, event_id, labels, vectors)


def test_a_crash_between_forget_and_the_index_update_is_repaired_at_the_next_open(
    tmp_path: Path, model_dir: Path
) -> None:
    _, data, event_id, labels, vectors = _embedded_home(tmp_path)
    with Memory(data) as memory:
        # Committed; the process "dies" before the index update.
        assert memory.writer.forget(ForgetSelector(event_ids=(event_id,)))[0] == 1
    assert _live(_saved_index(data), labels["doomed"][0])  # the stale index still holds the forgotten vector
    _assert_vectors_gone(data, event_id, labels, vectors)
    assert vectors[labels["doomed"][0]] not in (data / INDEX_FILE).read_bytes()
