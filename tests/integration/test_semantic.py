"""Semantic recall with the real model (../shared/models): embedding, index, hybrid, forget, crashes."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import hnswlib
import numpy as np
import pytest

from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.service import memory as memory_module
from claude_memory.service import semantic
from claude_memory.service.embedding import EmbeddingWorker, queue_status
from claude_memory.service.memory import Memory
from claude_memory.service.semantic import semantic_candidates, similarities
from claude_memory.store import vector_index
from claude_memory.store.embedding_queue import MAX_ATTEMPTS
from claude_memory.store.eventmap import EventMap
from claude_memory.store.vector_copy import SCALE_BYTES
from claude_memory.store.vector_index import BASIS_FILE, COPY_FILE, INDEX_FILE, META_FILE, VectorIndex
from support import own_fixtures
from support.idle_work import quiet_idle_work
from support.shared_data import embedding_model

WORK = own_fixtures.WORK


@pytest.fixture(scope="module")
def embedded(fixtures_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture tree imported and embedded once; each test works on its own copy."""
    model = embedding_model()
    data = tmp_path_factory.mktemp("embedded") / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLAUDE_MEMORY_MODEL_PATH", str(model))
        with Memory(data) as memory:
            memory.import_history(fixtures_home, settle_seconds=0)
            memory.embed_pending()
    return data


def _copy(embedded: Path, tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(embedded, target)
    return target


def _one(memory: Memory, sql: str) -> int:
    row = memory.con.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def test_import_embeds_everything_once_and_semantic_search_finds_paraphrases(
    embedded: Path, tmp_path: Path, model_dir: Path
) -> None:
    with Memory(_copy(embedded, tmp_path)) as memory:
        assert _one(memory, "SELECT count(DISTINCT event_id) FROM chunks") == _one(
            memory, "SELECT count(*) FROM events"
        )
        status = memory.embedding_status()
        assert status["available"] and status["pending"] == 0 and status["failed"] == 0
        chunks = _one(memory, "SELECT count(*) FROM chunks")
        assert status["index_live"] == chunks and status["vectors"] <= chunks
        assert (
            _one(
                memory, "SELECT count(*) FROM (SELECT event_id, chunk_no FROM chunks GROUP BY ALL HAVING count(*) > 1)"
            )
            == 0
        )
        # no word in common with "Please print a greeting with echo" or its call "Bash: echo hello-from-fake /
        # Print a greeting", only meaning
        hits, meta = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="semantic")
        assert meta["mode"] == "semantic" and "degraded" not in meta
        assert "print a greeting" in hits[0].event.text.lower()
        assert any(h.event.tool_name == "Bash" and "Print a greeting" in h.event.text for h in hits)
        keyword_hits, _ = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="keyword")
        assert all("greeting" not in h.event.text.lower() for h in keyword_hits)
        hybrid, meta = memory.search("greeting command output", EventFilters(project=WORK), 5)
        assert meta["mode"] == "hybrid" and hybrid
        assert all(h.components is not None and {"keyword", "semantic"} <= set(h.components) for h in hybrid)
        assert memory.embed_pending() == 0  # nothing left, nothing redone


def test_forget_removes_vectors_and_index_entries(embedded: Path, tmp_path: Path, model_dir: Path) -> None:
    with Memory(_copy(embedded, tmp_path)) as memory:
        session = own_fixtures.GREETING
        before_live = memory.vector_index().live_count
        doomed = _one(
            memory, f"SELECT count(*) FROM chunks c JOIN events e ON e.id = c.event_id WHERE session_id = '{session}'"
        )
        assert doomed > 0
        assert not memory.vector_index().rebuilt
        memory.forget(ForgetSelector(session_id=session))
        assert memory.vector_index().rebuilt  # small index: rebuilt, so no deleted vector's bytes remain
        assert _one(memory, "SELECT count(*) FROM chunks WHERE event_id NOT IN (SELECT id FROM events)") == 0
        assert (
            _one(memory, "SELECT count(*) FROM vectors WHERE content_hash NOT IN (SELECT content_hash FROM chunks)")
            == 0
        )
        assert memory.vector_index().live_count == before_live - doomed
        hits, _ = memory.search("output a salutation", EventFilters(session_id=session), 5, mode="semantic")
        assert hits == []
    with Memory(tmp_path / "data") as memory:  # the saved index agrees after a reopen
        assert memory.vector_index().live_count == before_live - doomed


def test_failed_batches_back_off_and_a_crash_before_the_index_update_is_repaired(
    fixtures_home: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        worker = EmbeddingWorker(memory.writer, memory.embedder, memory.vector_index())

        def broken(texts: list[str]) -> None:
            raise RuntimeError("model crashed")

        monkeypatch.setattr(memory.embedder, "embed", broken)
        assert worker.run() == 0
        status = queue_status(memory.con, worker.index)
        assert status.pending == _one(memory, "SELECT count(*) FROM events") and status.embedded_events == 0
        assert _one(memory, "SELECT min(attempts) FROM embed_queue") == 1
        assert _one(memory, "SELECT count(*) FROM embed_queue WHERE last_error LIKE 'RuntimeError%'") > 0
        monkeypatch.undo()
        memory.con.execute("UPDATE embed_queue SET not_before = NULL")  # skip the backoff wait
        # The index update after the commit is "lost" (as if the process died between the two).
        monkeypatch.setattr(VectorIndex, "add", lambda self, labels, vectors: None)
        embedded = EmbeddingWorker(memory.writer, memory.embedder, memory.vector_index()).run()
        monkeypatch.undo()
        assert embedded == _one(memory, "SELECT count(*) FROM events")
        chunks = _one(memory, "SELECT count(*) FROM chunks")
    with Memory(tmp_path / "data") as memory:  # the next load adds what the index lacks
        assert memory.vector_index().live_count == chunks
        assert memory.embed_pending() == 0
    for name in (INDEX_FILE, META_FILE):
        (tmp_path / "data" / name).unlink()
    with Memory(tmp_path / "data") as memory:  # a missing index is rebuilt from the store
        index = memory.vector_index()
        assert index.rebuilt and index.live_count == chunks
        assert memory.reindex() == chunks
    assert MAX_ATTEMPTS >= 3


def test_without_a_model_keyword_search_still_answers_and_says_why(fixtures_home: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        hits, meta = memory.search(own_fixtures.ECHO_WORD, EventFilters(), 3)  # hybrid asked for
        assert hits and meta["mode"] == "keyword" and meta["requested_mode"] == "hybrid"
        assert "CLAUDE_MEMORY_MODEL_PATH" in meta["degraded"]
        status = memory.embedding_status()
        assert status["available"] is False and status["pending"] == _one(memory, "SELECT count(*) FROM events")


def test_labels_of_forgotten_chunks_are_never_reused(
    embedded: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_memory.service import memory as memory_module

    monkeypatch.setattr(memory_module, "REBUILD_INDEX_AFTER_FORGET", 0)  # as if the index were huge
    with Memory(_copy(embedded, tmp_path)) as memory:
        top = _one(memory, "SELECT max(label) FROM chunks")
        newest = memory.con.execute(
            "SELECT session_id FROM chunks c JOIN events e ON e.id = c.event_id WHERE label = ?", [top]
        ).fetchone()
        assert newest is not None
        live = memory.vector_index().live_count
        memory.forget(ForgetSelector(session_id=newest[0]))
        index = memory.vector_index()
        assert not index.rebuilt and index.live_count < live  # marked deleted, not rebuilt
        home = tmp_path / "claude"
        (home / "projects" / "-x").mkdir(parents=True)
        line = {"type": "user", "uuid": "new-1", "sessionId": "new", "cwd": "/x", "timestamp": "2026-06-01T00:00:00Z",
                "message": {"role": "user", "content": "a brand new prompt about quokka migrations"}}  # fmt: skip
        (home / "projects" / "-x" / "new.jsonl").write_text(json.dumps(line) + "\n")
        memory.import_history(home, settle_seconds=0)
        assert memory.embed_pending() == 1
        new_label = _one(memory, "SELECT max(label) FROM chunks")
        assert new_label > top
        hits, _ = memory.search("quokka migration", EventFilters(), 3, mode="semantic")
        assert hits[0].event.text == "a brand new prompt about quokka migrations"


def _index_vectors(data: Path, labels: list[int]) -> np.ndarray:
    """The vectors hnswlib itself holds for ``labels`` (read from the saved index file)."""
    meta = json.loads((data / META_FILE).read_text())
    index = hnswlib.Index(space="cosine", dim=int(meta["dim"]))
    index.load_index(str(data / INDEX_FILE))
    return np.asarray(index.get_items(labels), dtype=np.float32)


def test_the_vector_copy_holds_what_the_index_holds_and_is_refilled_when_missing_or_short(
    embedded: Path, tmp_path: Path, model_dir: Path
) -> None:
    data = _copy(embedded, tmp_path)
    with Memory(data) as memory:
        labels = [int(r[0]) for r in memory.con.execute("SELECT label FROM chunks ORDER BY label").fetchall()]
        copied = memory.vector_index().vectors(np.asarray([*labels, max(labels) + 1, -1], dtype=np.int64))
    expected = _index_vectors(data, labels)
    assert np.abs(copied[:-2] - expected).max() < 3e-3  # int8 with a scale per row
    assert np.abs(np.einsum("ij,ij->i", copied[:-2], expected) - 1.0).max() < 2e-3  # cosines within 2e-3
    assert not copied[-2:].any()  # a label never added, and no label: zero rows
    # An index saved before the copy existed (no copy file, no "copied" in its meta) is not rebuilt: the copy
    # is filled from DuckDB.
    (data / COPY_FILE).unlink()
    meta = json.loads((data / META_FILE).read_text())
    (data / META_FILE).write_text(json.dumps({k: v for k, v in meta.items() if k != "copied"}))
    with Memory(data) as memory:
        index = memory.vector_index()
        assert not index.rebuilt
        assert np.array_equal(index.vectors(np.asarray(labels, dtype=np.int64)), copied[:-2])
    assert json.loads((data / META_FILE).read_text())["copied"] == max(labels)
    # A copy behind its meta (rows lost: the machine died before the page cache reached the disk) is refilled.
    row_bytes = expected.shape[1] + SCALE_BYTES
    with (data / COPY_FILE).open("r+b") as copy:
        copy.truncate(row_bytes * (max(labels) // 2))
    meta = json.loads((data / META_FILE).read_text())
    (data / META_FILE).write_text(json.dumps({**meta, "copied": max(labels) // 2 - 1}))
    with Memory(data) as memory:
        index = memory.vector_index()
        assert not index.rebuilt
        assert np.array_equal(index.vectors(np.asarray(labels, dtype=np.int64)), copied[:-2])
        hits, meta = memory.search("a migration plan", EventFilters(), 3, mode="hybrid")
        assert hits and "degraded" not in meta
        assert all(h.components is not None and h.components["cosine"] != 0.0 for h in hits)


def test_contextual_cosines_of_real_rows_match_the_definition_under_filters(
    embedded: Path, tmp_path: Path, model_dir: Path
) -> None:
    """similarities() on the event map's own facts, with a type filter, so that neighbours skip excluded events:
    each row's cosines recomputed from hnswlib's vectors and the facts' neighbours."""
    data = _copy(embedded, tmp_path)
    filters = EventFilters(types=("user_prompt", "tool_use"))
    with Memory(data) as memory:
        events = EventMap()
        events.refresh(memory.con)
        ids = [
            int(r[0])
            for r in memory.con.execute("SELECT id FROM events WHERE type IN ('user_prompt', 'tool_use')").fetchall()
        ]
        facts = events.facts(ids, filters)
        query = memory.embedder.embed(["format the elixir code"])[0]
        found = similarities(memory.vector_index(), events, facts, query, 0.35)
        chunks: dict[int, list[int]] = {}
        for label, event_id in memory.con.execute(
            "SELECT label, event_id FROM chunks ORDER BY event_id, chunk_no"
        ).fetchall():
            chunks.setdefault(int(event_id), []).append(int(label))
    labels = sorted(label for group in chunks.values() for label in group)
    held = dict(zip(labels, _index_vectors(data, labels).astype(np.float64), strict=True))
    positions = events.positions(facts.ids)
    skipped = [r for r, p in enumerate(facts.prev) if p >= 0 and positions[r] - positions[p] > 1]
    assert skipped, "no row's neighbour skips an excluded event: the filter path is not exercised"

    def unit(v: np.ndarray) -> np.ndarray:
        return v / np.linalg.norm(v)

    own = [unit(sum(held[label] for label in chunks[int(i)])) for i in facts.ids]
    q = unit(query.astype(np.float64))
    for r, event_id in enumerate(facts.ids.tolist()):
        around = sum((own[side] for side in (facts.prev[r], facts.next[r]) if side >= 0), np.zeros(len(q)))
        vectors = [held[label] for label in chunks[event_id]]
        assert abs(found.cosine[r] - max(v @ q for v in vectors)) < 3e-3
        assert abs(found.context[r] - max(unit(v + 0.35 * around) @ q for v in vectors)) < 3e-3


def test_rows_written_after_the_last_save_are_dropped_and_an_interrupted_rebuild_is_redone(
    embedded: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _copy(embedded, tmp_path)
    meta = json.loads((data / META_FILE).read_text())
    width = int(meta["dim"]) + SCALE_BYTES
    saved = (data / COPY_FILE).stat().st_size
    assert saved >= (meta["copied"] + 1) * width
    # A row the process wrote past the saved extent before it died (say of a chunk it then forgot):
    with (data / COPY_FILE).open("ab") as copy:
        copy.truncate(max(saved, (meta["copied"] + 1) * width) + width)
    with (data / COPY_FILE).open("r+b") as copy:
        copy.seek((meta["copied"] + 1) * width)
        copy.write(b"\x7f" * width)
    with Memory(data) as memory:
        assert not memory.vector_index().rebuilt
    assert (data / COPY_FILE).stat().st_size == (meta["copied"] + 1) * width
    # A rebuild that dies before it saves leaves no meta behind, so the next load rebuilds again.
    with Memory(data) as memory:
        index = memory.vector_index()
        monkeypatch.setattr(VectorIndex, "save", lambda self: (_ for _ in ()).throw(OSError("disk full")))
        with pytest.raises(OSError):
            index.rebuild(memory.con)
        monkeypatch.undo()
    assert not (data / META_FILE).exists()
    with Memory(data) as memory:
        index = memory.vector_index()
        assert index.rebuilt and index.live_count == _one(memory, "SELECT count(*) FROM chunks")


def test_when_scoring_by_stored_vectors_fails_the_index_cosines_still_rank(
    embedded: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_memory.service import search as search_module

    def broken(*_: object) -> None:
        raise OSError("the vector copy is unreadable")

    with Memory(_copy(embedded, tmp_path)) as memory:
        good, meta = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="hybrid")
        assert good and "degraded" not in meta
        monkeypatch.setattr(search_module, "similarities", broken)
        hits, meta = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="hybrid")
    assert hits and meta["mode"] == "hybrid"
    assert meta["degraded"] == "Scoring by stored vectors failed (OSError); the index's cosines were used."
    assert any(h.components is not None and h.components["semantic"] > 0 for h in hits)  # k-NN cosines


@pytest.mark.parametrize("part", ["embed_query", "semantic_candidates"])
def test_when_the_model_or_the_index_fails_during_a_search_keyword_results_still_answer(
    embedded: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch, part: str
) -> None:
    """The query embedding runs on the search's worker thread beside BM25, the k-NN search after it: a failure of
    either reaches the caller as one sentence."""
    from claude_memory.service import search as search_module

    def broken(*_: object) -> None:
        raise RuntimeError("the part broke")

    with Memory(_copy(embedded, tmp_path)) as memory:
        monkeypatch.setattr(search_module, part, broken)
        hits, meta = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="hybrid")
        monkeypatch.undo()
        again, healthy = memory.search("output a salutation", EventFilters(project=WORK), 5, mode="hybrid")
    assert hits and meta["mode"] == "keyword"
    assert meta["degraded"] == "Semantic search failed (RuntimeError); keyword results only."
    assert all(h.components is not None and h.components["semantic"] == 0 for h in hits)
    assert again and healthy["mode"] == "hybrid" and "degraded" not in healthy


def test_a_filter_that_admits_few_chunks_is_searched_exhaustively_and_a_wide_one_asks_the_index_for_more(
    embedded: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each project's semantic candidates are its own events' best chunks by exact cosine, whether every admitted
    chunk is scored (few admitted) or the index is asked for enough chunks to cover the share the filter admits.
    The old k-NN search took a fixed number of chunks from the whole store, so a small project got back only
    those of its own that happened to be among them."""
    data = _copy(embedded, tmp_path)
    with Memory(data) as memory:
        events = EventMap()
        events.refresh(memory.con)
        index = memory.vector_index()
        query = memory.embedder.embed(["format the code before committing"])[0]
        rows = memory.con.execute("SELECT c.label, e.id, e.project FROM chunks c JOIN events e ON e.id = c.event_id")
        owners = {int(label): (int(event), project) for label, event, project in rows.fetchall()}
        labels = np.asarray(sorted(owners), dtype=np.int64)
        vectors = _index_vectors(data, labels.tolist()).astype(np.float64)
        exact = dict(zip(labels.tolist(), vectors @ query, strict=True))
        for project in own_fixtures.PROJECTS:
            best: dict[int, float] = {}
            for label, (event, owner) in owners.items():
                if owner == project:
                    best[event] = max(best.get(event, -1.0), exact[label])
            expected = sorted(best.values(), reverse=True)[:5]  # the vector copy's cosines are within 2e-3
            filters = EventFilters(project=project)
            exhaustive = semantic_candidates(index, events, query, filters, 5)
            assert all(abs(s - best[e]) < 3e-3 for e, s in exhaustive), project
            assert np.allclose(sorted((best[e] for e, _ in exhaustive), reverse=True), expected, atol=3e-3), project
            with monkeypatch.context() as patch:
                patch.setattr(semantic, "EXACT_CHUNKS", 0)  # as if the project were too large to score every chunk
                found = semantic_candidates(index, events, query, filters, 5)
            assert np.allclose([best[e] for e, _ in found], expected, atol=1e-5), project


def _exact_top(memory: Memory, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels of the ``k`` chunks nearest to ``query`` by cosine over every stored vector, and every cosine."""
    index = memory.vector_index()
    labels = np.arange(index.max_label + 1, dtype=np.int64)
    vector = memory.embedder.embed([query])[0]
    cosines = index.cosines(labels, vector / np.linalg.norm(vector))
    return labels[np.argsort(-cosines, kind="stable")[:k]], cosines


QUERIES = ("output a salutation", "which files were edited", "run the test suite", "an error in the build")


@pytest.fixture
def small_projection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Projection from 50 vectors on, onto 32 directions: the fixtures hold ~90 chunks."""
    monkeypatch.setattr(vector_index, "PROJECT_FROM", 50)
    monkeypatch.setattr(vector_index, "PROJECTED_DIM", 32)


def test_a_large_index_is_held_projected_finds_what_exact_search_finds_and_survives_a_reopen(
    embedded: Path, tmp_path: Path, model_dir: Path, small_projection: None
) -> None:
    data = _copy(embedded, tmp_path)
    full_size = (data / INDEX_FILE).stat().st_size
    with Memory(data) as memory:
        index = memory.vector_index()
        assert not index.projected  # an index saved whole stays whole until a refit or a rebuild
        live = index.live_count
        assert live >= 50 and memory.reindex() == live
        assert index.projected and index.fitted_at == live and index.dim == 384
        for query in QUERIES:
            exact, cosines = _exact_top(memory, query, 10)
            labels, scores = index.search(memory.embedder.embed([query])[0], 10)
            assert set(labels) == set(exact), query  # 50 candidates of ~90, scored again in every dimension
            assert np.allclose(scores, cosines[labels]) and (np.diff(scores) <= 0).all()
        hits, _ = memory.search("output a salutation", EventFilters(), 5, mode="semantic")
        assert "print a greeting" in hits[0].event.text.lower()
    meta = json.loads((data / META_FILE).read_text())
    assert meta["dim"] == vector_index.PROJECTED_DIM and meta["basis"]["fitted_at"] == live
    assert (data / BASIS_FILE).stat().st_size == 384 * vector_index.PROJECTED_DIM * 4
    assert (data / INDEX_FILE).stat().st_size < 0.5 * full_size
    with Memory(data) as memory:  # loaded as saved: projected, not rebuilt
        index = memory.vector_index()
        assert index.projected and not index.rebuilt
        found, _ = index.search(memory.embedder.embed([QUERIES[0]])[0], 10)
        assert set(found) == set(_exact_top(memory, QUERIES[0], 10)[0])
    (data / BASIS_FILE).write_bytes(b"\0" * (data / BASIS_FILE).stat().st_size)  # not the basis it was built with
    with Memory(data) as memory:
        index = memory.vector_index()
        assert index.rebuilt and index.projected and index.live_count == live


def _no_store_reads(*args: object, **kwargs: object) -> None:
    raise AssertionError("a refit read the vectors from DuckDB")


def test_the_embedding_worker_projects_a_growing_index_once_it_is_large_and_again_when_it_has_doubled(
    embedded: Path, tmp_path: Path, model_dir: Path, small_projection: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _copy(embedded, tmp_path)
    with Memory(data) as memory:
        index = memory.vector_index()
        live = index.live_count
        index.project_from = live + 1
        assert memory.embed_pending() == 0 and not index.projected  # below the threshold: whole
        index.project_from = live
        assert memory.embed_pending() == 0 and index.projected and index.fitted_at == live  # the worker refitted it
        assert not index.refit_if_due(memory.con)  # not doubled since
        index.project_from = 50
        session = own_fixtures.GREETING
        memory.forget(ForgetSelector(session_id=session))  # a forget on a projected index (small: rebuilt)
        assert index.rebuilt and index.projected and index.fitted_at == index.live_count < live
        hits, _ = memory.search("output a salutation", EventFilters(session_id=session), 5, mode="semantic")
        assert hits == []
        index.fitted_at = index.live_count // 2  # as if the store had doubled since the fit
        with monkeypatch.context() as patched:  # built from the vector copy alone, DuckDB not read
            patched.setattr(vector_index, "_stored", _no_store_reads)
            refit = index.build_refit()
        assert refit is not None and refit.index.get_current_count() == index.live_count  # (the forgotten left out)
        assert index.adopt(refit, memory.con) and index.fitted_at == index.live_count and not index.refit_due()
        for query in QUERIES:
            found, _ = index.search(memory.embedder.embed([query])[0], 10)
            assert set(found) == set(_exact_top(memory, query, 10)[0]), query
        monkeypatch.setattr(vector_index, "PROJECTED_DIM", 24)  # a version that projects onto fewer directions:
        assert not index.refit_due()  # the basis it has serves until the store has doubled ...
        index.fitted_at = index.live_count // 2
        assert index.refit_if_due(memory.con) and not index.refit_due()  # ... and the next refit has the new count
    assert json.loads((data / META_FILE).read_text())["dim"] == 24
    with Memory(data) as memory:
        assert memory.vector_index().projected and not memory.vector_index().rebuilt
        assert memory.vector_index().search(memory.embedder.embed([QUERIES[0]])[0], 10)[0].size == 10


def test_the_service_refits_on_a_thread_of_its_own_and_adopts_what_was_added_meanwhile_but_not_a_forget(
    embedded: Path, fixtures_home: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch,
    small_projection: None, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    with Memory(_copy(embedded, tmp_path)) as memory:
        index = memory.vector_index()
        work = quiet_idle_work(memory)
        gate = threading.Event()  # holds the build once it has read the store, before it adds what it read
        add_to = vector_index._add_to

        def held(index: object, vectors: np.ndarray, labels: np.ndarray, threads: int = -1) -> None:
            if threads == 1:  # (the service's build; adopt and add use every core)
                assert gate.wait(60)
            add_to(index, vectors, labels, threads)

        monkeypatch.setattr(vector_index, "_add_to", held)

        def refitted() -> bool:
            for _ in range(600):
                work.step()
                if work._refit is None:
                    return index.projected
                time.sleep(0.05)
            raise AssertionError("the refit did not finish")

        def building() -> bool:  # (a step that writes DuckDB's log into the file first starts it at the next)
            for _ in range(3):
                work.step()
                if work._refit is not None:
                    return True
            return False

        assert building() and not index.refit_due()  # building (held at the gate); one at a time
        assert index.build_refit() is None
        # Meanwhile (after the build read the store) a new prompt is stored and embedded into the index in use ...
        line = {"type": "user", "uuid": "new-1", "sessionId": "new", "cwd": "/x", "timestamp": "2026-06-01T00:00:00Z",
                "message": {"role": "user", "content": "a brand new prompt about quokka migrations"}}  # fmt: skip
        home = tmp_path / "home"
        shutil.copytree(fixtures_home, home)
        (home / "projects" / "-x").mkdir(parents=True, exist_ok=True)
        (home / "projects" / "-x" / "new.jsonl").write_text(json.dumps(line) + "\n")
        memory.import_history(home, settle_seconds=0)
        assert EmbeddingWorker(memory.writer, memory.embedder, index).run() == 1
        gate.set()
        assert refitted() and index.live_count == _one(memory, "SELECT count(*) FROM chunks")  # ... and adopted
        hits, _ = memory.search("quokka migration", EventFilters(), 3, mode="semantic")
        assert hits[0].event.text == "a brand new prompt about quokka migrations"
        # A forget while one is built: the new index is not adopted (it would keep the forgotten vector's bytes).
        gate.clear()
        index.fitted_at = index.live_count // 2  # due again
        monkeypatch.setattr(memory_module, "REBUILD_INDEX_AFTER_FORGET", 0)  # (a small index is rebuilt at once)
        assert building()
        fitted = index.fitted_at
        session = own_fixtures.GREETING
        memory.forget(ForgetSelector(session_id=session))
        gate.set()
        # The index in use stayed: adopt refused the new one (the build, reading the vector copy, went on to the end).
        assert refitted() and index.fitted_at == fitted
        assert "could not be rebuilt" not in caplog.text
        hits, _ = memory.search("output a salutation", EventFilters(session_id=session), 5, mode="semantic")
        assert hits == []
        assert work._refit_after > time.monotonic()  # and a new try waits


def test_searches_read_the_vector_copy_without_mapping_it(embedded: Path, tmp_path: Path) -> None:
    """Mapped, the copy's pages counted in the process's memory as searches read them, and a search's scattered rows
    brought in all of it at once (store/vector_copy.py)."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        pytest.skip("this system has no /proc/self/maps to look at")
    data = _copy(embedded, tmp_path)
    with Memory(data) as memory:
        hits, meta = memory.search("output a salutation", EventFilters(), 5, mode="hybrid")
        assert hits and meta["mode"] == "hybrid" and not meta.get("degraded")
        assert memory.vector_index().vectors(np.arange(3, dtype=np.int64)).any()  # (the copy is there, and read)
        assert str((data / COPY_FILE).resolve()) not in maps.read_text()


def test_warm_up_loads_the_model_the_index_and_the_postings_one_after_another(embedded: Path, tmp_path: Path) -> None:
    """What the service does first (service/server.py): after it, a search finds everything loaded."""
    with Memory(_copy(embedded, tmp_path)) as memory:
        memory.warm_up()
        assert memory.embedder._model is not None and memory._index is not None
        assert memory._postings.loads == 1 and memory.vector_index().live_count == _one(
            memory, "SELECT count(*) FROM chunks"
        )
        hits, meta = memory.search("output a salutation", EventFilters(), 3, mode="hybrid")
        assert meta["mode"] == "hybrid" and hits
        assert memory._postings.loads == 1  # nothing loaded again


def test_the_service_saves_the_index_once_quiet_not_each_time_the_embedding_queue_empties(
    embedded: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a million events a save writes ~1 GB: the prompt after a turn should not wait for it. A crash before the
    save loses nothing (the next load adds what the store holds past the saved index)."""
    saves: list[int] = []
    save = VectorIndex.save

    def counted(index: VectorIndex) -> None:
        saves.append(index.live_count)
        save(index)

    monkeypatch.setattr(VectorIndex, "save", counted)
    home = tmp_path / "claude"
    folder = home / "projects" / "-nonexistent-save"
    folder.mkdir(parents=True)
    said = {"role": "user", "content": "tune the hnsw save cadence"}
    line = {"type": "user", "uuid": "s1", "sessionId": "save-1", "timestamp": "2026-06-01T08:00:00.000Z",
            "cwd": "/nonexistent/save", "message": said}  # fmt: skip
    (folder / "save-1.jsonl").write_text(json.dumps(line) + "\n")
    with Memory(_copy(embedded, tmp_path)) as memory:
        live = memory.vector_index().live_count
        work = quiet_idle_work(memory)
        memory.import_history(home, settle_seconds=0)
        work.events_added()
        for _ in range(20):  # a busy service: a request a moment ago
            work._worker.last_request = time.monotonic()
            work.step()
        assert memory.vector_index().live_count > live
        assert not queue_status(memory.con, memory.vector_index()).pending
        assert saves == []  # embedded, the queue empty, not saved
        work._worker.last_request = time.monotonic() - 10  # quiet, but not for long
        work.step()
        assert saves == []
        work._worker.last_request = time.monotonic() - 31
        work.step()
        assert saves == [memory.vector_index().live_count]
    with Memory(tmp_path / "data") as again:  # what was saved is what is loaded, nothing rebuilt
        assert again.vector_index().live_count == saves[0] and not again.vector_index().rebuilt
