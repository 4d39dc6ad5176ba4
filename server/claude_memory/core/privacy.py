"""Privacy filter: private-tag removal and credential masking (SEED_SPEC §7).

Applied to every text before it is written to disk, embedded, or returned by MCP / the web API.
Order (SEED_SPEC §7.2): private sections → built-in credential patterns → custom patterns →
marker clean-up.  Pure: no I/O, no logging, no module-level mutable state; the report only ever
holds counts, flags and lengths (never content), and no exception message quotes content.

Private sections (§7.1)
    Formats ``xml`` (``<private>…</private>``), ``bracket`` (``[private]…[/private]``) and
    ``comment`` (``<!-- private -->…<!-- /private -->``), case-insensitive, spanning newlines,
    strict tag spelling.  Fenced code blocks and inline code spans are swapped for placeholders
    built from a Private-Use-Area character absent from the text (so they cannot collide) and
    restored afterwards.  Tags are paired with a stack: a nested section is removed as a whole
    (the outermost pair wins) and an unclosed opening tag never swallows a later closed section.
    Unmatched tags (opening or closing) are left in place and flagged.  Removal repeats until
    nothing changes (removing a section can join fragments into a new tag).

Credentials (§7.2) — masked everywhere, inside code blocks too
    * detect-secrets (Yelp) plugin ``denylist`` regexes are compiled into the matcher: AWS key
      ids and quoted AWS secrets, Azure storage keys, URL passwords (``BasicAuthDetector``),
      Discord, GitHub, GitLab (all token kinds), Mailchimp, ``.npmrc`` auth tokens, legacy
      OpenAI keys, PyPI, SendGrid, Slack tokens and webhooks, Square, Stripe, Telegram, Twilio
      (the tests also check every ``PrivateKeyDetector`` header).  Not used: the high-entropy
      plugins (they mask hashes/uuids), ``IPPublicDetector`` (not a secret),
      ``ArtifactoryDetector`` (its ``AP…`` pattern matches ordinary words) and the keyword-based
      Cloudant / IBM / SoftLayer patterns (covered by the key/value rule below).
    * Own patterns for what detect-secrets lacks or only half covers: Anthropic (``sk-ant-``),
      OpenAI ``sk-``/``sk-proj-``, GitHub fine-grained (``github_pat_``), Google (``AIza``),
      long Stripe keys, npm ``npm_``, PyPI, Slack ``xapp-``, JWTs (``eyJ….eyJ….sig``;
      detect-secrets' JWT regex stops before the signature), whole PEM / PuTTY private-key
      blocks, ``Authorization:`` headers, ``Bearer``/``Basic`` credentials, ``--password x``
      flags and key/value assignments whose key names a secret (the value is masked, the key
      kept: ``DB_PASSWORD=[REDACTED]``, ``"token": "[REDACTED]"``).
    * Not masked (code and placeholders): ``password: str``, ``token = None``,
      ``secret = get_secret()``, ``${PASSWORD}``, ``$PASSWORD``, ``<your-token>``, dotted
      attribute references, ``api_key=api_key`` and values shorter than 4 characters.

Speed (Python 3.11, 2-core dev container shared with other jobs, ``python -m timeit``, e.g.
``PYTHONPATH=server .venv/bin/python -m timeit -s "from claude_memory.core.privacy import
PrivacyFilter as F; f=F(); t=('The quick brown fox jumps over the lazy dog, then we refactor
the importer. '*8)[:500]" "f.filter(t)"``):
    * 500-char prose, nothing to mask ............................ ~11 µs per text
    * 500-char Python snippet, nothing to mask (3 ``api_key=None``) ~26 µs per text
    * ~500-char text with 3 credentials (token, URL pw, env var) .. ~34 µs per text
    * 500-char text with one private section ..................... ~18 µs per text
    * 100 KB of Python source: ~9 ms; 1 MB of prose: ~26 ms.
    * for comparison, detect-secrets' own ``scan_line`` (default plugins, inside
      ``default_settings()``) on the same 500-char prose: ~2,100 µs per text (~200× slower;
      ~4,800 µs on a text with credentials), so only its pattern lists are reused.
    How: every rule starts with a literal (CPython's ``re`` then uses a fast substring scan;
    a leading look-behind, IGNORECASE or a many-branch alternation costs 5-250 µs per text);
    rules run only when one of their anchor substrings is present; keyword rules run on the
    lower-cased text; token rules run only on the runs of >= 20 token characters.  Importing
    the detect-secrets package costs ~0.1-0.2 s once per process.

Known limitations
    * No entropy scanning: a credential with no known prefix and no secret-naming key
      (``my password is hunter2``, a bare random string) is not masked; token patterns need the
      token inside a run of >= 20 token characters.
    * Key/value heuristics can miss (``user, password = "a", "b"`` masks the first value) or
      over-mask prose (``token: whatever1``); quoted values over 1,000 characters are skipped.
    * Only ```` ``` ```` fences and single-line inline spans protect tags (not ``~~~`` fences).
    * With the ``bracket`` format and the default marker, re-filtering an output re-reads
      ``[PRIVATE]`` as an opening tag (flagged; text unchanged unless a stray ``[/private]``
      follows).  Custom patterns are trusted (no protection against catastrophic backtracking).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

__all__ = ["PrivacyFilter", "PrivacyReport", "PrivacySettings"]

# --------------------------------------------------------------------------------------------
# Public data types
# --------------------------------------------------------------------------------------------

_FORMATS = ("xml", "bracket", "comment")


@dataclass(frozen=True)
class PrivacySettings:
    private_formats: tuple[str, ...] = ("xml",)
    marker: str = "[PRIVATE]"
    secret_marker: str = "[REDACTED]"
    custom_patterns: tuple[str, ...] = ()
    preserve_line_count: bool = False


@dataclass
class PrivacyReport:
    private_sections: int = 0
    secrets_masked: int = 0
    unclosed_private_tags: bool = False
    original_length: int = 0
    filtered_length: int = 0

    def merge(self, other: PrivacyReport) -> None:
        self.private_sections += other.private_sections
        self.secrets_masked += other.secrets_masked
        self.unclosed_private_tags = self.unclosed_private_tags or other.unclosed_private_tags
        self.original_length += other.original_length
        self.filtered_length += other.filtered_length

    def as_metadata(self) -> dict[str, int | bool]:
        return {
            "private_sections": self.private_sections,
            "secrets_masked": self.secrets_masked,
            "unclosed_private_tags": self.unclosed_private_tags,
            "original_length": self.original_length,
            "filtered_length": self.filtered_length,
        }


# --------------------------------------------------------------------------------------------
# Private sections
# --------------------------------------------------------------------------------------------

# Matched against the lower-cased text (literal first character: fast scan); group 1 is "/" for
# a closing tag.  The IGNORECASE twins are used when str.lower() changes the text's length.
_TAG_SOURCES = {
    "xml": r"<(/?)private>",
    "bracket": r"\[(/?)private\]",
    "comment": r"<!--\s*(/?)private\s*-->",
}
_TAGS = {name: re.compile(src) for name, src in _TAG_SOURCES.items()}
_TAGS_CI = {name: re.compile(src, re.IGNORECASE) for name, src in _TAG_SOURCES.items()}
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_PRIVATE_USE = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))
_MAX_PRIVATE_PASSES = 8
_MAX_ROUNDS = 4


def _sentinel(text: str) -> str:
    """A private-use character that does not occur in ``text`` (normally U+E000)."""
    for first, last in _PRIVATE_USE:
        for cp in range(first, last + 1):
            if chr(cp) not in text:
                return chr(cp)
    # only a text holding all 137,468 private-use characters gets here
    raise ValueError("text contains every private-use character; cannot build a placeholder")


@dataclass
class _PrivatePass:
    text: str
    sections: int
    unmatched: bool


def _remove_sections_once(text: str, formats: Iterable[str], preserve: bool, marker_token: str) -> _PrivatePass:
    sentinel = _sentinel(text + marker_token)
    codes: list[str] = []

    def _protect(m: re.Match[str]) -> str:
        # the placeholder keeps the code's newlines so that preserve_line_count can count them
        code = m.group(0)
        codes.append(code)
        return f"{sentinel}{len(codes) - 1}{chr(10) * code.count(chr(10))}{sentinel}"

    work = _CODE.sub(_protect, text) if "`" in text else text
    sections = 0
    unmatched = False
    for fmt in formats:
        low = work.lower()
        same = len(low) == len(work)
        pattern = _TAGS[fmt] if same else _TAGS_CI[fmt]
        stack: list[re.Match[str]] = []
        pairs: list[tuple[int, int, int, int]] = []
        for m in pattern.finditer(low if same else work):
            if not m.group(1):
                stack.append(m)
            elif stack:
                opening = stack.pop()
                pairs.append((opening.start(), opening.end(), m.start(), m.end()))
            else:
                unmatched = True  # stray closing tag
        if stack:
            unmatched = True
        if not pairs:
            continue
        pairs.sort()
        out: list[str] = []
        last = 0
        for start, inner_start, inner_end, end in pairs:
            if start < last:  # nested inside an outer section already removed
                continue
            out.append(work[last:start])
            replacement = marker_token if work[inner_start:inner_end].strip() else ""
            if preserve:
                replacement += "\n" * work.count("\n", start, end)
            out.append(replacement)
            sections += 1
            last = end
        out.append(work[last:])
        work = "".join(out)
    if codes:
        parts = work.split(sentinel)
        # odd parts are placeholder indices (a placeholder is only ever removed whole)
        for i in range(1, len(parts), 2):
            parts[i] = codes[int(parts[i].rstrip("\n"))]
        work = "".join(parts)
    return _PrivatePass(work, sections, unmatched)


# --------------------------------------------------------------------------------------------
# Credential rules
# --------------------------------------------------------------------------------------------
#
# CPython's ``re`` has no multi-pattern search, so: every rule starts with a literal; it runs
# only when one of its anchors (plain substrings, tested with ``in``) occurs; keyword rules run
# on the lower-cased text with lower-case literals (an IGNORECASE twin is used when
# ``str.lower`` changes the length); token rules run only on the runs of >= 20 token
# characters, which every supported token lies inside.

_MaskCheck = Callable[[re.Match[str], str], bool]  # (match, original value) -> mask it?
_VALUE = ("dq", "sq", "uq")
_WORDCHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:]{20,}")


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]  # runs only if one occurs (token rules: in a token run, as is;
    #                           keyword rules: in the lower-cased text, lower-cased)
    group: int | str = 0  # what to mask: 0 = whole match, a group, or "value" (first of _VALUE)
    check: _MaskCheck | None = None
    token: bool = True  # matched inside token runs only
    lower: bool = False  # pattern written for the lower-cased text
    fallback: re.Pattern[str] | None = None  # IGNORECASE twin of a `lower` pattern
    left_boundary: bool = False  # reject matches preceded by [A-Za-z0-9_]
    needs_sep: bool = False  # (keyword rules) cannot match a text without "=" or ":"


def _looks_random(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mixed_classes(value: str) -> bool:
    classes = (
        any(c.isdigit() for c in value),
        any(c.isupper() for c in value),
        any(c.islower() for c in value),
    )
    return sum(classes) >= 2


def _check_random(m: re.Match[str], value: str) -> bool:
    return _looks_random(value)


def _check_mixed(m: re.Match[str], value: str) -> bool:
    return _mixed_classes(value)


_PLACEHOLDER_WORDS = frozenset(
    (
        "none", "null", "nil", "true", "false", "undefined", "str", "string", "bytes", "int",
        "integer", "bool", "boolean", "float", "number", "any", "object", "dict", "list",
        "optional", "secretstr", "required", "empty", "redacted", "hidden", "masked", "unset",
        "missing", "self", "cls", "this", "void", "char", "text", "type", "default", "value",
        "enabled", "disabled", "bearer", "basic", "oauth", "oauth2", "token", "password",
        "secret", "yes", "off",
    )
)  # fmt: skip
_PLACEHOLDER_CHARS = frozenset("*xX.•-_#?")
_DOTTED_IDENT = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_SNAKE_WORD = re.compile(r"[a-z_]+|[A-Z][a-z]+(?:[A-Z][a-z]+)*")  # `user`, `next_char`, `Token`
_PROSE_NEXT = re.compile(r" \w")
_TYPE_NAME = re.compile(r"(?:[A-Z][a-z0-9]+){2,}")  # `auth: AuthType`
_COLOR = re.compile(r"#[0-9a-fA-F]{3,8}")
_TEMPLATE = re.compile(r"\{[^{}]*\}|%[sdr]|%\([a-z_]+\)")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+")  # versions, OIDs, IP addresses


def _is_placeholder(value: str) -> bool:
    v = value.strip()
    if len(v) < 4 or v.lower() in _PLACEHOLDER_WORDS:
        return True
    if v[0] in "$%" or v.startswith(("<", "your_", "your-", "YOUR_", "YOUR-")):
        return True
    if _TEMPLATE.search(v) or _COLOR.fullmatch(v):  # "{0}:{1}", "{{ secrets.X }}", "%s", "#fff"
        return True
    return set(v) <= _PLACEHOLDER_CHARS


def _check_token_value(m: re.Match[str], value: str) -> bool:
    return not _is_placeholder(value)


def _ci(source: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A lower-case pattern for the lower-cased text, and its IGNORECASE twin."""
    return re.compile(source), re.compile(source, re.IGNORECASE)


# -- key/value assignments: KEY=value, KEY: value, "key": "value", export KEY="value" ----------
# One rule per key-word family, each starting with its literal.  The key may carry any prefix
# (DB_PASSWORD, x-api-key, client_secret) but must end with the key word (so "tokens",
# "max_tokens" and "token_count" are not keys).
_KEY_FAMILIES = (
    ("pass", r"pass(?:word|wd|phrase)"),
    ("pwd", r"pwd"),
    ("secret", r"secret(?:[_-]?(?:access[_-]?)?key)?"),
    ("key", r"api[_-]?key"),
    ("token", r"token"),
    ("key", r"access[_-]?key(?:[_-]?id)?"),
    ("private", r"private[_-]?key"),
    ("auth", r"auth"),
    ("credential", r"credentials?"),
)
_KEY_WORD = "(?:" + "|".join(src for _, src in _KEY_FAMILIES) + ")"
_ASSIGN_TAIL = (
    r"(?:\\?[\"'])?[ \t]*(?P<sep>==|=>|:=|=|:)[ \t]*"
    r"(?:\\?\"(?P<dq>(?:[^\"\\\n]|\\[^\"\n]){0,1000})\\?\""
    r"|'(?P<sq>[^'\n]{0,1000})'"
    r"|(?P<uq>[^\s\"'`,;&(){}\[\]<>\\]+))"
)
_FLAG, _FLAG_CI = _ci(
    r"--(?<![a-z0-9_\-]--)[a-z0-9\-]*?" + _KEY_WORD + r"[ \t]+"
    r"(?:\"(?P<dq>[^\"\n]{0,1000})\"|'(?P<sq>[^'\n]{0,1000})'"
    r"|(?P<uq>[^\s\"'`,;(){}\[\]<>\\-][^\s\"'`,;(){}\[\]<>\\]*))"
)
_KEY_WORD_CI = re.compile(_KEY_WORD, re.IGNORECASE)
_KEY_CHARS = _WORDCHARS | {".", "-"}


def _key_before(m: re.Match[str]) -> str:
    """The whole key name ending with the key word the match starts with ("" for CLI flags)."""
    s = m.string
    start = m.start()
    while start > 0 and s[start - 1] in _KEY_CHARS:
        start -= 1
    kw = _KEY_WORD_CI.match(s, m.start())
    return s[start : kw.end() if kw else m.start()].lstrip("-.")


def _check_assignment(m: re.Match[str], value: str) -> bool:
    if _is_placeholder(value) or _VERSION.fullmatch(value):
        return False
    sep = m.group("sep") if "sep" in m.re.groupindex else None
    unquoted = m.group("uq") is not None
    if sep == "==" and (unquoted or value.isalpha()):
        return False  # a comparison with code or a word: `if token == "lambda"`
    if not unquoted:
        # `'Credential=' + access_key + '/'`: the "value" is code between two string literals
        return value == value.strip()
    # unquoted: reject code (calls, subscripts, attribute references, variable names) and paths
    nxt = m.string[m.end() : m.end() + 1]
    if nxt in ("(", "["):
        return False
    if value.startswith(("/", "./", "../", "~/")):
        return False
    if _DOTTED_IDENT.fullmatch(value):
        return False
    before_sep = m.string[m.start("sep") - 1 : m.start("sep")] if sep else ""
    if sep == "=" and before_sep in (" ", "\t") and _SNAKE_WORD.fullmatch(value):
        return False  # `x = name` is code when the name looks like a variable
    if sep == ":" and value.isalpha() and _PROSE_NEXT.match(m.string, m.end()):
        return False  # "pwd: expected bytes, got …" is a sentence, not a YAML value
    if sep == ":" and _TYPE_NAME.fullmatch(value):
        return False  # a type annotation
    if _IDENT.fullmatch(value):
        key = _key_before(m).lower()
        if value.lower() in (key, key.rsplit(".", 1)[-1]):
            return False  # `api_key=api_key`
        if ("_" in value or nxt in (")", ",")) and _KEY_WORD_CI.search(value):
            return False  # a variable: `f(password=KEY_PASSWORD)`, `access_key: access_key_id`
    return True


def _assignment_rules() -> list[_Rule]:
    rules = []
    for anchor, source in _KEY_FAMILIES:
        low, ci = _ci(source + _ASSIGN_TAIL)
        rules.append(_Rule("assignment", low, (anchor,), "value", _check_assignment, False, True, ci, needs_sep=True))
    return rules


# `aws configure set aws_secret_access_key VALUE`, `heroku config:set`-style "name value" pairs: a
# secret-naming key, blanks, then a long random-looking value (prose after such a name has no digits).
_SPACED, _SPACED_CI = _ci(
    r"(?<![a-z0-9_])(?:aws_secret_access_key|aws_session_token|secret_access_key|client_secret|api_key|apikey"
    r"|access_token|auth_token|refresh_token)[ \t]+(?P<v>[a-z0-9/+=_\-.]{16,})"
)


def _check_spaced(m: re.Match[str], value: str) -> bool:
    return _looks_random(value) and not _is_placeholder(value)


# -- HTTP credentials -------------------------------------------------------------------------
_BEARER, _BEARER_CI = _ci(r"bearer(?<![a-z0-9_]bearer)[ \t]+(?P<v>[a-z0-9\-._~+/]+=*)")


def _check_bearer(m: re.Match[str], value: str) -> bool:
    if len(value) < 8 or _is_placeholder(value):
        return False
    if "(" in value or "[" in value:
        return False  # code: `authorization = authorization[1].encode(…)`
    if value.lower().startswith(("authorization", "bearer", "basic", "token")):
        return False
    return any(c.isdigit() for c in value) or (len(value) >= 20 and _mixed_classes(value))


_BASIC, _BASIC_CI = _ci(r"basic(?<![a-z0-9_]basic)[ \t]+(?P<v>[a-z0-9+/]{6,}={0,2})(?![a-z0-9+/=])")


def _check_basic(m: re.Match[str], value: str) -> bool:
    """Basic credentials are base64("user:password")."""
    padded = value + "=" * (-len(value) % 4)
    try:
        decoded = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


_AUTH_HEADER, _AUTH_HEADER_CI = _ci(
    r"authorization(?<![a-z0-9_]authorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
    r"(?:(?:bearer|basic|token|digest|negotiate|apikey|sso-key)[ \t]+)?"
    r"(?P<v>[^\s\"'\\,;]{8,})"
)

# -- private keys -----------------------------------------------------------------------------
# PEM (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP, plain …) and SSH2 ("---- BEGIN … ----") blocks
_PEM = re.compile(
    r"----(?:-|(?= ))[ ]?BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?[ ]?-{4,5}"
    r"(?:(?:[^-]|-(?!---)){0,16384}?-{4,5}[ ]?END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?[ ]?-{4,5}"  # whole block …
    # … or, when truncated, the header and the key lines that follow it
    r"|(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*))*)",
)
_PUTTY = re.compile(
    r"Private-(?:Lines:[ \t]*\d+(?:(?:\r?\n|\\r?\\n)[A-Za-z0-9+/=]+(?=[\r\n\\]|$))+"
    r"|MAC:[ \t]*[0-9a-fA-F]{16,})"
)


# -- tokens -----------------------------------------------------------------------------------
_RIGHT = r"(?![A-Za-z0-9_])"


def _tok(source: str, anchors: tuple[str, ...], check: _MaskCheck | None = None) -> _Rule:
    """Own token pattern starting with a literal prefix, bounded on both sides."""
    return _Rule("token", re.compile(source + _RIGHT), anchors, check=check, left_boundary=True)


def _ds(pattern: Any, anchors: tuple[str, ...], *, whole: bool = False, token: bool = True,
        needs_sep: bool = False, check: _MaskCheck | None = _check_token_value) -> _Rule:  # fmt: skip
    """A detect-secrets denylist regex → rule.  A pattern with a capture group masks group 1
    (the secret) unless ``whole`` (for groups that only alternate prefixes); a pattern masked as
    a whole gets token boundaries."""
    p: re.Pattern[str] = pattern
    if p.groups and not whole:
        return _Rule("detect-secrets", p, anchors, 1, check, token, needs_sep=needs_sep)
    bounded = p if p.flags & re.VERBOSE else re.compile(f"(?:{p.pattern}){_RIGHT}", p.flags)
    return _Rule("detect-secrets", bounded, anchors, 0, check, token, left_boundary=True, needs_sep=needs_sep)


def _ds_all(detector: Any, anchors: tuple[str, ...], **kwargs: Any) -> list[_Rule]:
    return [_ds(p, anchors, **kwargs) for p in detector.denylist if isinstance(p, re.Pattern)]


_URL_NO_USER = re.compile(r"://:([^:/?#\[\]@!$&'()*+,;=\s]+)@")
_AWS_ID_PATTERNS = [p for p in AWSKeyDetector.denylist if not p.groups]
_AWS_SECRET_PATTERNS = [p for p in AWSKeyDetector.denylist if p.groups]
_GITHUB = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_GITLAB = (
    *("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941"),
    *("glcbt-", "glimt-", "glptt-", "glagent-", "gloas-"),
)

_RULES: tuple[_Rule, ...] = (
    # whole private-key blocks first (their base64 body could contain token-looking runs)
    _Rule("private_key", _PEM, ("private key",), token=False),
    _Rule("putty_key", _PUTTY, ("private-lines", "private-mac"), token=False),
    # own token patterns (broader than detect-secrets' where both exist)
    _tok(r"sk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    _tok(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",), _check_random),
    _tok(r"github_pat_[A-Za-z0-9_]{22,}", ("github_pat_",)),
    _tok(r"AIza[0-9A-Za-z_\-]{35}", ("AIza",)),
    _tok(r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}", ("k_live_", "k_test_")),
    _tok(r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    _tok(r"pypi-[A-Za-z0-9_\-]{40,}", ("pypi-",)),
    _tok(r"xapp-\d-[A-Za-z0-9\-]{10,}", ("xapp-",)),
    _tok(r"xox[a-z]-[A-Za-z0-9\-]{10,}", ("xox",), _check_random),
    _tok(r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*", ("eyJ",)),
    # detect-secrets' maintained pattern lists
    *(_ds(p, ("A3T", "ABIA", "ACCA", "AKIA", "ASIA")) for p in _AWS_ID_PATTERNS),
    *(_ds(p, ("aws",), token=False) for p in _AWS_SECRET_PATTERNS),
    *_ds_all(AzureStorageKeyDetector, ("accountkey=",), token=False, needs_sep=True),
    *_ds_all(GitHubTokenDetector, _GITHUB, whole=True),
    *_ds_all(GitLabTokenDetector, _GITLAB, whole=True),
    *_ds_all(OpenAIDetector, ("T3BlbkFJ",)),
    *_ds_all(PypiTokenDetector, ("pypi-",)),
    *_ds_all(SendGridDetector, ("SG.",)),
    *_ds_all(SlackDetector, ("xox", "hooks.slack.com")),
    *_ds_all(SquareOAuthDetector, ("sq0csp-",)),
    *_ds_all(StripeDetector, ("k_live_",)),
    *_ds_all(NpmDetector, ("_authtoken",), token=False, needs_sep=True),
    *_ds_all(MailchimpDetector, ("-us",)),
    *_ds_all(TwilioKeyDetector, ("AC", "SK"), check=_check_random),
    *_ds_all(TelegramBotTokenDetector, (":",), check=_check_mixed),
    *_ds_all(DiscordBotTokenDetector, (".",), check=_check_random),
    *_ds_all(BasicAuthDetector, ("://",), token=False, needs_sep=True),  # scheme://user:PW@host
    _Rule("url_password", _URL_NO_USER, ("://",), 1, _check_token_value, False, needs_sep=True),
    # header / scheme credentials and key=value assignments (on the lower-cased text)
    _Rule("authorization", _AUTH_HEADER, ("authorization",), "v", _check_bearer, False, True,
          _AUTH_HEADER_CI, needs_sep=True),
    _Rule("bearer", _BEARER, ("bearer",), "v", _check_bearer, False, True, _BEARER_CI),
    _Rule("basic", _BASIC, ("basic",), "v", _check_basic, False, True, _BASIC_CI),
    *_assignment_rules(),
    _Rule("spaced_key_value", _SPACED, ("secret_access_key", "session_token", "client_secret", "api_key", "apikey",
                                         "access_token", "auth_token", "refresh_token"), "v", _check_spaced, False,
          True, _SPACED_CI),
    _Rule("cli_flag", _FLAG, ("--",), "value", _check_assignment, False, True, _FLAG_CI),
)  # fmt: skip


_EARLY_RULES = (0, 1)  # the PEM and PuTTY rules
assert all(_RULES[i].name in ("private_key", "putty_key") for i in _EARLY_RULES)


def _anchor_table(token: bool, needs_sep: bool = False) -> tuple[tuple[str, frozenset[int]], ...]:
    """anchor → indices of the rules it enables.  Keyword anchors are reduced to the shortest
    anchor they contain, so e.g. "private key", "private-" and "private" cost one test."""
    table: dict[str, set[int]] = {}
    for index, rule in enumerate(_RULES):
        if rule.token == token and index not in _EARLY_RULES and rule.needs_sep == needs_sep:
            for anchor in rule.anchors:
                table.setdefault(anchor if token else anchor.lower(), set()).add(index)
    if not token:
        for anchor in sorted(table, key=len):
            for other in list(table):
                if other != anchor and anchor in other and anchor in table:
                    table[anchor] |= table.pop(other)
    return tuple((anchor, frozenset(indices)) for anchor, indices in table.items())


_KEYWORD_ANCHORS = _anchor_table(token=False)
_SEPARATED_ANCHORS = _anchor_table(token=False, needs_sep=True)
_TOKEN_ANCHORS = _anchor_table(token=True)


def _masked_span(
    rule: _Rule, m: re.Match[str], haystack: str, text: str, markers: tuple[str, ...]
) -> tuple[int, int] | None:
    """The span of ``text`` that match ``m`` of ``rule`` masks, or None when it is rejected."""
    if rule.left_boundary and m.start() and haystack[m.start() - 1] in _WORDCHARS:
        return None
    if rule.group == 0:
        start, end = m.span()
    elif rule.group == "value":
        start = end = -1
        for name in _VALUE:
            start, end = m.span(name)
            if start >= 0:
                break
        if start < 0:
            return None
    else:
        if m.group(rule.group) is None:
            return None
        start, end = m.span(rule.group)
    value = text[start:end]
    if not value:
        return None
    if rule.group != 0 and markers:
        core = value
        for mk in markers:
            core = core.replace(mk, "")
        if len(core.strip()) < 4:
            return None  # (almost) only markers: already masked
    if rule.check is not None and not rule.check(m, value):
        return None
    return start, end


# --------------------------------------------------------------------------------------------
# Filter
# --------------------------------------------------------------------------------------------


_SHORTEST_MATCH = 8


class PrivacyFilter:
    """Immutable after construction; safe to share between threads."""

    invalid_patterns: tuple[str, ...]

    def __init__(self, settings: PrivacySettings | None = None) -> None:
        self.settings = settings if settings is not None else PrivacySettings()
        unknown = [f for f in self.settings.private_formats if f not in _FORMATS]
        if unknown:
            raise ValueError(f"unknown private format(s) {unknown!r}; expected some of {_FORMATS}")
        self._formats = tuple(f for f in _FORMATS if f in self.settings.private_formats)
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

    # -- public ---------------------------------------------------------------------------

    def filter(self, text: str) -> tuple[str, PrivacyReport]:
        if not isinstance(text, str):
            raise TypeError(f"PrivacyFilter.filter expects str, got {type(text).__name__}")
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
        token = _sentinel(text) if self._formats and self.settings.marker and has_tag_word else ""
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
            filtered, sub = self.filter(value)
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
            return text
        preserve = self.settings.preserve_line_count
        out = text
        unmatched = False
        for _ in range(_MAX_PRIVATE_PASSES):
            result = _remove_sections_once(out, self._formats, preserve, token)
            out = result.text
            unmatched = result.unmatched
            report.private_sections += result.sections
            if not result.sections or "private" not in out.lower():
                break
        report.unclosed_private_tags = report.unclosed_private_tags or unmatched
        return out

    # -- credentials ----------------------------------------------------------------------

    def _secrets(self, text: str, report: PrivacyReport, token: str) -> str:
        markers = (*self._markers, token) if token else self._markers
        low = text.lower()
        # private-key blocks first: their body must go as a whole, before any token rule
        for index in _EARLY_RULES:
            if any(anchor in low for anchor in _RULES[index].anchors):
                found = self._match_rule(_RULES[index], text, low, 0, markers)
                if found:
                    text = self._mask(text, found, report)
                    low = text.lower()
        # token rules: only inside runs of >= 20 token characters
        runs = [(m.start(), m.group(0)) for m in _TOKEN_RUN.finditer(text)]
        if runs:
            joined = "\0".join(chunk for _, chunk in runs)
            enabled = {i for anchor, indices in _TOKEN_ANCHORS if anchor in joined for i in indices}
            spans: list[tuple[int, int]] = []
            for index in sorted(enabled):
                for start, chunk in runs:
                    spans.extend(self._match_rule(_RULES[index], chunk, chunk, start, markers))
            if spans:
                text, low = self._mask(text, spans, report), ""
        # keyword rules: on the whole (lower-cased) text, one rule at a time
        low = low or text.lower()
        active: set[int] = set()
        for anchor, indices in _KEYWORD_ANCHORS:
            if anchor in low:
                active |= indices
        if "=" in text or ":" in text:
            for anchor, indices in _SEPARATED_ANCHORS:
                if anchor in low:
                    active |= indices
        for index in sorted(active):
            low = low or text.lower()
            found = self._match_rule(_RULES[index], text, low, 0, markers)
            if found:
                text, low = self._mask(text, found, report), ""
        return text

    @staticmethod
    def _match_rule(rule: _Rule, text: str, low: str, offset: int, markers: tuple[str, ...]) -> list[tuple[int, int]]:
        """Spans (shifted by ``offset``) of ``text`` that ``rule`` masks; a value consisting
        (almost) only of ``markers`` is already masked."""
        pattern = rule.pattern
        haystack = text
        if rule.lower:
            if len(low) == len(text):
                haystack = low
            elif rule.fallback is not None:
                pattern = rule.fallback
        spans: list[tuple[int, int]] = []
        pos = 0
        while (m := pattern.search(haystack, pos)) is not None:
            span = _masked_span(rule, m, haystack, text, markers)
            if span is None:
                pos = m.start() + 1  # a rejected match must not hide a later one inside it
            else:
                spans.append((span[0] + offset, span[1] + offset))
                pos = max(m.end(), m.start() + 1)
        return spans

    def _mask(self, text: str, spans: list[tuple[int, int]], report: PrivacyReport) -> str:
        """Replace the union of ``spans`` by the secret marker (one per connected span)."""
        spans.sort()
        marker = self.settings.secret_marker
        preserve = self.settings.preserve_line_count
        out: list[str] = []
        last = 0
        cur_start, cur_end = spans[0]
        merged: list[tuple[int, int]] = []
        for start, end in spans[1:]:
            if start <= cur_end:
                cur_end = max(cur_end, end)
            else:
                merged.append((cur_start, cur_end))
                cur_start, cur_end = start, end
        merged.append((cur_start, cur_end))
        for start, end in merged:
            out.append(text[last:start])
            out.append(marker + ("\n" * text.count("\n", start, end) if preserve else ""))
            last = end
        out.append(text[last:])
        report.secrets_masked += len(merged)
        return "".join(out)

    # -- custom patterns and clean-up -----------------------------------------------------

    def _apply_custom(self, text: str, report: PrivacyReport, token: str) -> str:
        protected = tuple(m for m in (self.settings.secret_marker, self.settings.marker, token) if m)
        for pattern in self._custom:
            taken = _occurrences(text, protected)
            spans = [
                m.span()
                for m in pattern.finditer(text)
                if m.end() > m.start() and not any(s < m.end() and m.start() < e for s, e in taken)
            ]
            if spans:
                text = self._mask(text, spans, report)
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


def _occurrences(text: str, needles: tuple[str, ...]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for needle in needles:
        pos = text.find(needle)
        while pos != -1:
            spans.append((pos, pos + len(needle)))
            pos = text.find(needle, pos + len(needle))
    return spans
