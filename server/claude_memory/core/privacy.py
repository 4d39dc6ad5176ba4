"""The privacy filter (SEED_SPEC §7): private sections removed, then credentials masked.

Applied to every text before it is written to disk, embedded, or returned by MCP / the web API.
Order (SEED_SPEC §7.2): private sections (``claude_memory.core.private_sections``) → built-in
credential rules (``claude_memory.core.secrets``, applied by ``claude_memory.core.masking``) →
custom patterns → marker clean-up (consecutive markers collapse into one).  This module holds the
settings, the report and ``PrivacyFilter``, which composes those steps; ``filter`` takes one text,
``filter_value`` every string inside a JSON-like value.  Pure: no I/O, no logging, no module-level
mutable state; the report only ever holds counts, flags and lengths (never content), and no
exception message quotes content.  Speed: see ``claude_memory.core.masking``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from claude_memory.core.masking import mask_custom, mask_secrets
from claude_memory.core.private_sections import FORMATS, remove_private_sections, sentinel

__all__ = ["PrivacyFilter", "PrivacyReport", "PrivacySettings"]

_MAX_ROUNDS = 4
_MEMO_CHARS = 300  # texts up to this long have their result remembered …
_MEMO_ENTRIES = 50_000  # … this many at most (then the memo starts again)
_SHORTEST_MATCH = 8


@dataclass(frozen=True)
class PrivacySettings:
    private_formats: tuple[str, ...] = ("xml",)
    marker: str = "[PRIVATE]"
    secret_marker: str = "[REDACTED]"
    custom_patterns: tuple[str, ...] = ()
    preserve_line_count: bool = False


@dataclass
class PrivacyReport:
    """What a filter run removed, as counts, flags and lengths only (never content).

    ``kinds`` counts the masked secrets by kind: the provider of a recognised format ("github",
    "aws", "huggingface", … : the ``kind`` of ``claude_memory.core.providers``), or how the secret
    was recognised ("private_key", "jwt", "url_password", "authorization", "assignment" for
    ``KEY=value``-style pairs and ``name value`` CLI pairs, "cli_flag" for ``--password value``,
    "prose" for a secret named in a sentence, "custom" for the custom patterns).  Each masked span
    counts once, under the first rule (in ``claude_memory.core.secrets.RULES`` order) that matched
    in it.  ``secrets_masked`` is always the sum of its values; ``as_metadata`` reports it under
    ``"secret_kinds"``, and only when it is not empty."""

    private_sections: int = 0
    secrets_masked: int = 0
    unclosed_private_tags: bool = False
    original_length: int = 0
    filtered_length: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    def count_secrets(self, kinds: dict[str, int]) -> None:
        """Add masked secrets by kind (keeps ``secrets_masked`` the sum of ``kinds``)."""
        for kind, count in kinds.items():
            if count:
                self.kinds[kind] = self.kinds.get(kind, 0) + count
                self.secrets_masked += count

    def merge(self, other: PrivacyReport) -> None:
        self.original_length += other.original_length
        self.filtered_length += other.filtered_length
        if other.private_sections or other.secrets_masked or other.unclosed_private_tags:
            self.private_sections += other.private_sections
            self.secrets_masked += other.secrets_masked
            for kind, count in other.kinds.items():
                self.kinds[kind] = self.kinds.get(kind, 0) + count
            self.unclosed_private_tags = self.unclosed_private_tags or other.unclosed_private_tags

    def as_metadata(self) -> dict[str, int | bool | dict[str, int]]:
        """The report as JSON-ready metadata; ``kinds`` (sorted) under "secret_kinds", only when not empty."""
        metadata: dict[str, int | bool | dict[str, int]] = {
            "private_sections": self.private_sections,
            "secrets_masked": self.secrets_masked,
            "unclosed_private_tags": self.unclosed_private_tags,
            "original_length": self.original_length,
            "filtered_length": self.filtered_length,
        }
        if self.kinds:
            metadata["secret_kinds"] = dict(sorted(self.kinds.items()))
        return metadata


class PrivacyFilter:
    """Its settings are fixed at construction; safe to share between threads (the memo of short texts'
    results only ever holds what ``filter`` would compute again: a race computes one twice)."""

    invalid_patterns: tuple[str, ...]

    def __init__(self, settings: PrivacySettings | None = None) -> None:
        self.settings = settings if settings is not None else PrivacySettings()
        unknown = [f for f in self.settings.private_formats if f not in FORMATS]
        if unknown:
            raise ValueError(f"unknown private format(s) {unknown!r}; expected some of {FORMATS}")
        self._formats = tuple(f for f in FORMATS if f in self.settings.private_formats)
        compiled: list[re.Pattern[str]] = []
        invalid: list[str] = []
        for pattern in self.settings.custom_patterns:
            try:
                compiled.append(re.compile(pattern))
            except (re.error, TypeError, ValueError, OverflowError, RecursionError):
                invalid.append(pattern)
        self._custom = tuple(compiled)
        self.invalid_patterns = tuple(invalid)
        collapse: list[tuple[str, re.Pattern[str]]] = []
        marker, secret = self.settings.marker, self.settings.secret_marker
        if marker:
            m = re.escape(marker)
            collapse.append((marker, re.compile(f"{m}(?:\\s*{m})+")))
        if secret and secret != marker:
            s = re.escape(secret)
            collapse.append((secret, re.compile(f"{s}(?:[ \\t]*{s})+")))
        self._collapse = tuple(collapse)
        self._markers = tuple(m for m in (secret, marker) if m)
        # Short texts come back again and again (paths, cwd, branch names, tool-input keys and values: 84 % of
        # an import's calls), and filtering is a pure function of the text: remember their results.
        self._memo: dict[str, tuple[str, PrivacyReport]] = {}

    # -- public ---------------------------------------------------------------------------

    def filter(self, text: str) -> tuple[str, PrivacyReport]:
        if not isinstance(text, str):
            raise TypeError(f"PrivacyFilter.filter expects str, got {type(text).__name__}")
        out, report = self._remembered(text)
        return out, replace(report, kinds=dict(report.kinds))  # the caller's own copy

    def _remembered(self, text: str) -> tuple[str, PrivacyReport]:
        """``filter``'s answer; for a short text, a shared one (its report must not be changed)."""
        if len(text) > _MEMO_CHARS:
            return self._filter(text)
        known = self._memo.get(text)
        if known is None:
            if len(self._memo) >= _MEMO_ENTRIES:
                self._memo.clear()
            known = self._memo[text] = self._filter(text)
        return known

    def _filter(self, text: str) -> tuple[str, PrivacyReport]:
        report = PrivacyReport(original_length=len(text))
        if len(text) < _SHORTEST_MATCH and not self._custom:
            # Too short for any tag pair or credential rule (the shortest, "pwd:abcd", has 8 chars).
            report.filtered_length = len(text)
            return text, report
        out = text
        # Removed sections hold a sentinel until the end, so that a marker such as "[PRIVATE]"
        # is never re-read as a bracket tag.  An empty marker is used directly.  Masking only
        # removes text, so without "private" in the input no later round can need one either.
        has_tag_word = "private" in text.lower()
        token = sentinel(text) if self._formats and self.settings.marker and has_tag_word else ""
        # Normally one round.  A mask that cuts through a code span can re-expose a private tag
        # the span protected; another round then reaches the fixpoint (filter() is idempotent).
        for _ in range(_MAX_ROUNDS):
            masked_before = report.secrets_masked
            had_code = "`" in out
            out = self._private(out, report, token)
            out = self._secrets(out, report, token)
            if self._custom:
                out = self._apply_custom(out, report, token)
            if not (report.secrets_masked > masked_before and had_code and self._formats and "private" in out.lower()):
                break
        if token and report.private_sections:
            out = out.replace(token, self.settings.marker)
        out = self._cleanup(out)
        report.filtered_length = len(out)
        return out, report

    def filter_value(self, value: object, report: PrivacyReport) -> object:
        if isinstance(value, str):
            filtered, sub = self._remembered(value)
            report.merge(sub)
            return filtered
        if isinstance(value, dict):
            return {self.filter_value(k, report): self.filter_value(v, report) for k, v in value.items()}
        if isinstance(value, list):
            return [self.filter_value(v, report) for v in value]
        if isinstance(value, tuple):
            return tuple(self.filter_value(v, report) for v in value)
        return value

    # -- private sections -----------------------------------------------------------------

    def _private(self, text: str, report: PrivacyReport, token: str) -> str:
        if not self._formats or "private" not in text.lower():
            return text  # the common case, without a call
        result = remove_private_sections(text, self._formats, self.settings.preserve_line_count, token)
        report.private_sections += result.sections
        report.unclosed_private_tags = report.unclosed_private_tags or result.unmatched
        return result.text

    # -- credentials ----------------------------------------------------------------------

    def _secrets(self, text: str, report: PrivacyReport, token: str) -> str:
        markers = (*self._markers, token) if token else self._markers
        text, kinds = mask_secrets(text, markers, self.settings.secret_marker, self.settings.preserve_line_count)
        report.count_secrets(kinds)
        return text

    # -- custom patterns and clean-up -----------------------------------------------------

    def _apply_custom(self, text: str, report: PrivacyReport, token: str) -> str:
        protected = tuple(m for m in (self.settings.secret_marker, self.settings.marker, token) if m)
        marker, preserve = self.settings.secret_marker, self.settings.preserve_line_count
        text, masked = mask_custom(text, self._custom, protected, marker, preserve)
        report.count_secrets({"custom": masked})
        return text

    def _cleanup(self, text: str) -> str:
        """Collapse consecutive markers into one (keeping their newlines when preserving)."""
        preserve = self.settings.preserve_line_count
        for keep, pattern in self._collapse:
            if text.count(keep) < 2:
                continue

            def _one(m: re.Match[str], keep: str = keep) -> str:
                return keep + ("\n" * m.group(0).count("\n") if preserve else "")

            text = pattern.sub(_one, text)
        return text
