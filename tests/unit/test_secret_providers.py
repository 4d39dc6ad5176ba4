"""The provider formats and context rules of the privacy filter, over the privacy corpus
(tests/support/privacy_corpus.py): every true case is masked whole, wherever it is pasted, and
counted under its kind; every near miss survives unchanged."""

from __future__ import annotations

import json
import re

import pytest

from claude_memory.core.masking import RUN_CHARS
from claude_memory.core.privacy import PrivacyFilter, PrivacySettings
from claude_memory.core.providers import PROVIDERS
from claude_memory.core.secrets import KEY_BLOCK_RULES, RULES, WORD_CHARS
from support.privacy_corpus import NEAR_MISSES, TRUE_CASES

DEFAULT = PrivacyFilter()
CASE_IDS = [f"{i:03d}-{kind}" for i, (kind, _, _) in enumerate(TRUE_CASES)]

CONTEXTS = {
    "isolated": "{}",
    "sentence": "Here is what I pasted earlier: {} - can you check why the deploy fails?",
    "fenced_code": "Try this:\n```bash\n{}\n```\nthen rerun.",
    "env_line": "export SERVICE_CONFIG={}",
    "tool_output": "$ cat .env.local\nNODE_ENV=production\n{}\nLOG_LEVEL=debug\n",
    "non_ascii": "İstanbul ekibi — «{}» — 日本語 \U0001f600",
}


def pieces(secret: str, size: int = 12) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def assert_gone(secret: str, out: str) -> None:
    leaked = sorted(p for p in pieces(secret) if p in out)
    assert not leaked, f"{len(leaked)} 12-character pieces of the secret survive, e.g. {leaked[0]!r}"


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


def test_at_least_a_hundred_provider_formats() -> None:
    assert len(PROVIDERS) >= 100
    assert len({p.kind for p in PROVIDERS}) >= 100


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: f"{p.kind}:{p.anchors[0]}")
def test_provider_examples_are_in_the_format(provider: object) -> None:
    from claude_memory.core.providers import Provider

    assert isinstance(provider, Provider)
    assert provider.examples
    for example in provider.examples:
        search = re.fullmatch if provider.group == 0 else re.search
        m = search(provider.pattern, example)
        assert m is not None, example
        assert len(m.group(provider.group)) >= 16
        if provider.token:
            assert set(m.group(0)) <= RUN_CHARS, "a token format must lie inside one token run"
            assert len(m.group(0)) >= 20
        # the anchor gate can find it: a word-start anchor starts a word of the match
        anchors = provider.anchors if provider.token else tuple(a.lower() for a in provider.anchors)
        haystack = m.group(0) if provider.token else example.lower()
        if provider.inner or not provider.token:
            assert any(a in haystack for a in anchors)
        else:  # an anchor starts a word, or is separators followed by the start of a word (":AA")
            starts = [i for i in range(len(haystack)) if i == 0 or haystack[i - 1] not in WORD_CHARS]
            assert any(haystack.startswith(a, i) for a in anchors for i in starts) or any(
                a[0] not in WORD_CHARS and a in haystack for a in anchors
            )


def test_every_rule_kind_has_a_true_case() -> None:
    kinds = {kind for kind, _, _ in TRUE_CASES}
    assert {rule.kind for rule in (*KEY_BLOCK_RULES, *RULES)} <= kinds


def test_every_provider_example_is_a_true_case() -> None:
    examples = {text for _, text, _ in TRUE_CASES}
    assert all(example in examples for p in PROVIDERS for example in p.examples)


def test_corpus_secrets_are_long_enough_to_check() -> None:
    assert all(len(secret) >= 16 and secret in text for _, text, secret in TRUE_CASES)


# --------------------------------------------------------------------------------------------
# True cases: masked whole wherever they are pasted, counted under their kind
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "text", "secret"), TRUE_CASES, ids=CASE_IDS)
def test_true_case_masked_and_counted(kind: str, text: str, secret: str) -> None:
    out, report = DEFAULT.filter(text)
    assert_gone(secret, out)
    assert report.kinds.get(kind, 0) >= 1, report.kinds
    assert report.secrets_masked == sum(report.kinds.values())
    assert "[REDACTED]" in out


@pytest.mark.parametrize(("kind", "text", "secret"), TRUE_CASES, ids=CASE_IDS)
@pytest.mark.parametrize("context", sorted(CONTEXTS))
def test_true_case_masked_in_context(context: str, kind: str, text: str, secret: str) -> None:
    out, report = DEFAULT.filter(CONTEXTS[context].format(text))
    assert_gone(secret, out)
    assert report.kinds.get(kind, 0) >= 1, report.kinds


@pytest.mark.parametrize(("kind", "text", "secret"), TRUE_CASES, ids=CASE_IDS)
def test_true_case_masked_inside_json(kind: str, text: str, secret: str) -> None:
    """Tool input and tool results reach the filter as JSON text too: quotes and newlines escaped."""
    blob = json.dumps({"key": text, "command": f"echo {text}"})
    out, report = DEFAULT.filter(blob)
    assert_gone(secret, out)
    assert_gone(json.dumps(secret)[1:-1], out)
    assert report.secrets_masked >= 2


@pytest.mark.parametrize(("kind", "text", "secret"), TRUE_CASES, ids=CASE_IDS)
def test_true_case_filter_is_idempotent(kind: str, text: str, secret: str) -> None:
    for template in CONTEXTS.values():
        once, _ = DEFAULT.filter(template.format(text))
        twice, report = DEFAULT.filter(once)
        assert twice == once
        assert report.secrets_masked == 0


@pytest.mark.parametrize(("kind", "text", "secret"), TRUE_CASES, ids=CASE_IDS)
def test_true_case_with_preserved_lines_and_other_marker(kind: str, text: str, secret: str) -> None:
    flt = PrivacyFilter(PrivacySettings(secret_marker="***", preserve_line_count=True))
    out, _ = flt.filter(text)
    assert_gone(secret, out)
    assert out.count("\n") == text.count("\n")


def test_provider_formats_count_exactly_once_each() -> None:
    for kind, text, _ in TRUE_CASES[: sum(len(p.examples) for p in PROVIDERS)]:
        _, report = DEFAULT.filter(f"first {text} second")
        assert report.kinds == {kind: 1}, (kind, text[:40])


def test_per_kind_counts_of_a_mixed_text() -> None:
    by_kind = {}
    for kind, text, _ in TRUE_CASES:
        by_kind.setdefault(kind, text)
    chosen = ("github", "huggingface", "aws", "jwt", "url_password", "stripe", "slack")
    text = "\n".join(f"{i}. {by_kind[k]} (from the {k} console)" for i, k in enumerate(chosen)) + "\npassword=hunter22x"
    out, report = DEFAULT.filter(text)
    assert report.kinds == {**{k: 1 for k in chosen}, "assignment": 1}
    assert report.secrets_masked == len(chosen) + 1
    assert report.as_metadata()["secret_kinds"] == dict(sorted(report.kinds.items()))
    assert out.count("[REDACTED]") == len(chosen) + 1


# --------------------------------------------------------------------------------------------
# The four formats of the issue (they reached the store verbatim)
# --------------------------------------------------------------------------------------------


def _case(kind: str, needle: str) -> tuple[str, str]:
    return next((text, secret) for k, text, secret in TRUE_CASES if k == kind and needle in text)


@pytest.mark.parametrize(
    ("kind", "needle"),
    [
        ("huggingface", "hf_"),
        ("discord", "."),  # modern bot token: base64 user id . 6 . 27-38
        ("azure", "AccountKey="),  # storage connection string
        ("assignment", "aws_secret_access_key = "),
        ("assignment", "aws configure set"),
        ("assignment", "AWS Secret Access Key: "),
        ("prose", "my AWS secret key is"),
    ],
)
def test_issue_formats_masked(kind: str, needle: str) -> None:
    text, secret = _case(kind, needle)
    for template in CONTEXTS.values():
        out, report = DEFAULT.filter(template.format(text))
        assert_gone(secret, out)
        assert report.kinds.get(kind, 0) >= 1


def test_azure_connection_string_keeps_its_other_fields() -> None:
    text, secret = _case("azure", "AccountKey=")
    out = DEFAULT.filter(text)[0]
    assert out == text.replace(secret, "[REDACTED]")
    assert "AccountName=acmeprod" in out and "EndpointSuffix=core.windows.net" in out


def test_discord_token_needs_a_numeric_user_id() -> None:
    text, _ = _case("discord", ".")
    rest = text.split(".", 1)[1]
    lookalike = "MyComponentNameIsLongerX1." + rest  # same shape, the first part is not base64 of digits
    assert DEFAULT.filter(lookalike)[0] == lookalike
    assert DEFAULT.filter(text)[0] == "[REDACTED]"


# --------------------------------------------------------------------------------------------
# Near misses: unchanged
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", NEAR_MISSES, ids=[f"{i:02d}" for i in range(len(NEAR_MISSES))])
def test_near_miss_unchanged(text: str) -> None:
    for template in ("{}", "In the log: {}\nnext line", "```\n{}\n```", "İstanbul «{}» — 日本語"):
        wrapped = template.format(text)
        out, report = DEFAULT.filter(wrapped)
        assert out == wrapped
        assert report.secrets_masked == 0 and report.kinds == {}


def test_near_misses_next_to_a_secret_survive() -> None:
    kind, text, _ = TRUE_CASES[0]
    blob = "\n".join(NEAR_MISSES) + f"\n{text}\n"
    out, report = DEFAULT.filter(blob)
    assert out == "\n".join(NEAR_MISSES) + "\n[REDACTED]\n"
    assert report.kinds == {kind: 1}


# --------------------------------------------------------------------------------------------
# detect-secrets patterns replaced by provider entries: still masked
# --------------------------------------------------------------------------------------------


def _replaced_detect_secrets_patterns() -> list[re.Pattern[str]]:
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector

    detectors = (GitHubTokenDetector, GitLabTokenDetector, OpenAIDetector, PypiTokenDetector, SlackDetector,
                 SquareOAuthDetector, StripeDetector)  # fmt: skip
    return [p for d in detectors for p in d.denylist if isinstance(p, re.Pattern)]


@pytest.mark.parametrize("pattern", _replaced_detect_secrets_patterns(), ids=lambda p: p.pattern[:24])
def test_detect_secrets_formats_replaced_by_providers_still_masked(pattern: re.Pattern[str]) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.from_regex(pattern, fullmatch=True))
    def check(token: str) -> None:
        if len(token) < 20 or not token.isascii() or not re.search(r"\d", token):
            return  # token rules only ever ran on runs of >= 20 characters
        if not re.fullmatch(pattern.pattern, token, pattern.flags & ~re.IGNORECASE):
            return  # providers issue their prefixes in one case (`xoxb-`, not `XoXB-`)
        if re.search(r"[^A-Za-z0-9]{2}|[\\\s]|[-_]$", token):
            return  # not a credential any provider issues (`--`, a backslash, a trailing dash)
        out, report = DEFAULT.filter(f"use {token} now")
        assert out == "use [REDACTED] now", token
        assert report.secrets_masked == 1

    check()


@pytest.mark.parametrize(
    "text",
    ["sk-" * 30_000, "key=" * 25_000, "_KEY_A" * 16_000 + "=x", ("accountKey: " + "a" * 40 + " ") * 1_500],
    ids=["sk-chain", "key-chain", "env-name-chain", "qualified-key-lines"],
)
def test_candidates_rejected_by_a_check_cost_linear_time(text: str) -> None:
    """A rejected candidate is rescanned from the next position: bounded lengths keep that linear
    (the unbounded `sk-` pattern took ~90 s on this text)."""
    import time

    start = time.perf_counter()
    DEFAULT.filter(text)
    assert time.perf_counter() - start < 10
