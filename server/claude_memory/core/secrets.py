"""The secret rules: what the privacy filter masks as a credential (SEED_SPEC §7.2), as a table.

Each ``Rule`` is a compiled pattern, the anchors (plain substrings) without which it cannot match,
what part of a match to mask and an optional check that rejects code and placeholders.  The rules
are applied by ``claude_memory.core.masking``; this module only defines them.  Pure: no I/O, no
module-level mutable state.

Masked everywhere, inside code blocks too:
    * detect-secrets (Yelp) plugin ``denylist`` regexes are compiled into the table: AWS key
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

Writing a rule: CPython's ``re`` has no multi-pattern search, so every rule starts with a literal;
it runs only when one of its anchors occurs; keyword rules (``token=False``) run on the lower-cased
text with lower-case literals (an IGNORECASE twin, ``fallback``, is used when ``str.lower``
changes the length); token rules run only on the runs of >= 20 token characters, which every
supported token lies inside.

Known limitations
    * No entropy scanning: a credential with no known prefix and no secret-naming key
      (``my password is hunter2``, a bare random string) is not masked; token patterns need the
      token inside a run of >= 20 token characters.
    * Key/value heuristics can miss (``user, password = "a", "b"`` masks the first value) or
      over-mask prose (``token: whatever1``); quoted values over 1,000 characters are skipped.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
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

__all__ = ["KEY_BLOCK_RULES", "RULES", "VALUE_GROUPS", "WORD_CHARS", "MaskCheck", "Rule"]

MaskCheck = Callable[[re.Match[str], str], bool]  # (match, original value) -> mask it?
VALUE_GROUPS = ("dq", "sq", "uq")  # a rule with group="value" masks the first of these that matched
WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]  # runs only if one occurs (token rules: in a token run, as is;
    #                           keyword rules: in the lower-cased text, lower-cased)
    group: int | str = 0  # what to mask: 0 = whole match, a group, or "value" (see VALUE_GROUPS)
    check: MaskCheck | None = None
    token: bool = True  # matched inside token runs only
    lower: bool = False  # pattern written for the lower-cased text
    fallback: re.Pattern[str] | None = None  # IGNORECASE twin of a `lower` pattern
    left_boundary: bool = False  # reject matches preceded by [A-Za-z0-9_]
    needs_sep: bool = False  # (keyword rules) cannot match a text without "=" or ":"


# -- value checks ------------------------------------------------------------------------------


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
_KEY_CHARS = WORD_CHARS | {".", "-"}


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


def _assignment_rules() -> list[Rule]:
    rules = []
    for anchor, source in _KEY_FAMILIES:
        low, ci = _ci(source + _ASSIGN_TAIL)
        rules.append(Rule("assignment", low, (anchor,), "value", _check_assignment, False, True, ci, needs_sep=True))
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


def _tok(source: str, anchors: tuple[str, ...], check: MaskCheck | None = None) -> Rule:
    """Own token pattern starting with a literal prefix, bounded on both sides."""
    return Rule("token", re.compile(source + _RIGHT), anchors, check=check, left_boundary=True)


def _ds(pattern: Any, anchors: tuple[str, ...], *, whole: bool = False, token: bool = True,
        needs_sep: bool = False, check: MaskCheck | None = _check_token_value) -> Rule:  # fmt: skip
    """A detect-secrets denylist regex → rule.  A pattern with a capture group masks group 1
    (the secret) unless ``whole`` (for groups that only alternate prefixes); a pattern masked as
    a whole gets token boundaries."""
    p: re.Pattern[str] = pattern
    if p.groups and not whole:
        return Rule("detect-secrets", p, anchors, 1, check, token, needs_sep=needs_sep)
    bounded = p if p.flags & re.VERBOSE else re.compile(f"(?:{p.pattern}){_RIGHT}", p.flags)
    return Rule("detect-secrets", bounded, anchors, 0, check, token, left_boundary=True, needs_sep=needs_sep)


def _ds_all(detector: Any, anchors: tuple[str, ...], **kwargs: Any) -> list[Rule]:
    return [_ds(p, anchors, **kwargs) for p in detector.denylist if isinstance(p, re.Pattern)]


_URL_NO_USER = re.compile(r"://:([^:/?#\[\]@!$&'()*+,;=\s]+)@")
_AWS_ID_PATTERNS = [p for p in AWSKeyDetector.denylist if not p.groups]
_AWS_SECRET_PATTERNS = [p for p in AWSKeyDetector.denylist if p.groups]
_GITHUB = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_GITLAB = (
    *("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941"),
    *("glcbt-", "glimt-", "glptt-", "glagent-", "gloas-"),
)

# Whole private-key blocks, masked before any other rule (their base64 body could contain
# token-looking runs).
KEY_BLOCK_RULES: tuple[Rule, ...] = (
    Rule("private_key", _PEM, ("private key",), token=False),
    Rule("putty_key", _PUTTY, ("private-lines", "private-mac"), token=False),
)

# Every other rule.  The token rules are matched first and the union of their spans is masked;
# the keyword rules then run one at a time, in this order, each on the text the last one left.
RULES: tuple[Rule, ...] = (
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
    Rule("url_password", _URL_NO_USER, ("://",), 1, _check_token_value, False, needs_sep=True),
    # header / scheme credentials and key=value assignments (on the lower-cased text)
    Rule("authorization", _AUTH_HEADER, ("authorization",), "v", _check_bearer, False, True,
         _AUTH_HEADER_CI, needs_sep=True),
    Rule("bearer", _BEARER, ("bearer",), "v", _check_bearer, False, True, _BEARER_CI),
    Rule("basic", _BASIC, ("basic",), "v", _check_basic, False, True, _BASIC_CI),
    *_assignment_rules(),
    Rule("spaced_key_value", _SPACED, ("secret_access_key", "session_token", "client_secret", "api_key", "apikey",
                                        "access_token", "auth_token", "refresh_token"), "v", _check_spaced, False,
         True, _SPACED_CI),
    Rule("cli_flag", _FLAG, ("--",), "value", _check_assignment, False, True, _FLAG_CI),
)  # fmt: skip
