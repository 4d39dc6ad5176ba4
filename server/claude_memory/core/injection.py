"""What the hooks put in front of Claude: memories as factual statements with their citations, and the
rule-based summary written when a session ends. Pure functions over plain records.

Claude Code caps a hook's ``additionalContext`` at 10,000 characters (longer text is replaced by a file
path and a preview), so everything here stays under :data:`MAX_CHARS` as well as the token budget; whole
lines are dropped, never cut mid-way. Claude Code's docs ask for statements rather than instructions:
text framed as system commands can trip prompt-injection defences.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from claude_memory.core import events as ev
from claude_memory.core.disclosure import Excerpts, clip, estimate_tokens, excerpt
from claude_memory.core.ranking import (
    RELEVANT_COSINE,
    RELEVANT_COVERAGE,
    RELEVANT_KEYWORD,
    RELEVANT_KEYWORD_WITH_MEANING,
    RELEVANT_WORDS_COSINE,
)

MAX_CHARS: Final = 9_000  # under Claude Code's 10,000-character cap, with room for its own wrapping
HIGH_EXCERPT: Final = 400  # characters of a high-confidence memory
SUGGESTED_EXCERPT: Final = 240
MIN_EXCERPT: Final = 120  # an excerpt is shortened to this before a memory is left out of the prompt's context

# Words that name no topic: acknowledgements, agreement and refusal, greetings, politeness, "continue" and its
# kin, fillers. A prompt made only of these (and stopwords) recalls nothing: "ok do it", "thanks!", "hi claude",
# "yes please continue" are the most frequent prompts, and memories injected for them are noise.
DISCOURSE: Final = frozenset(
    {
        "ok", "okay", "okey", "kk", "yes", "yeah", "yep", "yup", "ya", "yah", "yea", "sure", "fine", "alright",
        "right", "correct", "exactly", "agreed", "agree", "no", "nope", "nah", "not", "cool", "nice", "great",
        "good", "awesome", "perfect", "excellent", "amazing", "wonderful", "fantastic", "sweet", "neat", "lovely",
        "brilliant", "lgtm", "thanks", "thank", "thx", "ty", "tysm", "cheers", "appreciated", "appreciate", "much",
        "lot", "very", "really", "just", "too", "also", "well", "indeed", "wow", "oh", "ah", "hmm", "hm", "huh",
        "lol", "haha", "heh", "oops", "sorry", "hi", "hello", "hey", "hiya", "howdy", "yo", "greetings", "morning",
        "afternoon", "evening", "night", "bye", "goodbye", "cya", "please", "pls", "plz", "kindly", "continue",
        "cont", "go", "going", "ahead", "proceed", "carry", "keep", "next", "again", "retry", "try", "resume",
        "on", "do", "done", "now", "let", "lets", "us", "all", "sounds", "seems", "makes", "sense", "works", "got",
        "understood", "noted", "gotcha", "claude", "one", "more", "time", "thing", "way", "same", "here", "ready",
    }
)  # fmt: skip


NO_TOPIC: Final = "The prompt names no topic to recall (an acknowledgement, a greeting or a go-ahead)."


def informative(words: Sequence[str]) -> list[str]:
    """The words of a prompt (lower-cased, stopwords already out) that may name a topic."""
    return [w for w in words if w not in DISCOURSE and not w.isdigit()]


def relevant(words: Sequence[str], best_cosine: float | None, best_coverage: float, best_keyword: float) -> str | None:
    """Why a prompt gets no memories (one sentence), or None when its best hits are worth injecting. ``words`` are
    the prompt's words (:meth:`~claude_memory.core.tokens.QueryTokenizer.words`); ``best_cosine`` the best plain
    cosine among its top hits, None when semantic search is off; ``best_coverage`` the best query coverage among
    them and ``best_keyword`` their best BM25 in units of the store's rarest idf (a word in one event). Without
    cosines, a prompt needs two topic words and a strong keyword match (:data:`.ranking.RELEVANT_KEYWORD`); with
    them, either a hit close in meaning (:data:`.ranking.RELEVANT_COSINE`) or two topic words, a keyword match
    (:data:`.ranking.RELEVANT_KEYWORD_WITH_MEANING`) and a hit not far off in meaning
    (:data:`.ranking.RELEVANT_WORDS_COSINE`). A question can match its memory by words while a small model places it
    below the cosine threshold: LongMemEval dev's questions injected in 76 % of hooks with the cosine alone."""
    topics = informative(words)
    if not topics:
        return NO_TOPIC
    by_words = len(topics) >= 2 and best_coverage >= RELEVANT_COVERAGE
    if best_cosine is not None:
        by_words = by_words and best_keyword >= RELEVANT_KEYWORD_WITH_MEANING and best_cosine >= RELEVANT_WORDS_COSINE
        if best_cosine < RELEVANT_COSINE and not by_words:
            return "Nothing in memory is close enough in meaning to this prompt, or matches enough of its words."
        return None
    if not by_words or best_keyword < RELEVANT_KEYWORD:
        return "Nothing in memory matches enough of this prompt's words (semantic search is off)."
    return None


_SAID: Final = {
    ev.USER_PROMPT: "the user wrote",
    ev.AGENT_RESPONSE: "Claude answered",
    ev.TOOL_USE: "a tool call ran",
    ev.COMPACT_SUMMARY: "a conversation summary said",
    ev.SUBAGENT_PROMPT: "a subagent was asked",
    ev.COMPACTION: "the conversation was compacted",
}


@dataclass(frozen=True, slots=True)
class Recall:
    """One memory offered to Claude."""

    citation: str  # mem:AbC123
    type: str
    timestamp: str | None  # ISO-8601
    session_id: str
    text: str
    confidence: str  # high | suggested
    also: tuple[str, ...] = ()  # citations of near-duplicates it stands for (core/duplicates.py)


def _width(recall: Recall) -> int:
    return HIGH_EXCERPT if recall.confidence == "high" else SUGGESTED_EXCERPT


def _line(recall: Recall, shown: str) -> str:
    """One memory: citation, day, session, who said it, and ``shown``, an excerpt of its text."""
    day = (recall.timestamp or "")[:10] or "undated"
    said = _SAID.get(recall.type, recall.type)
    also = f" (×{len(recall.also) + 1}, also {' '.join(f'[{c}]' for c in recall.also)})" if recall.also else ""
    return f"- [{recall.citation}] {day}, session {recall.session_id[:8]}{also}: {said}: {shown}\n"


def _fit(header: str, lines: Sequence[str], footer: str, budget: int, max_chars: int) -> tuple[str, int]:
    """Header, as many whole lines as fit, footer; empty when not one line fits. Returns (text, lines)."""
    text = header
    kept = 0
    for line in lines:
        candidate = text + line
        if estimate_tokens(candidate + footer) > budget or len(candidate + footer) > max_chars:
            continue  # a shorter line further down may still fit
        text = candidate
        kept += 1
    return (text + footer, kept) if kept else ("", 0)


def prompt_context(
    recalls: Sequence[Recall], budget: int, max_chars: int = MAX_CHARS, stems: Sequence[str] = ()
) -> tuple[str, list[str]]:
    """The UserPromptSubmit injection: the relevant memories, most relevant first, within ``budget`` tokens and
    ``max_chars``, each an excerpt around the query's ``stems``. When they do not all fit, the longest excerpts are
    shortened first (to :data:`MIN_EXCERPT` characters at least), then the last memories left out: one more memory
    is worth more than the tail of a long one (LongMemEval dev's questions, whose turns run to hundreds of
    characters, got four memories of five at 1,500 characters). Returns the text ('' when nothing fits) and the
    citations it includes."""
    if not recalls:
        return "", []
    header = "Memories from earlier Claude Code sessions that match this prompt (claude-memory), best first:\n"
    footer = "The claude-memory MCP tools (timeline, get_observations) show a [mem:…] memory's full text and context.\n"
    room = min(max_chars, 4 * budget)  # estimate_tokens is a quarter of the characters, rounded up
    texts = [Excerpts(r.text, stems) for r in recalls]
    cap = max(_width(r) for r in recalls)
    while True:
        lines = [_line(r, text.cut(min(_width(r), cap))) for r, text in zip(recalls, texts, strict=True)]
        if len(header) + sum(map(len, lines)) + len(footer) <= room or cap <= MIN_EXCERPT:
            break
        cap = max(MIN_EXCERPT, cap - 20)
    text, _ = _fit(header, lines, footer, budget, max_chars)
    return text, [c for r, line in zip(recalls, lines, strict=True) if line in text for c in (r.citation, *r.also)]


@dataclass(frozen=True, slots=True)
class OpenTask:
    """An open task of the project (core/tasks.py), as the SessionStart context lists it."""

    title: str
    status: str  # in_progress, blocked or pending
    citation: str | None  # of the call that last changed it
    blockers: tuple[str, ...] = ()  # their titles


def _task_line(task: OpenTask) -> str:
    cite = f" [{task.citation}]" if task.citation else ""
    blocked = f" (blocked by: {'; '.join(clip(b, 80) for b in task.blockers)})" if task.blockers else ""
    return f"- {task.status.replace('_', ' ')}: {clip(task.title, 160)}{cite}{blocked}\n"


@dataclass(frozen=True, slots=True)
class StatedPreference:
    """A preference or rule the user stated in earlier sessions (core/insights.py), as SessionStart gives it."""

    text: str  # the statement that says it best (the latest of the wordiest)
    citation: str | None  # of that statement
    count: int  # how many times it was stated


PREFERENCES_CHARS: Final = 600


def _preference_line(pref: StatedPreference) -> str:
    cite = f" [{pref.citation}]" if pref.citation else ""
    times = f" (stated {pref.count} times)" if pref.count > 1 else ""
    return f"- {clip(pref.text, 200)}{cite}{times}\n"


@dataclass(frozen=True, slots=True)
class Continuing:
    """Endless mode's opening (seed §9.6): how this prompt stream continues, the working set, consolidated memories."""

    transition: str  # seamless | topic_shift | break
    score: float
    working: tuple[Recall, ...]  # the working set's most relevant events (at most 5)
    consolidated: tuple[tuple[tuple[str, ...], str], ...]  # (topics, summary), the best first (at most 3)


_TRANSITION_ICON: Final = {"seamless": "🔗", "topic_shift": "↪️", "break": "🆕"}


def _continuing(c: Continuing) -> str:
    icon = _TRANSITION_ICON.get(c.transition, "🆕")
    text = f"{icon} Context: {c.transition} (score: {c.score:.2f}); endless mode: no session boundary.\n"
    if c.working:
        text += "Recent context (working set):\n" + "".join(
            f"- {(r.timestamp or '')[:16].replace('T', ' ')} [{r.type}] {clip(r.text, 80)} [{r.citation}]\n"
            for r in c.working
        )
    if c.consolidated:
        text += "Related knowledge (consolidated):\n" + "".join(
            f"- {', '.join(topics[:3])}: {clip(summary.replace(chr(10), ' '), 100)}\n"
            for topics, summary in c.consolidated
        )
    return text


def session_context(
    project: str | None,
    last_summary: str | None,
    recent: Sequence[Recall],
    budget: int,
    max_chars: int = MAX_CHARS,
    tasks: Sequence[OpenTask] = (),
    preferences: Sequence[StatedPreference] = (),
    continuing: Continuing | None = None,
) -> str:
    """The SessionStart injection: the project's last session summary, the user's preferences for it (at most
    :data:`PREFERENCES_CHARS` characters), its open tasks (in progress and blocked first) and its most recent
    memories. In endless mode (``continuing``), the continuity line, the working set and consolidated memories stand
    where the last session and its recent memories would."""
    if continuing is not None:
        last_summary, recent = None, ()
    if not last_summary and not recent and not tasks and not preferences and continuing is None:
        return ""
    where = f"project {project}" if project else "this directory"
    header = f"claude-memory has {where} in its records from earlier Claude Code sessions.\n"
    if last_summary:
        header += f"Last session: {clip(last_summary, 1500)}\n"
    if continuing is not None:
        header += _continuing(continuing)
    if estimate_tokens(header) > budget or len(header) > max_chars:
        return ""
    if preferences:
        title = "Your preferences for this project, as you stated them in earlier sessions:\n"
        lines = [_preference_line(p) for p in preferences]
        section, kept = _fit(title, lines, "", budget, PREFERENCES_CHARS)
        fits = estimate_tokens(header + section) <= budget and len(header + section) <= max_chars
        header = header + section if kept and fits else header
    if tasks:
        listed, kept = _fit(header + "Open tasks from earlier sessions:\n", [_task_line(t) for t in tasks], "",
                            budget, max_chars)  # fmt: skip
        header = listed if kept else header
    lines = [_line(r, excerpt(r.text, (), _width(r))) for r in recent]
    if not lines:
        return header
    text, kept = _fit(header + "Recent memories:\n", lines, "", budget, max_chars)
    return text if kept else header


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the store knows of a session, for its summary."""

    title: str | None
    project: str | None
    first_ts: str | None
    last_ts: str | None
    prompts: tuple[str, ...]  # in order
    counts: Counter[str]  # events by type
    tools: Counter[str]  # tool calls by tool name
    files: tuple[str, ...]  # most touched first


def session_summary(facts: SessionFacts) -> str:
    """A rule-based summary of a session: what was asked, which tools ran on which files. No LLM."""
    c = facts.counts
    parts = [
        f"{c[ev.USER_PROMPT]} prompt{'s' if c[ev.USER_PROMPT] != 1 else ''}, "
        f"{c[ev.AGENT_RESPONSE]} answer{'s' if c[ev.AGENT_RESPONSE] != 1 else ''}, "
        f"{c[ev.TOOL_USE]} tool call{'s' if c[ev.TOOL_USE] != 1 else ''}"
    ]
    head = f"Session {facts.title!r}" if facts.title else "Session"
    if facts.first_ts:
        head += f" on {facts.first_ts[:10]}"
        if facts.last_ts and facts.last_ts[:10] != facts.first_ts[:10]:
            head += f" to {facts.last_ts[:10]}"
    lines = [f"{head}: {parts[0]}."]
    if facts.prompts:
        asked = "; ".join(f'"{clip(p, 100)}"' for p in facts.prompts[:3])
        more = f" and {len(facts.prompts) - 3} more" if len(facts.prompts) > 3 else ""
        lines.append(f"Asked: {asked}{more}.")
    if facts.tools:
        lines.append("Tools: " + ", ".join(f"{name} ×{n}" for name, n in facts.tools.most_common(6)) + ".")
    if facts.files:
        lines.append("Files: " + ", ".join(facts.files[:6]) + ".")
    if c[ev.COMPACTION]:
        lines.append(f"Compacted {c[ev.COMPACTION]} time{'s' if c[ev.COMPACTION] != 1 else ''}.")
    return " ".join(lines)


def hook_output(event: str, context: str) -> dict[str, Any] | None:
    """What a context hook prints for Claude Code: the injected ``context`` under ``hookSpecificOutput``,
    or None (print nothing) when there is nothing to inject."""
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
