"""Citations in a real store: unique, persistent, never reused after forget, backfilled for old rows."""

from __future__ import annotations

from pathlib import Path

from claude_memory.core import citations
from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.service.memory import Memory
from claude_memory.store.citations import allocate_citations, assign_missing
from support.own_fixtures import ECHO_WORD


def test_every_event_gets_a_unique_citation_that_resolves(fixtures_home: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        rows = memory.con.execute("SELECT id, citation FROM events").fetchall()
        assert rows and all(c for _, c in rows)
        assert len({c for _, c in rows}) == len(rows)
        event_id, citation = rows[0]
        assert citation == citations.candidate(event_id)  # first choice unless it collided
        found = memory.details(f"[mem:{citation}]")
        assert found is not None
        shown = found.to_json()
        assert shown["id"] == event_id and shown["citation"] == f"mem:{citation}"
        assert shown["citation_uses"] == 1
        assert getattr(memory.details(f"mem:{citation}"), "citation_uses", None) == 2
        assert any(n["is_target"] for n in shown["neighbours"])
        assert memory.resolve(str(event_id)) is not None


def test_collisions_move_on_and_forgotten_citations_stay_reserved(fixtures_home: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        (victim_id, victim_cit), (other_id, _) = memory.con.execute(
            "SELECT id, citation FROM events ORDER BY seq LIMIT 2"
        ).fetchall()
        # a new id whose first candidate is taken gets its next attempt
        held = citations.candidate(victim_id)
        assert allocate_citations(memory.con, [victim_id]) == [citations.candidate(victim_id, 1)]
        # two new ids wanting the same candidate within one call: the second moves on
        twice = allocate_citations(memory.con, [10**12, 10**12])
        assert twice[0] != twice[1]
        memory.forget(ForgetSelector(event_ids=(victim_id,)))
        assert memory.resolve(f"mem:{victim_cit}") is None
        # the forgotten citation is still reserved: the same first candidate cannot be handed out again
        assert allocate_citations(memory.con, [victim_id])[0] != held
        assert memory.resolve(str(other_id)) is not None


def test_events_stored_before_citations_existed_are_backfilled(fixtures_home: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        before = dict(memory.con.execute("SELECT id, citation FROM events").fetchall())
        memory.con.execute("UPDATE events SET citation = NULL WHERE seq % 2 = 0")
        cleared = memory.con.execute("SELECT count(*) FROM events WHERE citation IS NULL").fetchone()
        assert cleared is not None and cleared[0] > 0
        assert assign_missing(memory.con) == cleared[0]
        after = dict(memory.con.execute("SELECT id, citation FROM events").fetchall())
        assert all(after.values()) and len(set(after.values())) == len(after)
        assert after == before  # the same deterministic choice as at import
        hits, _ = memory.search(ECHO_WORD, EventFilters(), 1)
        assert hits[0].to_json()["citation"] == f"mem:{after[hits[0].event.id]}"
