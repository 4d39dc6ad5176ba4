"""Insights from prompts (core/insights.py): the seed's canonical key (SEED_SPEC §3.4), rules told from look-alikes,
and preferences grouped and superseded. The labelled benchmark is bench/preferences (bench/preference_eval.py)."""

from __future__ import annotations

import re

import pytest

from claude_memory.core.insights import Statement, canonical_key, preferences, rules, standing


def test_canonical_key_follows_the_seed() -> None:
    assert canonical_key("Hello, World!") == "hello world"
    assert canonical_key("ＡＢＣ　１２３") == "abc 123"  # full-width to ASCII (NFKC)
    assert canonical_key("  a\n\tb  ") == "a b"
    assert canonical_key("snake_case") == "snakecase"  # letters and numbers only: "_" goes too
    assert canonical_key("x", "proj") == "proj::x"
    assert canonical_key("b a") != canonical_key("a b")  # word order matters
    long = canonical_key("word " * 100)
    assert len(long) == 200 and re.fullmatch(r".{191}_[0-9a-f]{8}", long)


@pytest.mark.parametrize(
    "prompt",
    [
        "always use pnpm in this repo, never npm",
        "from now on write tests with pytest, not unittest",
        "use ruff instead of black",
        "never commit .env files",
        "stop adding docstrings to private helpers",
        "we use conventional commits here",
        "make sure you always run mypy before saying you're done",
        "fix the login bug. also, going forward use httpx not requests",
        "keep your answers short",
        # norms on a kind of thing, said without always / never
        "handlers get the _impl suffix in this service",
        "config files go in etc/ and nowhere else",
        "error messages have to be lowercase",
        "docs: no emojis in headings",
        "in library code don't call print, use the logger",
        "before you run any migration ask me first",
        "Protobuf for new endpoints",
        "some context: every new module we write is typed",
        # a habit with code in it, a choice of command, a choice between calls, a longer "no ...", a "when you ..."
        # habit, plural moments, a team habit on everything, a norm in the passive
        "run `npm run lint` before you commit",
        "run the suite with pytest -x rather than tox",
        "use time.monotonic(), not time.time()",
        "no console.log calls in components or in unit tests",
        "when you add an endpoint, document it in openapi.yaml",
        "tests green before pushes",
        "we rebase everything onto main",
        "config values get validated at startup",
        "outline the plan first and wait before you start editing",
        "generated clients stay out of the repo",
    ],
)
def test_rules_are_found(prompt: str) -> None:
    assert rules(prompt), prompt


@pytest.mark.parametrize(
    "prompt",
    [
        "I never thought of that",
        "the always-on display setting is broken",
        "why does it always fail on CI?",
        "never mind",
        "don't change the API for now, just fix the typo",
        "clippy says you should never compare .len() == 0",
        "restart: always is set on the container and it loops",
        "I always used to use yarn but whatever",
        "it never returns null, right?",
        "add `@always_inline` to the hot loop",
        "Never saw this coming.",
        "Always good to hear!",
        "No tests found for streaming functionality.",
        "The authentication bug must be fixed before merging.",
        # someone else's words in single quotes or reported, first-time small talk, a wish about speed
        "mypy keeps saying 'always annotate self' on the mixin, can we silence it",
        "the docs say you should never block the event loop",
        "hey, first time using you in this repo",
        "builds should be faster than this",
        "let me know if you need any more context",
        "don't be afraid to rewrite the parser",
        # what a feature request specifies, and what follows a named moment
        "implement tag search. results go in the sidebar",
        "add an export command. json by default",
        "skip the slow suite for now, I'm on battery. unit tests only",
        # this task's order of steps, a task that switches a library, code with "::Always", a temporary exception
        "profile it and tell me where the time goes before changing anything",
        "refactor the parser to use nom instead of regex",
        "looks like Mode::Always wins over the env var in the default path",
        "don't bother with a changelog entry for the flaky test, it's temporary",
        "when you get this one done, ping me",
        "when you get a chance, look at the failing test",
        "when you are done, run the tests",
    ],
)
def test_look_alikes_are_not_rules(prompt: str) -> None:
    assert not rules(prompt), prompt


def test_a_pasted_log_after_the_first_paragraph_is_not_the_users_words() -> None:
    paste = "why does CI fail?\n\n" + "\n".join(["Error: never use a detached HEAD in CI, always pin actions"] * 40)
    assert not rules(paste)


def _statements(*items: tuple[str, str]) -> list[Statement]:
    out = []
    for n, (project, prompt) in enumerate(items):
        out += [Statement(n, f"c{n:05d}", project, f"s{n}", None, r) for r in rules(prompt)]
    return out


def test_one_preference_stated_several_ways_is_one_insight_and_a_contrary_one_supersedes_it() -> None:
    found = preferences(
        _statements(
            ("web", "always use pnpm in this repo, never npm"),
            ("web", "pnpm only please, you ran npm install again"),
            ("web", "from now on use pnpm dlx instead of npx"),
            ("web", "actually, switch back to npm — forget the pnpm thing"),
        )
    )
    first, last = found[0], found[-1]
    assert len(first.statements) >= 2 and first.superseded_by == last.id and last.supersedes == [first.id]
    assert standing(found, "web")[-1] is last and first not in standing(found, "web")


def test_a_preference_is_scoped_to_its_project_unless_stated_in_several() -> None:
    found = preferences(
        _statements(
            ("web", "always write commit messages in English"),
            ("api", "always write commit messages in English please"),
            ("api", "never log card numbers, ever"),
        )
    )
    english = next(p for p in found if "English" in p.latest.rule.text)
    cards = next(p for p in found if "card" in p.latest.rule.text)
    assert english.scope is None and len(english.statements) == 2  # holds everywhere
    assert cards.scope == "api" and cards not in standing(found, "web")
