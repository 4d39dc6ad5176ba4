"""What the hooks inject: factual lines with citations, within the budget and Claude Code's cap."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from claude_memory.core.disclosure import estimate_tokens
from claude_memory.core.injection import (
    HIGH_EXCERPT,
    MAX_CHARS,
    MIN_EXCERPT,
    SUGGESTED_EXCERPT,
    Recall,
    SessionFacts,
    informative,
    prompt_context,
    relevant,
    session_context,
    session_summary,
)
from claude_memory.core.ranking import (
    RELEVANT_COSINE,
    RELEVANT_COVERAGE,
    RELEVANT_KEYWORD,
    RELEVANT_KEYWORD_WITH_MEANING,
    RELEVANT_WORDS_COSINE,
)
from claude_memory.core.tokens import QueryTokenizer


def recall(i: int, text: str = "the build uses uv, not pip", confidence: str = "high") -> Recall:
    return Recall(f"mem:Cit{i:03d}", "user_prompt", "2026-11-20T10:00:00Z", f"session{i:04d}", text, confidence)


def test_prompt_context_states_each_memory_with_its_citation_and_day() -> None:
    text, cited = prompt_context([recall(1), recall(2, "Claude fixed the flaky test", "suggested")], 2000)
    assert cited == ["mem:Cit001", "mem:Cit002"]
    assert "- [mem:Cit001] 2026-11-20, session session0: the user wrote: the build uses uv, not pip\n" in text
    assert "[mem:Cit002]" in text and text.startswith("Memories from earlier Claude Code sessions")


def test_nothing_to_say_gives_no_text() -> None:
    assert prompt_context([], 2000) == ("", [])
    assert prompt_context([recall(1, "x" * 5000)], 10) == ("", [])  # not even one line fits
    assert session_context("/p", None, [], 500) == ""


def test_long_excerpts_are_shortened_before_a_memory_is_left_out() -> None:
    long, short = recall(1, "word " * 400), recall(2, "short one")
    text, cited = prompt_context([long, short], 150)
    assert cited == ["mem:Cit001", "mem:Cit002"] and estimate_tokens(text) <= 150
    excerpt = text.split("the user wrote: ")[1].split("\n")[0]
    assert MIN_EXCERPT <= len(excerpt) < HIGH_EXCERPT and excerpt.endswith("…")


def test_lines_that_do_not_fit_even_shortened_are_dropped_whole_and_shorter_ones_still_go_in() -> None:
    long, short = recall(1, "word " * 400), recall(2, "short one")
    text, cited = prompt_context([long, short], 85)
    assert cited == ["mem:Cit002"] and "word word" not in text
    assert estimate_tokens(text) <= 85


def test_each_excerpt_is_taken_around_what_the_prompt_matched() -> None:
    story = "I asked about tripods and bags. " * 12 + "By the way, I just bought a Sony 24-70mm lens last week."
    text, _ = prompt_context([recall(1, story, "suggested")], 2000, stems=["len", "soni"])
    excerpt = text.split("the user wrote: ")[1].split("\n")[0]
    assert excerpt.startswith("…") and excerpt.endswith("a Sony 24-70mm lens last week.")
    assert len(excerpt) <= SUGGESTED_EXCERPT
    without, _ = prompt_context([recall(1, story, "suggested")], 2000)  # nothing matched: the head
    assert "the user wrote: I asked about tripods" in without


@given(
    st.lists(st.text(min_size=1, max_size=3000), min_size=1, max_size=40),
    st.integers(min_value=0, max_value=10_000),
)
def test_never_over_the_budget_or_claude_codes_character_cap(texts: list[str], budget: int) -> None:
    recalls = [recall(i, t, "high" if i % 2 else "suggested") for i, t in enumerate(texts)]
    text, cited = prompt_context(recalls, budget)
    assert estimate_tokens(text) <= budget and len(text) <= MAX_CHARS < 10_000
    assert all(c in text for c in cited)


def test_session_context_has_the_last_summary_and_recent_prompts() -> None:
    text = session_context("/repo", "Session on 2026-11-20: 3 prompts.", [recall(7)], 600)
    assert text.startswith("claude-memory has project /repo in its records")
    assert "Last session: Session on 2026-11-20: 3 prompts.\n" in text and "[mem:Cit007]" in text


def test_session_summary_is_rule_based_and_counts_what_happened() -> None:
    facts = SessionFacts(
        title="Fix CI",
        project="/repo",
        first_ts="2026-11-20T09:00:00Z",
        last_ts="2026-11-21T09:00:00Z",
        prompts=("why does CI fail on main?", "fix it", "and add a test", "thanks"),
        counts=Counter({"user_prompt": 4, "agent_response": 5, "tool_use": 3, "compaction": 1}),
        tools=Counter({"Bash": 2, "Edit": 1}),
        files=("/repo/ci.yml",),
    )
    assert session_summary(facts) == (
        "Session 'Fix CI' on 2026-11-20 to 2026-11-21: 4 prompts, 5 answers, 3 tool calls. "
        'Asked: "why does CI fail on main?"; "fix it"; "and add a test" and 1 more. '
        "Tools: Bash ×2, Edit ×1. Files: /repo/ci.yml. Compacted 1 time."
    )


def test_acknowledgements_greetings_and_go_aheads_name_no_topic() -> None:
    words = QueryTokenizer().words
    for prompt in ("ok do it", "Thanks!", "hi claude", "yes please continue", "go ahead", "Sounds good, thank you 🙏"):
        assert informative(words(prompt)) == [], prompt
        assert relevant(words(prompt), 0.99, 1.0, 2.0) is not None, prompt  # even with a perfect match
    assert informative(words("ok, now fix the flaky payment test")) == ["fix", "flaky", "payment", "test"]


def test_a_topic_is_recalled_only_when_a_memory_is_close_enough() -> None:
    words = QueryTokenizer().words("what did we decide about the retry policy?")
    assert relevant(words, RELEVANT_COSINE, 0.0, 0.0) is None
    far = "Nothing in memory is close enough in meaning to this prompt, or matches enough of its words."
    assert relevant(words, RELEVANT_COSINE - 0.01, RELEVANT_COVERAGE - 0.01, 2.0) == far
    assert relevant(words, RELEVANT_COSINE - 0.01, 1.0, RELEVANT_KEYWORD_WITH_MEANING - 0.01) == far
    # matched by words, with a hit not far off in meaning
    assert relevant(words, RELEVANT_WORDS_COSINE, RELEVANT_COVERAGE, RELEVANT_KEYWORD_WITH_MEANING) is None
    # generic words matching by chance, nothing near in meaning
    assert relevant(words, RELEVANT_WORDS_COSINE - 0.01, 1.0, 2.0) == far
    assert relevant(words[-1:], RELEVANT_COSINE - 0.01, 1.0, 2.0) == far  # one topic word is not enough for that


def test_without_semantics_two_topic_words_and_a_strong_keyword_match_are_needed() -> None:
    words = QueryTokenizer().words
    assert relevant(words("payment policy"), None, RELEVANT_COVERAGE, RELEVANT_KEYWORD) is None
    assert relevant(words("payment policy"), None, RELEVANT_COVERAGE - 0.01, 2.0) is not None
    assert relevant(words("payment policy"), None, 1.0, RELEVANT_KEYWORD - 0.01) is not None
    assert relevant(words("weather?"), None, 1.0, 2.0) is not None  # one word: too little to go on
