"""The secret rules: what the privacy filter masks as a credential (SEED_SPEC §7.2), as a table.

Each ``Rule`` is a compiled pattern, the anchors (plain substrings) without which it cannot match,
what part of a match to mask, an optional check that rejects code and placeholders, and the
``kind`` a masked span is counted under in the privacy report (``PrivacyReport.kinds``).  The
rules are applied by ``claude_memory.core.masking``; this module only defines them.  Pure: no
I/O, no module-level mutable state.

Masked everywhere, inside code blocks too:
    * Provider formats with a distinctive literal, kept as data in ``claude_memory.core.providers``
      (145 formats of 115 providers, each with a synthetic example): AI APIs (Anthropic, OpenAI
      and the ``sk-`` compatible APIs, OpenRouter, Hugging Face, Replicate, Groq, Perplexity, xAI,
      Fireworks, Cerebras, Tavily, ElevenLabs, LangSmith, Pinecone, Google ``AIza``/``GOCSPX-``/
      ``ya29.`` …), clouds and their connection strings (AWS session and Bedrock tokens, Azure
      ``AccountKey=``/``SharedAccessKey=``/SAS ``sig=``/Entra ID client secrets, GCP
      ``private_key_id``, DigitalOcean, Alibaba, Tencent, Yandex, Heroku, Cloudflare, Fly.io,
      Vercel, Netlify, Supabase, PlanetScale, Doppler, Pulumi, Terraform Cloud, Vault, Databricks
      …), source hosts and registries (GitHub, GitLab, Bitbucket, Atlassian, npm, PyPI,
      RubyGems, NuGet, Docker Hub, crates.io, JFrog, Clojars …), developer and observability
      tools (Grafana, Sentry, New Relic, Dynatrace, Linear, Notion, Figma, PostHog, 1Password,
      age, CircleCI, Buildkite, SonarQube …), messaging (Slack, Discord bot tokens and webhooks,
      Telegram, Microsoft Teams webhooks, Mailgun, Brevo, Resend) and payments (Stripe, Square,
      Braintree, Adyen, Plaid, Flutterwave, Razorpay, Shippo, EasyPost …).
    * detect-secrets (Yelp) plugin ``denylist`` regexes are compiled into the table for what the
      provider entries do not cover: AWS key ids and quoted AWS secrets, Azure storage keys, URL
      passwords (``BasicAuthDetector``), GitLab runner registration tokens, Mailchimp, ``.npmrc``
      auth tokens, SendGrid and Twilio (the tests also check every ``PrivateKeyDetector`` header).
      Its GitHub, GitLab, OpenAI, PyPI, Slack, Square and Stripe patterns are replaced by provider
      entries that match a superset (a test checks it on generated examples) and would cost a
      second scan; its Discord and Telegram patterns by entries that check more (a Discord bot
      token must start with a base64-encoded numeric user id, which dotted identifiers of the same
      shape do not).  Not used either: the high-entropy plugins (they mask hashes/uuids),
      ``IPPublicDetector`` (not a secret), ``ArtifactoryDetector`` (its ``AP…`` pattern matches
      ordinary words) and the keyword-based Cloudant / IBM / SoftLayer patterns (covered by the
      key/value rules below).
    * JWTs (``eyJ….eyJ….sig``; detect-secrets' JWT regex stops before the signature), whole
      PEM / PuTTY private-key blocks, ``Authorization:`` headers (Bearer, Basic, token, SSWS …),
      ``Bearer``/``Basic`` credentials and passwords in URLs (``postgres://u:PW@``,
      ``mongodb+srv://u:PW@``, ``rediss://:PW@`` …).
    * Context rules, for credentials without a prefix (the value is masked, the name kept):
      key/value assignments whose key names a secret (``DB_PASSWORD=[REDACTED]``,
      ``"token": "[REDACTED]"``, ``api_key: …``, ``x-api-key: …``, ``client_secret=…``);
      UPPER_SNAKE names with a secret word anywhere and a high-entropy value (``DD_APP_KEY=…``,
      ``SECRET_KEY_BASE=…``, ``export STRIPE_WEBHOOK_SALT=…``); keys whose name says what they
      unlock, with a high-entropy value (``accountKey: …``, ``AWS Secret Access Key: …``,
      ``Ocp-Apim-Subscription-Key: …``); "name value" CLI pairs (``aws configure set
      aws_secret_access_key …``, ``ngrok config add-authtoken …``); ``--password x`` flags; and
      sentences that name a secret just before "is"/"was" and a high-entropy value ("my AWS
      secret key is …").  High entropy (``_high_entropy``): 16+ characters with letters and
      digits, many distinct characters, and not words, a path, a URL or a version.
    * Not masked (code, placeholders, look-alikes): ``password: str``, ``token = None``,
      ``secret = get_secret()``, ``${PASSWORD}``, ``$PASSWORD``, ``<your-token>``, attribute
      references, ``api_key=api_key``, values shorter than 4 characters, ``CACHE_KEY=user_v2``,
      ``cache_key = "<hash>"``, "the primary key is <hash>", git/sha hashes, UUIDs, docker digests
      (``sha256:…``), lockfile integrity strings (``sha512-…``), base64 data, Mapbox ``pk.`` public
      tokens (the corpus in tests/support/privacy_corpus.py lists them).  AWS's documentation key
      id ``AKIAIOSFODNN7EXAMPLE`` is in the real format and is masked like any other.

Writing a rule: CPython's ``re`` has no multi-pattern search, so every rule starts with a literal
(its anchor) or is gated by a rare one; it runs only when one of its anchors occurs.  Keyword rules
(``token=False``) run on the lower-cased text with lower-case literals (an IGNORECASE twin,
``fallback``, is used when ``str.lower`` changes the length).  Token rules run only on the runs of
>= 20 token characters (``[A-Za-z0-9_-+/=.:%~]``), which every supported token lies inside, and
are looked up by the first two characters of the word their anchor starts; the few whose literal
sits inside a word (Entra ID ``…8Q~…``, New Relic ``…NRAL``, MaxMind ``…_mmk``) are ``inner``.
A masked span counts once, under the first rule (in ``RULES`` order) that matched in it, so
specific formats come before general ones.

Known limitations
    * No entropy scanning of free text: a credential with no known prefix and no secret-naming
      key, header, flag or sentence next to it (a bare random string, ``my password is hunter2``
      with a low-entropy password) is not masked; token patterns need the token inside a run of
      >= 20 token characters.
    * Providers without a prefix (Cohere, Mistral, Datadog, Cloudflare's older tokens, Azure
      OpenAI, Heroku's older UUID keys, Okta …) are masked only through their context (an
      ``*_API_KEY=``, ``Authorization:`` or ``--token`` next to the value).
    * Key/value heuristics can miss (``user, password = "a", "b"`` masks the first value; an
      unquoted value that reads as a dotted name, ``secret=aB3x.Yz9q…``, is taken for code) or
      over-mask prose (``token: whatever1``); quoted values over 1,000 characters are skipped.
    * Formats are matched, not verified: no checksum (GitHub's CRC32, npm's) is checked, so a
      made-up value in a real format is masked too, and a provider that changes its format is
      missed until the table is updated.
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
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from claude_memory.core.providers import PROVIDERS, Check, Provider

__all__ = ["KEY_BLOCK_RULES", "RULES", "VALUE_GROUPS", "WORD_CHARS", "MaskCheck", "Rule"]

MaskCheck = Callable[[re.Match[str], str], bool]  # (match, original value) -> mask it?
VALUE_GROUPS = ("dq", "sq", "uq")  # a rule with group="value" masks the first of these that matched
WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class Rule:
    kind: str  # what a masked span counts as in the report: a provider ("github") or a context ("assignment")
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]  # runs only if one occurs (token rules: in a token run, starting a word
    #                           or as separators then the start of a word, ":AA"; anywhere when
    #                           `inner`; keyword rules: in the lower-cased text, lower-cased)
    group: int | str = 0  # what to mask: 0 = whole match, a group, or "value" (see VALUE_GROUPS)
    check: MaskCheck | None = None
    token: bool = True  # matched inside token runs only
    lower: bool = False  # pattern written for the lower-cased text
    fallback: re.Pattern[str] | None = None  # IGNORECASE twin of a `lower` pattern
    left_boundary: bool = False  # reject matches preceded by [A-Za-z0-9_]
    needs_sep: bool = False  # (keyword rules) cannot match a text without "=" or ":"
    inner: bool = False  # (token rules) the anchors may occur inside a word, not only at its start


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


def _check_strong(m: re.Match[str], value: str) -> bool:
    """Digits, upper and lower case: a random token, not an identifier that happens to share a prefix."""
    return any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _check_discord(m: re.Match[str], value: str) -> bool:
    """A Discord bot token starts with the bot's user id (17-20 digits), base64-encoded."""
    head = value.split(".", 1)[0]
    try:
        user_id = base64.b64decode(head + "=" * (-len(head) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(user_id) <= 20 and user_id.isdigit()


def _provider_check(check: Check) -> MaskCheck | None:
    if check == "random":
        return _check_random
    if check == "mixed":
        return _check_mixed
    if check == "strong":
        return _check_strong
    if check == "discord":
        return _check_discord
    return None


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
_PLACEHOLDER_HINTS = ("replace", "changeme", "change_me", "change-me", "example", "placeholder", "dummy")
_PLACEHOLDER_CHARS = frozenset("*xX.•-_#?")
_CMDLET = re.compile(r"[A-Z][A-Za-z]+-[A-Z][A-Za-z]+")  # PowerShell: `$pw = ConvertTo-SecureString …`
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
    if not any(c.isdigit() for c in v) and any(hint in v.lower() for hint in _PLACEHOLDER_HINTS):
        return True  # `replace_this_with_a_real_secret_key`, `changeme`, `example` (no digits: a real one has some)
    if v[0] in "$%" or v.startswith(("<", "your_", "your-", "YOUR_", "YOUR-")):
        return True
    if _TEMPLATE.search(v) or _COLOR.fullmatch(v):  # "{0}:{1}", "{{ secrets.X }}", "%s", "#fff"
        return True
    return set(v) <= _PLACEHOLDER_CHARS


def _check_token_value(m: re.Match[str], value: str) -> bool:
    return not _is_placeholder(value)


_DIGITS = frozenset("0123456789")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_PRINTABLE_ASCII = re.compile(r"[!-~]+")
_WORD_SEPARATORS = re.compile(r"[_\-./:]+")
_WORD_PART = re.compile(r"(?:[A-Z]+|[A-Z]?[a-z]+)(?:[A-Z][a-z]+)*[0-9]{0,4}")  # `cache`, `SECRET`, `awsKey2`


def _wordy(value: str) -> bool:
    """Words, camelCase words and numbers, possibly joined by separators (`profile_cache_v2_2024`,
    `settings.awsSecretKey2`, `my-app-prod`): a name, not a key."""
    return all(p.isdigit() or len(p) <= 3 or _WORD_PART.fullmatch(p) for p in _WORD_SEPARATORS.split(value))


def _high_entropy(value: str) -> bool:
    """What a key or password generator produces: 16+ characters with letters and digits, many distinct
    characters, and not words, a path, a URL or a version.  For values whose only sign of being a
    secret is the name next to them."""
    core = _PRINTABLE_ASCII.match(value.strip())  # judged without a glued `»`, `…`, emoji
    v = core.group(0) if core else ""
    if len(v) < 16:
        return False
    chars = set(v)
    if not (chars & _DIGITS and chars & _LETTERS) or len(chars) < min(12, len(v) // 2):
        return False
    if "://" in v or v.startswith(("/", "./", "../", "~/", "$", "%", "<", "your_", "your-", "YOUR_", "YOUR-")):
        return False  # a path, a URL, a variable or a placeholder
    return not (_TEMPLATE.search(v) or _VERSION.fullmatch(v) or _wordy(v))


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
    r"|(?!(?:none|null|nil|true|false|undefined)(?![a-z0-9_]))(?P<uq>[^\s\"'`,;&(){}\[\]<>\\]+))"
)  # (unquoted null-like words are placeholders, rejected here to spare the checks)
# The same with unquoted values of at most 1,000 characters, for the rules whose checks reject most
# candidates: a rejected candidate then costs at most that much scanning (`key=key=key=…` stays linear).
_BOUNDED_ASSIGN_TAIL = _ASSIGN_TAIL.replace("\\]+))", "\\]{1,1000}))")
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
    if _CMDLET.fullmatch(value):
        return False  # a command: `$domainAdminPassword = ConvertTo-SecureString "{1}" -AsPlainText`
    if _IDENT.fullmatch(value):
        key = _key_before(m).lower()
        if value.lower() in (key, key.rsplit(".", 1)[-1]):
            return False  # `api_key=api_key`
        variable = "_" in value or nxt in (")", ",") or not any(c.isdigit() for c in value)
        if variable and _KEY_WORD_CI.search(value):
            return False  # `f(password=KEY_PASSWORD)`, `access_key: access_key_id`, `{ _csrf_token: csrfToken }`
    return True


def _assignment_rules() -> list[Rule]:
    rules = []
    for anchor, source in _KEY_FAMILIES:
        low, ci = _ci(source + _ASSIGN_TAIL)
        rules.append(Rule("assignment", low, (anchor,), "value", _check_assignment, False, True, ci, needs_sep=True))
    return rules


# Names written the way environment variables are (UPPER_SNAKE_CASE) with a secret word among their
# parts, which the key words above do not all catch: `DD_APP_KEY=…`, `SECRET_KEY_BASE=…`,
# `export STRIPE_WEBHOOK_SALT=…`, `"SENTRY_AUTH_TOKEN_RO": "…"`.  Only a high-entropy value is masked:
# `CACHE_KEY=user_profile` is a name.
_ENV_NAME = re.compile(
    r"_(?:KEY|TOKEN|SECRET|PASS(?:WORD|WD|PHRASE)?|PWD|PW|AUTH|CREDENTIALS?|CREDS|SALT|PAT|SIGNATURE)"
    r"(?:_[A-Z0-9]{1,32}){0,6}" + _BOUNDED_ASSIGN_TAIL
)
_ENV_ANCHORS = ("key", "token", "secret", "pass", "pw", "auth", "cred", "salt", "_pat", "signature")
_UPPER_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _check_env(m: re.Match[str], value: str) -> bool:
    s = m.string
    start = m.start()
    while start > 0 and s[start - 1] in WORD_CHARS:
        start -= 1
    if not _UPPER_NAME.fullmatch(s[start : m.start()]):
        return False  # `cache_key = …`, `self._token = …`: code, left to the key/value rules
    return _check_assignment(m, value) and _high_entropy(value)


# `accountKey: "…"`, `x-functions-key: …`, `AWS Secret Access Key: …`: a key whose name says what it
# unlocks (a qualifier before "key"), with a high-entropy value.  A bare `key`, `cache_key` or
# `primary key` is not one.
_KEY_QUALIFIERS = (
    "secret", "access", "api", "private", "account", "storage", "master", "encryption", "signing", "sign",
    "auth", "client", "license", "licence", "app", "application", "service", "admin", "deploy", "shared",
    "session", "hmac", "webhook", "subscription", "consumer", "function", "functions", "ingest",
    "ingestion", "personal", "server", "bot", "management", "mgmt", "crypt", "cipher", "aes", "jwt",
    "cookie", "root", "write",
)  # fmt: skip
_QUALIFIED_KEY, _QUALIFIED_KEY_CI = _ci(r"key(?:[_-]?id)?" + _BOUNDED_ASSIGN_TAIL)


def _check_qualified_key(m: re.Match[str], value: str) -> bool:
    before = m.string[max(0, m.start() - 24) : m.start()].lower()
    if before.rstrip("_-").endswith(("api", "access", "secret", "private")) and not before.endswith((" ", "\t")):
        return False  # `api_key`, `secret_access_key` …: the key/value rules above already decided
    before = before.rstrip(" \t_.-")
    return before.endswith(_KEY_QUALIFIERS) and _check_assignment(m, value) and _high_entropy(value)


# `aws configure set aws_secret_access_key VALUE`, `ngrok config add-authtoken VALUE`: "name value" pairs
# of a secret-naming key, blanks, then a long random-looking value (prose after such a name has no digits).
# The pattern starts at the name's last word; the check reads the whole name.
_SPACED_NAMES = frozenset((
    "aws_secret_access_key", "aws_session_token", "secret_access_key", "session_token", "client_secret",
    "secret_key", "account_key", "api_key", "apikey", "api_token", "access_token", "auth_token",
    "authtoken", "refresh_token", "private_token",
))  # fmt: skip


def _spaced_rules() -> list[Rule]:
    rules = []
    for word in ("key", "token", "secret"):
        low, ci = _ci(word + r"[ \t]+(?P<v>[a-z0-9/+=_\-.]{16,})")
        rules.append(Rule("assignment", low, (word,), "v", _check_spaced, False, True, ci))
    return rules


def _check_spaced(m: re.Match[str], value: str) -> bool:
    s = m.string
    start = m.start()
    while start > 0 and s[start - 1] in WORD_CHARS:
        start -= 1
    name = s[start : m.start("v")].rstrip(" \t").lower()
    return name in _SPACED_NAMES and _looks_random(value) and not _is_placeholder(value)


# Prose: "my AWS secret key is wJalr…", "the staging token was `a8F…`".  The sentence names a secret
# just before "is"/"was" (same line, a few words at most) and the value is high-entropy.
_SECRET_NOUN_BEFORE = re.compile(
    r"(?:(?:" + "|".join(_KEY_QUALIFIERS) + r")[ \t_.\-]*key(?:[ \t_\-]*id)?|tokens?|secrets?"
    r"|passwords?|passwd|passphrase|pwd|credentials?|pat)"
    r"(?:[ \t]+(?:for|of|on|in|to)[ \t]+[\w./\-]+)?[ \t]*\Z"
)
_PROSE_VALUE = r"(?:[ \t]+now)?:?[ \t]+[`'\"]?(?P<v>(?=[a-z0-9/+=_\-~.]{16})[a-z0-9/+=_\-~]+(?:\.[a-z0-9/+=_\-~]+)*)"
_PROSE_IS, _PROSE_IS_CI = _ci(r" is" + _PROSE_VALUE)
_PROSE_WAS, _PROSE_WAS_CI = _ci(r" was" + _PROSE_VALUE)


def _check_prose(m: re.Match[str], value: str) -> bool:
    s = m.string
    line_start = s.rfind("\n", max(0, m.start() - 60), m.start()) + 1
    before = s[max(line_start, m.start() - 60) : m.start()].lower()
    return bool(_SECRET_NOUN_BEFORE.search(before)) and _high_entropy(value)


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
    """Basic credentials are base64("user:password"): printable text with a user before the colon (so that
    "Basic Omelet Recipe" is a dish)."""
    if len(value) < 8:
        return False
    padded = value + "=" * (-len(value) % 4)
    try:
        decoded = base64.b64decode(padded, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, colon, _ = decoded.partition(":")
    return bool(colon and user) and decoded.isprintable()


_AUTH_HEADER, _AUTH_HEADER_CI = _ci(
    r"authorization(?<![a-z0-9_]authorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
    r"(?:(?:bearer|basic|token|digest|negotiate|apikey|sso-key|ssws)[ \t]+)?"
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


def _provider_rule(p: Provider) -> Rule:
    """A provider format (``claude_memory.core.providers``) → rule."""
    check = _provider_check(p.check)
    if p.token:
        pattern = re.compile(p.pattern + _RIGHT)
        return Rule(p.kind, pattern, p.anchors, p.group, check, left_boundary=True, inner=p.inner)
    return Rule(p.kind, re.compile(p.pattern), tuple(a.lower() for a in p.anchors), p.group, check, token=False)


def _ds(pattern: Any, kind: str, anchors: tuple[str, ...], *, whole: bool = False, token: bool = True,
        needs_sep: bool = False, check: MaskCheck | None = _check_token_value) -> Rule:  # fmt: skip
    """A detect-secrets denylist regex → rule.  A pattern with a capture group masks group 1
    (the secret) unless ``whole`` (for groups that only alternate prefixes); a pattern masked as
    a whole gets token boundaries."""
    p: re.Pattern[str] = pattern
    if p.groups and not whole:
        return Rule(kind, p, anchors, 1, check, token, needs_sep=needs_sep)
    bounded = p if p.flags & re.VERBOSE else re.compile(f"(?:{p.pattern}){_RIGHT}", p.flags)
    return Rule(kind, bounded, anchors, 0, check, token, left_boundary=True, needs_sep=needs_sep)


def _ds_all(detector: Any, kind: str, anchors: tuple[str, ...], **kwargs: Any) -> list[Rule]:
    return [_ds(p, kind, anchors, **kwargs) for p in detector.denylist if isinstance(p, re.Pattern)]


_URL_NO_USER = re.compile(r"://:([^:/?#\[\]@!$&'()*+,;=\s]+)@")
_AWS_ID_PATTERNS = [p for p in AWSKeyDetector.denylist if not p.groups]
_AWS_SECRET_PATTERNS = [p for p in AWSKeyDetector.denylist if p.groups]
_GITLAB_RUNNER_PATTERNS = [p for p in GitLabTokenDetector.denylist if p.pattern.startswith("GR1348941")]
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*" + _RIGHT)

# Whole private-key blocks, masked before any other rule (their base64 body could contain
# token-looking runs).
KEY_BLOCK_RULES: tuple[Rule, ...] = (
    Rule("private_key", _PEM, ("private key",), token=False),
    Rule("private_key", _PUTTY, ("private-lines", "private-mac"), token=False),
)

# Every other rule.  The token rules are matched first and the union of their spans is masked (a
# connected span counts once, under the kind of the first rule in this order that matched in it);
# the keyword rules then run one at a time, in this order, each on the text the last one left.
RULES: tuple[Rule, ...] = (
    # provider formats (claude_memory.core.providers): tokens with a distinctive literal
    *(_provider_rule(p) for p in PROVIDERS if p.token),
    Rule("jwt", _JWT, ("eyJ",), left_boundary=True),
    # detect-secrets' maintained pattern lists, for the formats the provider entries do not cover
    *(_ds(p, "aws", ("A3T", "ABIA", "ACCA", "AKIA", "ASIA")) for p in _AWS_ID_PATTERNS),
    *(_ds(p, "gitlab", ("GR1348941",), whole=True) for p in _GITLAB_RUNNER_PATTERNS),
    *_ds_all(SendGridDetector, "sendgrid", ("SG.",)),
    *_ds_all(MailchimpDetector, "mailchimp", ("-us",)),
    *_ds_all(TwilioKeyDetector, "twilio", ("AC", "SK"), check=_check_random),
    # keyword rules (on the whole text): provider formats with characters outside the token runs …
    *(_provider_rule(p) for p in PROVIDERS if not p.token),
    *(_ds(p, "aws", ("aws",), token=False) for p in _AWS_SECRET_PATTERNS),
    *_ds_all(AzureStorageKeyDetector, "azure", ("accountkey=",), token=False, needs_sep=True),
    *_ds_all(NpmDetector, "npm", ("_authtoken",), token=False, needs_sep=True),
    *_ds_all(BasicAuthDetector, "url_password", ("://",), token=False, needs_sep=True),  # scheme://user:PW@host
    Rule("url_password", _URL_NO_USER, ("://",), 1, _check_token_value, False, needs_sep=True),
    # … header / scheme credentials and key=value assignments (on the lower-cased text) …
    Rule("authorization", _AUTH_HEADER, ("authorization",), "v", _check_bearer, False, True,
         _AUTH_HEADER_CI, needs_sep=True),
    Rule("authorization", _BEARER, ("bearer",), "v", _check_bearer, False, True, _BEARER_CI),
    Rule("authorization", _BASIC, ("basic",), "v", _check_basic, False, True, _BASIC_CI),
    *_assignment_rules(),
    Rule("assignment", _ENV_NAME, _ENV_ANCHORS, "value", _check_env, False, needs_sep=True),
    Rule("assignment", _QUALIFIED_KEY, ("key",), "value", _check_qualified_key, False, True, _QUALIFIED_KEY_CI,
         needs_sep=True),
    *_spaced_rules(),
    Rule("cli_flag", _FLAG, ("--",), "value", _check_assignment, False, True, _FLAG_CI),
    # … and secrets named in a sentence
    Rule("prose", _PROSE_IS, (" is",), "v", _check_prose, False, True, _PROSE_IS_CI),
    Rule("prose", _PROSE_WAS, (" was",), "v", _check_prose, False, True, _PROSE_WAS_CI),
)  # fmt: skip
