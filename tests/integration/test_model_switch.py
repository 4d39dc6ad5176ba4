"""Changing the embedding model (service/model_switch.py) on the fixture store with the real model and its real
int8 copy: the current model serves until the next one's vectors are complete, then every vector is the next
model's; events added and forgotten meanwhile, a stop half-way, and giving up."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.service import model_switch
from claude_memory.service.memory import Memory
from claude_memory.store.quantize import quantize_int8
from claude_memory.store.vector_index import NEXT_STEM
from support import own_fixtures
from support.shared_data import embedding_model

WORK = own_fixtures.WORK


@pytest.fixture(scope="module")
def int8_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = embedding_model()
    folder = tmp_path_factory.mktemp("int8-model")
    for item in source.iterdir():
        if item.name != "model.onnx":
            shutil.copyfile(item, folder / item.name)
    quantize_int8(source / "model.onnx", folder / "model.onnx")
    return folder


@pytest.fixture(scope="module")
def work_only(fixtures_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One project of the fixture tree, imported and embedded with the float32 model, which the store records (a
    later process finds it without the variable)."""
    data = tmp_path_factory.mktemp("switch") / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLAUDE_MEMORY_MODEL_PATH", str(embedding_model()))
        with Memory(data) as memory:
            memory.import_history(fixtures_home, project="/home/dev/work", settle_seconds=0)
            memory.embed_pending()
            assert memory.model_ready()
    return data


def _copy(source: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(source, tmp_path / "data"))


def _one(memory: Memory, sql: str) -> int:
    row = memory.con.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def _run_to_end(memory: Memory) -> int:
    steps = 0
    while memory.switch.step(16):
        steps += 1
        assert steps < 10_000
    return steps


def _every_vector_is(memory: Memory, model_id: str) -> None:
    """Each chunk's vector is its text's under ``model_id``; no other vector is left."""
    from claude_memory.core.chunks import MAX_CHUNKS, MAX_TOOL_CHUNKS, chunk_hash, chunk_text

    rows = memory.con.execute(
        "SELECT c.event_id, c.chunk_no, c.content_hash, e.text, e.type FROM chunks c JOIN events e ON e.id = c.event_id"
    ).fetchall()
    assert rows
    for _event, no, content_hash, text, kind in rows:
        pieces = chunk_text(text, MAX_TOOL_CHUNKS if kind == "tool_use" else MAX_CHUNKS)
        assert content_hash == chunk_hash(model_id, pieces[no])
    assert _one(memory, "SELECT count(*) FROM vectors WHERE content_hash NOT IN (SELECT content_hash FROM chunks)") == 0
    assert _one(memory, "SELECT count(*) FROM next_chunks") == 0
    texts = _one(memory, "SELECT count(*) FROM events WHERE length(trim(text)) > 0")
    assert _one(memory, "SELECT count(DISTINCT event_id) FROM chunks") == texts


def test_the_current_model_serves_until_the_switch_is_complete_then_every_vector_is_the_new_models(
    work_only: Path, tmp_path: Path, int8_folder: Path, fixtures_home: Path
) -> None:
    data = _copy(work_only, tmp_path)
    with Memory(data) as memory:
        assert memory.model_ready() and memory.embedder.source == "recorded"
        old_id = memory.embedder.model_id
        chunks_before = _one(memory, "SELECT count(*) FROM chunks")
        state = memory.switch.start(model_switch.resolve(memory, str(int8_folder)))
        new_id = state["model_id"]
        assert new_id != old_id and state["done"] == 0 and state["events"] > 20
        assert memory.switch.step(8)
        half = memory.switch.status()
        assert half is not None and 0 < half["done"] < half["events"]
        # meanwhile: the current model answers, over its own vectors
        hits, meta = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="semantic")
        assert meta["mode"] == "semantic" and "greeting" in hits[0].event.text.lower()
        assert _one(memory, "SELECT count(*) FROM chunks") == chunks_before
        assert _one(memory, "SELECT count(*) FROM next_chunks") > 0
        # meanwhile: more events arrive (the rest of the tree), and a session is forgotten
        memory.import_history(fixtures_home, settle_seconds=0)
        memory.embed_pending()
        forgotten = str(hits[0].event.session_id)
        assert memory.forget(ForgetSelector(session_id=forgotten)) > 0
        assert _one(memory, "SELECT count(*) FROM next_chunks WHERE event_id NOT IN (SELECT id FROM events)") == 0
        _run_to_end(memory)
        assert not memory.switch.active and memory.switch.status() is None
        assert memory.embedder.model_id == new_id and memory.model_ready()
        _every_vector_is(memory, new_id)
        assert memory.vector_index().live_count == _one(memory, "SELECT count(*) FROM chunks")
        assert _one(memory, "SELECT count(*) FROM embed_queue") == 0
        hits, meta = memory.search("output a salutation", EventFilters(), 5, mode="semantic")
        assert meta["mode"] == "semantic" and "greeting" in hits[0].event.text.lower()
        assert all(h.event.session_id != forgotten for h in hits)
    assert not list(data.glob(f"{NEXT_STEM}*"))
    with Memory(data) as later:  # a later process: the store's model is the new one, found without being told
        status = later.model_status()
        assert status["available"] and status["model_id"] == new_id and status["recorded"]["model_id"] == new_id
        assert status["source"] == "recorded" and status["path"] == str(int8_folder) and status["switch"] is None
        assert not later.vector_index().rebuilt  # the switch's index was put in place, not rebuilt
        hits, meta = later.search("output a salutation", EventFilters(project=WORK), 5, mode="semantic")
        assert meta["mode"] == "semantic" and "greeting" in hits[0].event.text.lower()  # the new model's vectors
        hits, meta = later.search("output a salutation", EventFilters(project=WORK), 5, mode="hybrid")
        assert meta["mode"] == "hybrid" and any("greeting" in hit.event.text.lower() for hit in hits[:2])


def test_a_switch_stopped_half_way_resumes_where_it_was(work_only: Path, tmp_path: Path, int8_folder: Path) -> None:
    data = _copy(work_only, tmp_path)
    with Memory(data) as memory:
        memory.switch.start(model_switch.resolve(memory, str(int8_folder)))
        memory.switch.step(8)
        memory.switch.step(8)
        half = memory.switch.status()
        assert half is not None
    with Memory(data) as memory:  # stopped (the service restarted): the switch goes on from where it was
        assert memory.switch.active and memory.switch.status() == half
        _run_to_end(memory)
        assert memory.embedder.model_id == half["model_id"]
        _every_vector_is(memory, half["model_id"])
        assert _one(memory, "SELECT count(*) FROM (SELECT event_id, chunk_no FROM chunks GROUP BY ALL "
                            "HAVING count(*) > 1)") == 0  # fmt: skip


def test_giving_a_switch_up_leaves_the_store_as_it_was(work_only: Path, tmp_path: Path, int8_folder: Path) -> None:
    data = _copy(work_only, tmp_path)
    with Memory(data) as memory:
        old_id = memory.embedder.model_id if memory.model_ready() else ""
        vectors = _one(memory, "SELECT count(*) FROM vectors")
        memory.switch.start(model_switch.resolve(memory, str(int8_folder)))
        memory.switch.step(8)
        assert _one(memory, "SELECT count(*) FROM vectors") > vectors
        assert memory.switch.cancel() and not memory.switch.cancel()
        assert _one(memory, "SELECT count(*) FROM vectors") == vectors
        assert _one(memory, "SELECT count(*) FROM next_chunks") == 0 and memory.switch.status() is None
        assert memory.embedder.model_id == old_id
        _every_vector_is(memory, old_id)
    assert not list(data.glob(f"{NEXT_STEM}*"))


def test_what_names_no_model_is_refused_in_one_sentence(work_only: Path, tmp_path: Path) -> None:
    data = _copy(work_only, tmp_path)
    (tmp_path / "empty").mkdir()
    with Memory(data) as memory:
        for requested, words in [
            ("int8", "is not downloaded"),
            ("float32", "is not downloaded"),
            ("no-such/model-anywhere", "neither int8, float32, a model folder nor a model fastembed knows"),
            (str(tmp_path / "empty"), "No model.onnx"),
        ]:
            with pytest.raises(ValueError, match=words) as caught:
                model_switch.resolve(memory, requested)
            assert "\n" not in str(caught.value)
        state = model_switch.resolve(memory, str(embedding_model()))
        with pytest.raises(ValueError, match="already uses"):
            memory.switch.start(state)


def test_another_model_named_by_the_variable_is_not_used_with_the_stores_vectors(
    work_only: Path, tmp_path: Path, int8_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _copy(work_only, tmp_path)
    meta = data / "vectors.hnsw.json"
    index_before = meta.read_text()
    monkeypatch.setenv("CLAUDE_MEMORY_MODEL_PATH", str(int8_folder))
    with Memory(data) as memory:
        recorded = memory.model_status()["recorded"]["model_id"]
        assert not memory.model_ready()  # its vectors are the float32 model's
        status = memory.embedding_status()  # (what `status` asks): the index is not opened under the other id
        assert not status["available"] and status["index_live"] == 0 and status["vectors"] > 0
        assert meta.read_text() == index_before
        _hits, meta = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="hybrid")
        assert meta["mode"] == "keyword" and "model use" in str(meta)
        assert memory.model_status()["recorded"]["model_id"] == recorded  # not re-recorded
        with pytest.raises(ValueError, match="unset it before 'model use'"):
            model_switch.resolve(memory, str(int8_folder))


def test_a_store_from_before_the_switch_tables_opens_read_only_and_is_migrated_when_written(
    work_only: Path, tmp_path: Path
) -> None:
    import duckdb

    from claude_memory.store import db
    from support.old_store import drop_tables_after

    data = _copy(work_only, tmp_path)
    old = duckdb.connect(str(data / db.DB_FILE))
    try:  # back to the schema of migration 0010
        drop_tables_after(old, 10)
    finally:
        old.close()
    with Memory(data, read_only=True) as memory:
        assert memory.model_status()["switch"] is None and not memory.switch.active
        hits, _ = memory.search("salutation greeting", EventFilters(project=WORK), 5, mode="keyword")
        assert hits
    with Memory(data) as memory:
        assert db.schema_version(memory.con) == len(db.MIGRATIONS) and memory.switch.status() is None
