"""BM25 over the real store: fresh events are searchable at once, and merging the delta changes nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

from claude_memory.core.filters import EventFilters
from claude_memory.service.memory import Memory
from claude_memory.service.projects import git_root_or_self
from claude_memory.store import keyword, queries
from support.idle_work import quiet_idle_work


def _prompt(uuid: str, text: str, cwd: str = "/nonexistent/kw") -> str:
    line = {
        "type": "user",
        "uuid": uuid,
        "sessionId": "kw-1",
        "timestamp": "2026-06-01T08:00:00.000Z",
        "cwd": cwd,
        "message": {"role": "user", "content": text},
    }
    return json.dumps(line) + "\n"


def _transcript(tmp_path: Path) -> tuple[Path, Path]:
    """A Claude home with one transcript of one prompt: (home, transcript)."""
    home = tmp_path / "claude"
    folder = home / "projects" / "-nonexistent-kw"
    folder.mkdir(parents=True)
    transcript = folder / "kw-1.jsonl"
    transcript.write_text(_prompt("k1", "configure the gizmoflux cache eviction"))
    return home, transcript


def test_appended_lines_are_searchable_after_the_next_import_without_a_rebuild(tmp_path: Path) -> None:
    home, transcript = _transcript(tmp_path)
    with Memory(tmp_path / "data") as memory:
        memory.import_history(home, settle_seconds=0)
        assert [h.event.text for h in memory.search("gizmoflux", EventFilters(), 5)[0]]
        with transcript.open("a") as fh:
            fh.write(_prompt("k2", "the quaxelbrot migration failed twice"))
        report = memory.import_history(home, settle_seconds=0)
        assert report.events_new == 1
        assert keyword.delta_rows(memory.con) > 0  # still unmerged: searchable from the delta
        (hit, *follow_ups), meta = memory.search("quaxelbrot migrations", EventFilters(), 5)
        assert hit.event.text == "the quaxelbrot migration failed twice"
        assert all("quaxelbrot" not in h.event.text for h in follow_ups)
        assert meta["terms"] == ["quaxelbrot", "migrat"]


def test_a_quiet_service_reads_new_events_into_search_so_that_the_next_search_does_not(tmp_path: Path) -> None:
    """New events must be brought into the search's views (~0.3 s at a million events, a read of the whole map then
    before it merged them): a service does it in its first quiet idle step, not in the search of the prompt after a
    turn; a busy one leaves it."""
    home, transcript = _transcript(tmp_path)
    with Memory(tmp_path / "data") as memory:
        work = quiet_idle_work(memory)
        assert not memory.level_search()  # nothing to bring level before this process's first search
        memory.import_history(home, settle_seconds=0)
        memory.search("gizmoflux", EventFilters(project="/nonexistent/kw"), 5)
        assert not memory.level_search()
        with transcript.open("a") as fh:
            fh.write(_prompt("k2", "the quaxelbrot migration failed twice"))
        assert memory.import_history(home, settle_seconds=0).events_new == 1
        work._worker.last_request = time.monotonic()  # busy: a request just came
        work.step()
        behind = memory._events.generation
        assert behind is not None and behind != queries.generation(memory.con)
        work._worker.last_request = 0.0  # quiet
        while work.step():
            pass
        assert memory._events.generation == queries.generation(memory.con)
        layout = memory._events.layout
        (hit, *_), _ = memory.search("quaxelbrot", EventFilters(project="/nonexistent/kw"), 5)
        assert hit.event.text == "the quaxelbrot migration failed twice"
        assert memory._events.layout == layout  # the search did not read the map again


def test_merge_keeps_scores_and_order(fixtures_home: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        queries = ["ruff format", "echo hello", "container image build", "apply discount cart", "recent sessions"]
        before = {
            q: [(h.event.id, round(h.score, 9)) for h in memory.search(q, EventFilters(), 10)[0]] for q in queries
        }
        memory.writer.merge_keyword_index(force=True)
        assert keyword.delta_rows(memory.con) == 0
        after = {q: [(h.event.id, round(h.score, 9)) for h in memory.search(q, EventFilters(), 10)[0]] for q in queries}
        assert before == after and all(before.values())


def test_bm25_prefers_rarer_terms_and_filters_apply(tmp_path: Path) -> None:
    home = tmp_path / "claude"
    folder = home / "projects" / "-nonexistent-kw"
    folder.mkdir(parents=True)
    lines = [_prompt(f"c{i}", f"common words about the build number {i}") for i in range(20)]
    lines.append(_prompt("r1", "common words about the zorblatt build"))
    lines.append(_prompt("o1", "zorblatt in another project", cwd="/nonexistent/other"))
    (folder / "kw-1.jsonl").write_text("".join(lines))
    with Memory(tmp_path / "data") as memory:
        memory.import_history(home, settle_seconds=0)
        hits, _ = memory.search("zorblatt build", EventFilters(), 5)
        # the rare term outweighs the common one: both zorblatt events come before any plain "build"
        assert {h.event.text for h in hits[:2]} == {
            "common words about the zorblatt build",
            "zorblatt in another project",
        }
        assert all("number" in h.event.text for h in hits[2:]) and len(hits) == 5
        scoped, _ = memory.search("zorblatt", EventFilters(project="/nonexistent/other"), 5)
        assert [h.event.text for h in scoped] == ["zorblatt in another project"]
        none, meta = memory.search("the and of", EventFilters(), 5)
        assert none == [] and meta["note"] == "The query has no searchable words."


def test_project_is_the_git_root_when_the_path_exists(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    assert git_root_or_self(str(repo / "src" / "pkg")) == str(repo)
    assert git_root_or_self(str(tmp_path / "no-such-dir")) == str(tmp_path / "no-such-dir")
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_root_or_self(str(plain)).startswith(str(tmp_path))
