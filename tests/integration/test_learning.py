"""A memory that learns, on real stores: access metrics that every hook process counts (50 at once) and that survive a
restart, graduation with its cooldown, levels in details and stats, preferences given at SessionStart, marks that a
rebuild keeps, a forget that takes an insight's evidence with it, and near-duplicates folded in what is injected."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from claude_memory.client.connection import ServiceClient
from claude_memory.core import insights as core_insights
from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.service import idle
from claude_memory.service import insights as service_insights
from claude_memory.service.capture import HookPayload
from claude_memory.service.memory import Memory
from claude_memory.service.recall import ContextParams, Recaller
from claude_memory.store import insights as insight_store
from claude_memory.store.db import utc_now
from claude_memory.store.learning import Use
from support import service_proc
from support.idle_work import quiet_idle_work
from support.own_fixtures import ECHO_WORD as ECHO
from support.own_fixtures import WORK
from support.waiting import wait_for

CITED = re.compile(r"mem:[A-Za-z0-9]{6}")
SHOP = "/nonexistent/shop"


@pytest.fixture()
def claude_home(tmp_path: Path, fixtures_home: Path) -> Path:
    home = tmp_path / "claude"
    shutil.copytree(fixtures_home / "projects", home / "projects")
    return home


def test_fifty_hook_processes_count_every_injected_memory_exactly_and_the_counts_survive_a_restart(
    tmp_path: Path, claude_home: Path
) -> None:
    data = tmp_path / "data"
    proc = service_proc.serve(data, claude_home)
    client = ServiceClient(data, timeout=30)
    try:
        ask = {"query": ECHO, "mode": "keyword", "project": WORK}
        wait_for(lambda: len(client.call("search", ask)["results"]) >= 3, what="the import")
        hooks = [
            service_proc.hook(
                data,
                claude_home,
                "UserPromptSubmit",
                {
                    "hook_event_name": "UserPromptSubmit",
                    "session_id": f"asker-{i:02d}",
                    "cwd": WORK,
                    "prompt": f"what did the {ECHO} echo print",
                },
            )
            for i in range(50)
        ]
        assert [h.wait(timeout=120) for h in hooks] == [0] * 50
        outputs = [h.stdout.read() if h.stdout else b"" for h in hooks]
    finally:
        client.close()
        service_proc.stop(data)  # (the service counts the injected memories as used when it stops, at the latest)
        proc.wait(timeout=60)
    injected: dict[str, int] = {}
    answered = [out for out in outputs if out]  # (on 2 cores, a hook may give up waiting: it prints nothing)
    for out in answered:
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        for citation in set(CITED.findall(context)):
            injected[citation] = injected.get(citation, 0) + 1
    assert len(answered) >= 25 and max(injected.values()) == len(answered)  # each answer had the best memory
    with Memory(data) as memory:  # a new process: what the hooks counted is in the store
        rows = memory.con.execute(
            "SELECT 'mem:' || citation, count(*), count(DISTINCT session_id) FROM citation_uses WHERE via = 'hook' "
            "GROUP BY citation"
        ).fetchall()
        assert {c: n for c, n, _ in rows} == injected
        assert all(sessions == n for _, n, sessions in rows)  # one use per asking session
        done = memory.graduation.run()
        assert done["graduated"] >= 1 and done["by_level"] == {"L0": done["graduated"]}
        # the memories every answer had (several tie: six are injected a prompt); those that met the promotion rule
        # (it asks for confidence too) are at L1, with every hook's use and this details call counted
        every = [memory.details(c) for c, n in injected.items() if n == len(answered)]
        graduated = [d for d in every if d is not None and d.level == 1]
        assert graduated and all(d.citation_uses == len(answered) + 1 for d in graduated)


@pytest.fixture()
def store(tmp_path: Path, fixtures_home: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        yield memory


def test_graduation_climbs_one_level_a_pass_waits_out_its_cooldown_and_forget_takes_the_level(store: Memory) -> None:
    memory = store
    event = memory.history(EventFilters(project=WORK), 1)[0]
    assert event.citation is not None
    memory.writer.record_uses([Use(event.citation, "hook", f"s{i}", 0.95) for i in range(12)])
    assert memory.graduation.run()["by_level"] == {"L0": 1}
    assert memory.graduation.run()["evaluated"] == 0  # evaluated within the hour: it waits
    for expected in ("L1", "L2", "L3"):
        later = utc_now() + timedelta(hours=2)
        memory.writer.record_uses([Use(event.citation, "cli", None, 1.0)])  # (its last access stays recent)
        assert memory.graduation.run(now=later, cooldown=False)["by_level"] == {expected: 1}
    levels = memory.stats()["graduation"]["levels"]
    assert levels["L4"] == 1 and sum(levels.values()) == memory.stats()["events"]
    assert memory.graduation.run(cooldown=False)["graduated"] == 0  # L4 is terminal
    memory.forget(ForgetSelector(event_ids=(event.id,)))
    assert memory.stats()["graduation"]["levels"]["L4"] == 0


def _prompts(path: Path, items: list[tuple[str, str, str]]) -> None:
    """A transcript of user prompts: (session, timestamp, text)."""
    lines = [
        json.dumps(
            {
                "type": "user",
                "uuid": f"u{n}",
                "sessionId": session,
                "timestamp": ts,
                "cwd": SHOP,
                "message": {"role": "user", "content": text},
            }
        )
        for n, (session, ts, text) in enumerate(items)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture()
def shop(tmp_path: Path) -> Iterator[Memory]:
    home = tmp_path / "shop-home"
    _prompts(home / "projects" / "-nonexistent-shop" / "a.jsonl", [
        ("s1", "2026-05-01T10:00:00Z", "always use pnpm in this repo, never npm"),
        ("s1", "2026-05-01T10:05:00Z", "fix the cart total rounding bug"),
        ("s2", "2026-05-02T10:00:00Z", "pnpm only please. you ran npm install again"),
        ("s2", "2026-05-02T11:00:00Z", "never push to main without running the tests"),
        ("s3", "2026-05-03T10:00:00Z", "I never thought of that, nice"),
        ("s3", "2026-05-03T10:10:00Z", "why does the rounding test always fail on CI?"),
        ("s4", "2026-05-04T10:00:00Z", "we use conventional commits here. that's how we work"),
    ])  # fmt: skip
    with Memory(tmp_path / "data") as memory:
        memory.import_history(home, settle_seconds=0)
        yield memory


def _session_start(memory: Memory, session: str = "new-session") -> dict[str, object]:
    payload = HookPayload.model_validate({"hook_event_name": "SessionStart", "session_id": session, "cwd": SHOP})
    return Recaller(memory).context(ContextParams(payload=payload))


def test_preferences_stated_in_earlier_sessions_open_the_next_one_cited_and_short(shop: Memory) -> None:
    memory = shop
    found = memory.insights.listing(SHOP)["preferences"]
    texts = [p["text"] for p in found]
    assert len(found) == 3 and not any("thought" in t or "rounding" in t for t in texts)  # no look-alikes
    pnpm = next(p for p in found if "pnpm" in p["text"])
    assert pnpm["count"] == 2 and pnpm["scope"] == SHOP and len(pnpm["evidence"]) == 2
    context = str(_session_start(memory)["additional_context"])
    after = context.split("Your preferences for this project")[1].splitlines(keepends=True)
    section = after[0] + "".join(line for line in after[1:] if line.startswith("- ") and "] 2026-" not in line)
    assert len(section) <= 600 and "always use pnpm in this repo" in section and "(stated 2 times)" in section
    assert "never push to main" in section  # stated once, but with "never"
    assert set(CITED.findall(section)) <= {e["citation"] for p in found for e in p["evidence"]}


def test_marks_survive_a_rebuild_and_a_forgotten_source_takes_its_evidence_away(shop: Memory) -> None:
    memory = shop
    found = memory.insights.listing(SHOP)["preferences"]
    push = next(p for p in found if "push" in p["text"])
    pnpm = next(p for p in found if "pnpm" in p["text"])
    memory.insights.mark(push["id"], "forget")
    memory.insights.mark(pnpm["evidence"][1]["citation"], "pin")  # by the citation of one of its statements
    assert memory.insights.rebuild() == 7
    listed = memory.insights.listing(SHOP)["preferences"]
    assert listed[0]["id"] == pnpm["id"] and push["id"] not in {p["id"] for p in listed}
    opening = str(_session_start(memory)["additional_context"])
    prefs = opening.split("Your preferences for this project")[1].split("Recent memories")[0]
    assert "pnpm" in prefs and "never push" not in prefs  # (it may still be among the recent prompts)
    # forget the first pnpm statement: the preference is derived again from the other one
    first = memory.resolve(pnpm["evidence"][0]["citation"])
    assert first is not None
    memory.forget(ForgetSelector(event_ids=(first.id,)))
    again = next(p for p in memory.insights.listing(SHOP)["preferences"] if "pnpm" in p["text"])
    assert again["count"] == 1 and again["evidence"][0]["citation"] == pnpm["evidence"][1]["citation"]


def test_prompts_read_by_an_older_extractor_are_read_again(shop: Memory) -> None:
    memory = shop
    before = memory.insights.listing(SHOP)["preferences"]
    older = "UPDATE projection_offsets SET name = 'insights' WHERE starts_with(name, 'insights:')"
    # as a store read before the extractor had versions (its offset is plain "insights"): the idle step reads it
    # again a few prompts at a time, and what the older reading found serves meanwhile
    memory.con.execute(older)
    assert memory.insights.refresh(most=2) == 2
    assert len(memory.insights.preferences()) == len(before)
    # here the older extractor found nothing: everything it left is replaced
    memory.con.execute(older)
    memory.con.execute("UPDATE prompt_insights SET rules = NULL")
    again = memory.insights.listing(SHOP)["preferences"]
    assert [p["text"] for p in again] == [p["text"] for p in before] and len(again) == 3
    names = [r[0] for r in memory.con.execute("SELECT name FROM projection_offsets").fetchall()]
    assert "insights" not in names and sum(n.startswith("insights:") for n in names) == 1


def test_the_idle_step_reads_a_backlog_of_prompts_a_few_at_a_time(
    shop: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = shop
    memory.con.execute("UPDATE projection_offsets SET name = 'insights' WHERE starts_with(name, 'insights:')")
    monkeypatch.setattr(idle, "IDLE_PROMPTS", 3)
    work = quiet_idle_work(memory)
    read = []
    for _ in range(5):
        before = insight_store.offset(memory.con)
        work.step()
        read.append(memory.con.execute(
            "SELECT count(*) FROM events WHERE type = 'user_prompt' AND seq > ? AND seq <= ?",
            [before, insight_store.offset(memory.con)],
        ).fetchone()[0])  # fmt: skip
    assert read == [3, 3, 1, 0, 0] and not work.tasks_due  # 7 prompts, then caught up
    assert len(memory.insights.preferences()) == 3


def _stated(memory: Memory) -> list[tuple[str, int]]:
    return [(p["text"], p["count"]) for p in memory.insights.listing(SHOP)["preferences"]]


def test_the_idle_step_reads_prompts_for_no_longer_than_its_time_allows(
    shop: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = shop
    before = _stated(memory)
    memory.con.execute("UPDATE projection_offsets SET name = 'insights' WHERE starts_with(name, 'insights:')")
    monkeypatch.setattr(idle, "IDLE_PROMPT_SECONDS", -1.0)  # its time is up at once: one prompt per step
    work = quiet_idle_work(memory)
    offsets = []
    for _ in range(8):
        work.step()
        offsets.append(insight_store.offset(memory.con))
    seqs = memory.con.execute("SELECT seq FROM events WHERE type = 'user_prompt' ORDER BY seq").fetchall()
    prompts = [r[0] for r in seqs]
    assert len(prompts) == 7 and offsets == [*prompts, prompts[-1]]
    assert _stated(memory) == before


def test_prompts_are_read_past_stretches_without_one(shop: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    # each read looks through the next seqs only (SPAN per prompt wanted): when they hold no prompt (here none at all,
    # as a long stretch of answers and tool calls), it looks past them
    memory = shop
    before = _stated(memory)
    memory.con.execute("UPDATE projection_offsets SET name = 'insights' WHERE starts_with(name, 'insights:')")
    monkeypatch.setattr(insight_store, "SPAN", 0)
    assert memory.insights.refresh(most=3) == 3 and memory.insights.unread
    assert memory.insights.refresh() == 4 and not memory.insights.unread
    assert _stated(memory) == before


def test_preferences_are_grouped_in_steps_later_statements_join_and_a_forget_shows_at_once(
    tmp_path: Path, shop: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = shop
    memory.insights.refresh()  # the prompts read, not grouped
    assert memory.insights.for_session(SHOP) == []  # a hook never groups: nothing grouped yet
    stating = len(insight_store.stated(memory.con))
    steps = 0
    while memory.insights.regroup(most=1):  # the idle step: the prompts stating rules read, then one at a time
        steps += 1
        assert memory.insights.behind == (steps <= stating)
    grouped = {p["text"] for p in memory.insights.for_session(SHOP)}
    assert steps == stating + 1 >= 5 and any("pnpm" in t for t in grouped)
    asked: list[int] = []
    stated = insight_store.stated
    monkeypatch.setattr(
        insight_store, "stated", lambda con, after_seq=0: (asked.append(after_seq), stated(con, after_seq))[1]
    )
    later = tmp_path / "more" / "projects" / "-nonexistent-shop" / "b.jsonl"
    _prompts(later, [("s5", "2026-05-05T10:00:00Z", "never force-push to main, ever")])
    later.write_text(later.read_text().replace('"uuid": "u0"', '"uuid": "later-0"'))  # (not the first file's line)
    memory.import_history(tmp_path / "more", settle_seconds=0)
    memory.insights.refresh()
    assert memory.insights.regroup(most=0) and asked == [asked[0]] and asked[0] > 0  # it joined the grouping kept
    texts = {p["text"] for p in memory.insights.for_session(SHOP)}
    assert texts > grouped and any("force-push" in t for t in texts)
    pnpm = next(p for p in memory.insights.listing(SHOP)["preferences"] if "pnpm" in p["text"])
    for evidence in pnpm["evidence"]:
        found = memory.resolve(evidence["citation"])
        assert found is not None
        memory.forget(ForgetSelector(event_ids=(found.id,)))
    assert not any("pnpm" in p["text"] for p in memory.insights.for_session(SHOP))  # gone before any idle step


def test_a_forget_takes_its_statements_from_the_served_preferences_and_groups_again_in_the_idle_steps(
    shop: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forget never groups the preferences on its own time (at a million events that held the service's worker for
    74 s): a process that never grouped leaves it to the next read; the grouping served to hooks loses the forgotten
    statements at once, and the quiet idle steps group again from the start, to what grouping the stored statements
    gives."""
    memory = shop
    memory.insights.refresh()
    added: list[str] = []
    add = core_insights.Grouping.add
    monkeypatch.setattr(core_insights.Grouping, "add", lambda self, s: (added.append(s.rule.text), add(self, s))[1])
    pnpm = [r.event_id for r in insight_store.stated(memory.con) if "pnpm" in r.rules]
    memory.forget(ForgetSelector(event_ids=(pnpm[0],)))
    assert added == []  # nothing served, nothing grouped
    listed = next(p for p in memory.insights.listing(SHOP)["preferences"] if "pnpm" in p["text"])
    assert listed["count"] == 1 and added and not any("always use pnpm" in t for t in added)  # a face's read groups
    added.clear()
    memory.forget(ForgetSelector(event_ids=(pnpm[1],)))  # served now
    assert added == [] and memory.insights.behind
    assert not any("pnpm" in p["text"] for p in memory.insights.for_session(SHOP))  # gone before any idle step
    work = quiet_idle_work(memory)
    for _ in range(20):
        work.step()
        if not memory.insights.behind:
            break
    assert added and not memory.insights.behind

    def shown(found: list[core_insights.Preference]) -> list[tuple[str, list[int], str | None]]:
        return [(p.id, [s.event_id for s in p.statements], p.superseded_by) for p in found]

    stored = [s for _, s in service_insights._statements(insight_store.stated(memory.con))]
    assert shown(memory.insights._last()) == shown(core_insights.preferences(stored)) != []


def test_no_injected_context_on_the_fixtures_holds_two_lines_with_the_same_text(store: Memory) -> None:
    recaller = Recaller(store)
    prompts = [f"the {ECHO} echo", f"what did the {ECHO} command print", "run the echo command again",
               "what did we change in cart.py", "the compaction summary", "ruff format check"]  # fmt: skip
    given = 0
    for prompt in prompts:
        payload = HookPayload.model_validate(
            {"hook_event_name": "UserPromptSubmit", "session_id": "asking", "cwd": WORK, "prompt": prompt}
        )
        context = str(recaller.context(ContextParams(payload=payload))["additional_context"])
        lines = [re.sub(r"^- \[mem:\w+\] [^:]*: ", "", line) for line in context.splitlines() if line.startswith("- [")]
        given += len(lines)
        assert len(lines) == len(set(lines)), context
    assert given >= 6
    echo = str(
        recaller.context(ContextParams(payload=HookPayload.model_validate(
            {"hook_event_name": "UserPromptSubmit", "session_id": "asking", "cwd": WORK, "prompt": f"the {ECHO} echo"}
        )))["additional_context"]
    )  # fmt: skip
    assert "(×" in echo  # the same command's output in several sessions: one line, every citation
