"""The pure part of progressive disclosure: summaries, previews, token estimates, timeline merging and the
smart-search packing rules (core/disclosure.py), and the layer cache (service/disclosure.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claude_memory.core.disclosure import (
    DETAILS,
    HIGH,
    INDEX,
    NONE,
    SUGGESTED,
    TIMELINE,
    Details,
    IndexEntry,
    Packing,
    SmartSearch,
    Timeline,
    TimelineItem,
    TimelineWindow,
    estimate_tokens,
    excerpt,
    merge_timelines,
    pack,
    preview,
    summary,
    tool_facts,
)
from claude_memory.service.disclosure import LayerCache

# ---------------------------------------------------------------------- shaping


@pytest.mark.parametrize(("chars", "tokens"), [(0, 0), (1, 1), (4, 1), (5, 2), (8, 2), (9, 3), (400, 100)])
def test_estimate_is_chars_over_four_rounded_up(chars: int, tokens: int) -> None:
    assert estimate_tokens("x" * chars) == tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fixed the parser. Then I ran the tests again.", "Fixed the parser."),
        ("Why does it fail? Let me look.", "Why does it fail?"),
        ("Bash: git push\nEverything up-to-date", "Bash: git push"),
        ("Edit: /srv/app/main.py\nold -> new", "Edit: /srv/app/main.py"),  # a dot inside a path is no sentence end
        ("Here is the fix:\n```python\nprint(1)\n```\nDone.", "Here is the fix:"),
        ("```python\nx = 1\n```\nThis sets x. More.", "This sets x."),
        ("```sh\nls\n```", "[code]"),
        ("  \n  Leading   space is   ignored.  ", "Leading space is ignored."),
        ("", ""),
    ],
)
def test_summary_is_the_first_sentence(text: str, expected: str) -> None:
    assert summary(text) == expected


def test_a_long_summary_is_cut_at_a_word_boundary() -> None:
    words = " ".join(f"word{i}" for i in range(60))  # no sentence end at all
    cut = summary(words)
    assert len(cut) <= 100 and cut.endswith("…")
    head = cut.removesuffix("…")
    assert words.startswith(head) and words[len(head)] == " "  # whole words only
    assert len(head) > 50  # not cut needlessly short


@settings(max_examples=300)
@given(st.text(max_size=600))
def test_summary_is_one_short_line_and_never_empty_for_real_text(text: str) -> None:
    cut = summary(text)
    assert len(cut) <= 100 and "\n" not in cut
    assert bool(cut) == bool(text.strip())


def test_preview_names_code_and_stays_on_one_line() -> None:
    text = "Run this:\n\n```python\nimport os\nprint(os.getcwd())\n```\nthen   check."
    assert preview(text) == "Run this: [python code] then check."
    assert preview("```\nx\n```") == "[code]"
    long = "lorem ipsum " * 50
    cut = preview(long)
    assert len(cut) <= 200 and cut.endswith("…") and long.startswith(cut.removesuffix("…"))


@settings(max_examples=200)
@given(st.text(max_size=800))
def test_preview_is_bounded(text: str) -> None:
    shown = preview(text)
    assert len(shown) <= 200 and "\n" not in shown


def test_tool_facts_come_from_metadata() -> None:
    (edit,) = tool_facts("Edit", "tool_use", {"input": {"replace_all": True}, "is_error": True})
    assert (edit.name, edit.input, edit.status) == ("Edit", {"replace_all": True}, "error")
    (bash,) = tool_facts("Bash", "tool_use", {"result": "missing"})
    assert (bash.input, bash.status) == ({}, "no result")
    (read,) = tool_facts("Read", "tool_use", {})
    assert read.status == "ok" and read.text() == "Tool: Read · ok\n"
    assert tool_facts(None, "agent_response", {"input": {"x": 1}}) == ()


# ---------------------------------------------------------------------- timeline merging


def _item(session: str, position: int, *, target: bool = False, ts: str | None = None) -> TimelineItem:
    event_id = hash((session, position)) & 0xFFFF_FFFF
    stamp = ts or f"2026-01-01T10:{position:02d}:00Z"
    return TimelineItem(
        event_id, f"mem:{position:06d}", "user_prompt", stamp, session, position, f"p{position}", target
    )


def _timeline(session: str, first: int, last: int, target: int, *, ts_hour: int = 10) -> Timeline:
    items = tuple(
        _item(session, p, target=p == target, ts=f"2026-01-01T{ts_hour:02d}:{p:02d}:00Z")
        for p in range(first, last + 1)
    )
    return Timeline((TimelineWindow(session, "/proj", items),))


def test_overlapping_windows_merge_without_duplicates() -> None:
    merged = merge_timelines([_timeline("s", 1, 5, 3), _timeline("s", 4, 8, 6)])
    (window,) = merged.windows
    assert [i.position for i in window.items] == list(range(1, 9))
    assert len({i.id for i in window.items}) == 8
    assert [t.position for t in merged.targets] == [3, 6]


def test_touching_windows_merge_and_gaps_stay_apart() -> None:
    touching = merge_timelines([_timeline("s", 1, 3, 2), _timeline("s", 4, 6, 5)])
    assert [len(w.items) for w in touching.windows] == [6]
    apart = merge_timelines([_timeline("s", 5, 6, 5), _timeline("s", 1, 2, 1)])
    assert [[i.position for i in w.items] for w in apart.windows] == [[1, 2], [5, 6]]


def test_a_target_stays_a_target_when_another_window_holds_it_as_context() -> None:
    merged = merge_timelines([_timeline("s", 1, 5, 1), _timeline("s", 3, 4, 3)])
    assert [t.position for t in merged.targets] == [1, 3]


def test_windows_of_different_sessions_are_ordered_by_time() -> None:
    late = _timeline("b", 1, 2, 1, ts_hour=15)
    early = _timeline("a", 7, 9, 8, ts_hour=9)
    merged = merge_timelines([late, early, Timeline((), ("mem:gone00",)), Timeline((), ("mem:gone00",))])
    assert [w.session_id for w in merged.windows] == ["a", "b"]
    assert merged.missing == ("mem:gone00",)
    assert merged.to_json()["missing"] == ["mem:gone00"]


def test_timeline_tokens_are_those_of_its_text() -> None:
    merged = merge_timelines([_timeline("s", 1, 4, 2)])
    text = merged.text()
    assert text.startswith("Session s · /proj\n") and text.count("\n") == 5
    assert "▶ [mem:000002]" in text and "  [mem:000001]" in text
    assert merged.tokens == estimate_tokens(text) > 0


# ---------------------------------------------------------------------- packing


def _entry(rank: int, confidence: str, summary_chars: int = 40) -> IndexEntry:
    return IndexEntry(
        rank=rank,
        id=1000 + rank,
        citation=f"mem:r{rank:05d}",
        summary="s" * summary_chars,
        score=1.0 / rank,
        confidence=confidence,
        type="agent_response",
        timestamp="2026-01-01T10:00:00Z",
        session_id="session-1",
        project="/proj",
    )


def _details(entry: IndexEntry, chars: int) -> Details:
    return Details(
        id=entry.id,
        citation=entry.citation,
        type=entry.type,
        timestamp=entry.timestamp,
        session_id=entry.session_id,
        project=entry.project,
        agent_id=None,
        tool_name=None,
        content="d" * chars,
        files=(),
        tools=(),
        source={"path": "/t.jsonl", "line_start": 1, "line_end": 1, "byte_start": 0, "byte_end": 9, "uuid": "u"},
        metadata={},
        neighbours=(),
    )


def _window_of(entry: IndexEntry, width: int = 1) -> Timeline:
    """A window around the entry at session position 10 * rank (so windows of different ranks never meet)."""
    centre = 10 * entry.rank
    items = tuple(
        TimelineItem(
            entry.id if p == centre else 50_000 + p,
            entry.citation if p == centre else None,
            "tool_use",
            "2026-01-01T10:00:00Z",
            "session-1",
            p,
            "preview text",
            p == centre,
        )
        for p in range(centre - width, centre + width + 1)
    )
    return Timeline((TimelineWindow("session-1", "/proj", items),))


def _lookups(
    detail_chars: int = 400, calls: list[int] | None = None
) -> tuple[Callable[[IndexEntry], Details | None], Callable[[IndexEntry], Timeline | None]]:
    def details_of(entry: IndexEntry) -> Details:
        if calls is not None:
            calls.append(entry.rank)
        return _details(entry, detail_chars)

    return details_of, _window_of


def _accounted(packing: Packing) -> int:
    index = sum(entry.tokens for entry, _ in packing.layers)
    details = sum(d.tokens for d in packing.details)
    return index + details + (packing.timeline.tokens if packing.timeline is not None else 0)


def test_generous_budget_follows_the_confidence_rules() -> None:
    entries = [_entry(1, HIGH), _entry(2, SUGGESTED), _entry(3, NONE), _entry(4, SUGGESTED)]
    packing = pack(entries, 100_000, *_lookups())
    assert [layer for _, layer in packing.layers] == [DETAILS, TIMELINE, INDEX, TIMELINE]
    assert [d.id for d in packing.details] == [entries[0].id]
    assert packing.timeline is not None
    assert {t.id for t in packing.timeline.targets} == {entries[1].id, entries[3].id}
    assert packing.omitted == 0 and packing.tokens == _accounted(packing)


def test_details_that_do_not_fit_fall_back_to_a_timeline() -> None:
    entries = [_entry(1, HIGH), _entry(2, NONE)]
    index_cost = sum(e.tokens for e in entries)
    big = _details(entries[0], 4_000).tokens
    details_of, _ = _lookups(4_000)
    packing = pack(entries, index_cost + big - 1, details_of, _window_of)
    assert [layer for _, layer in packing.layers] == [TIMELINE, INDEX]
    exact = pack(entries, index_cost + big, details_of, _window_of)
    assert [layer for _, layer in exact.layers] == [DETAILS, INDEX] and exact.tokens == index_cost + big


def test_index_lines_are_a_prefix_and_nothing_fits_in_a_tiny_budget() -> None:
    entries = [_entry(1, NONE, 10), _entry(2, NONE, 90), _entry(3, NONE, 10)]
    first = entries[0].tokens
    packing = pack(entries, first + entries[1].tokens - 1, *_lookups())
    assert [e.rank for e, _ in packing.layers] == [1]  # #3 would fit, but the list stops at #2
    assert packing.omitted == 2
    for budget in (0, 1, first - 1):
        empty = pack(entries, budget, *_lookups())
        assert empty.layers == () and empty.tokens == 0 and empty.omitted == 3 and empty.text() == ""


def test_lookups_happen_only_for_hits_the_rules_consider() -> None:
    calls: list[int] = []
    entries = [_entry(1, HIGH), _entry(2, NONE), _entry(3, HIGH)]
    details_of, _ = _lookups(calls=calls)
    pack(entries, entries[0].tokens + entries[1].tokens, details_of, _window_of)
    assert calls == [1]  # #2 has no confidence, #3 did not even make the index


def test_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        pack([], -1, *_lookups())


def test_smart_search_json_reports_layers_and_tokens() -> None:
    entries = [_entry(1, HIGH), _entry(2, SUGGESTED), _entry(3, NONE)]
    packing = pack(entries, 100_000, *_lookups())
    data = SmartSearch(packing, {"query": "q"}).to_json()
    assert [r["layer"] for r in data["results"]] == [DETAILS, TIMELINE, INDEX]
    assert data["results"][0]["details"]["text"] == "d" * 400
    assert "details" not in data["results"][1]
    assert data["meta"]["expanded"] == {DETAILS: 1, TIMELINE: 1, INDEX: 1}
    assert data["meta"]["tokens"] == packing.tokens and data["meta"]["query"] == "q"
    assert data["timeline"]["targets"] == [entries[1].citation]


_CONFIDENCE = st.sampled_from([HIGH, SUGGESTED, NONE])


@settings(max_examples=400)
@given(
    hits=st.lists(st.tuples(_CONFIDENCE, st.integers(0, 100), st.integers(0, 6_000), st.integers(0, 4)), max_size=12),
    budget=st.integers(0, 5_000),
)
def test_packing_never_exceeds_the_budget(hits: list[tuple[str, int, int, int]], budget: int) -> None:
    entries = [_entry(rank, conf, chars) for rank, (conf, chars, _, _) in enumerate(hits, start=1)]
    sizes = {1000 + rank: (detail, width) for rank, (_, _, detail, width) in enumerate(hits, start=1)}

    def details_of(entry: IndexEntry) -> Details:
        return _details(entry, sizes[entry.id][0])

    def timeline_of(entry: IndexEntry) -> Timeline:
        return _window_of(entry, sizes[entry.id][1])

    packing = pack(entries, budget, details_of, timeline_of)
    assert packing.tokens <= budget
    assert packing.tokens == _accounted(packing)
    assert estimate_tokens(packing.text()) <= packing.tokens
    included = [entry for entry, _ in packing.layers]
    assert included == entries[: len(included)] and packing.omitted == len(entries) - len(included)
    if packing.omitted:
        assert sum(e.tokens for e in included) + entries[len(included)].tokens > budget
    targets = {t.id for t in packing.timeline.targets} if packing.timeline else set()
    for entry, layer in packing.layers:
        if entry.confidence == NONE:
            assert layer == INDEX
        if layer == DETAILS:
            assert entry.confidence == HIGH
        assert (layer == TIMELINE) == (entry.id in targets)
    # a bigger budget never shows fewer hits
    assert len(pack(entries, budget + 500, details_of, timeline_of).layers) >= len(included)


# ---------------------------------------------------------------------- cache


def test_layer_cache_is_lru_per_layer_and_dropped_on_a_new_generation() -> None:
    cache = LayerCache({"index": 2, "details": 5})
    computed: list[str] = []

    def compute(value: str) -> Callable[[], str]:
        def run() -> str:
            computed.append(value)
            return value.upper()

        return run

    assert cache.get(1, "index", "a", compute("a")) == "A"
    assert cache.get(1, "index", "a", compute("a")) == "A"
    assert computed == ["a"] and (cache.hits, cache.misses) == (1, 1)
    cache.get(1, "index", "b", compute("b"))
    cache.get(1, "index", "a", compute("a"))  # a is now the most recently used
    cache.get(1, "index", "c", compute("c"))  # evicts b, not a
    cache.get(1, "index", "a", compute("a"))
    cache.get(1, "index", "b", compute("b"))
    assert computed == ["a", "b", "c", "b"]
    cache.get(1, "details", "a", compute("detail"))  # other layers keep their own entries
    assert computed[-1] == "detail"
    cache.get(2, "index", "a", compute("a"))  # the store changed: everything is recomputed
    assert computed[-1] == "a" and len(computed) == 6
    cache.get(2, "details", "a", compute("detail"))
    assert len(computed) == 7
    cache.get(2, "index", "none", lambda: None)  # a miss is cached too (the store says "nothing")
    assert cache.get(2, "index", "none", compute("x")) is None
    cache.clear()
    cache.get(2, "index", "a", compute("a"))
    assert len(computed) == 8


def test_an_excerpt_opens_where_most_of_the_query_matches() -> None:
    text = "We talked about tripods and bags for a while. " * 6 + "Then I bought a Sony 24-70mm lens last week. " * 1
    text += "Later we compared camera straps and cleaning kits at length. " * 6
    out = excerpt(text, ["soni", "len"], 120)
    assert "Sony 24-70mm lens" in out and out.startswith("…") and out.endswith("…") and len(out) <= 120
    assert excerpt(text, [], 60).startswith("We talked about")  # nothing to look for: the head
    assert excerpt("short text", ["zzz"], 60) == "short text"


@given(st.text(max_size=3000), st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), max_size=5),
       st.integers(min_value=8, max_value=500))  # fmt: skip
def test_an_excerpt_never_runs_over_its_width(text: str, stems: list[str], width: int) -> None:
    out = excerpt(text, stems, width)
    flat = " ".join(text.split())
    assert len(out) <= width
    assert out == flat if len(flat) <= width else out.endswith("…") or out.startswith("…")


def test_an_excerpt_finds_words_whose_stem_ends_differently() -> None:
    text = "Tool output, nothing to see here. " * 20 + "We set the retry policy to five attempts."
    assert "retry policy" in excerpt(text, ["retri", "polici"], 120)  # Snowball's stems of "retry policy"
