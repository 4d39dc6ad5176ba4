"""Who may talk to the dashboard, decided for every request before any route runs (docs/web.md, "Security").

* **Token.** One random token per data directory (``web-token``, user-only), made on first use, for scripts:
  ``Authorization: Bearer …``. It never appears in an address, a cookie or a log.
* **Sign-in codes.** The address ``claude-memory web`` prints (or opens) carries a random one-time code, good
  for one sign-in within :data:`CODE_SECONDS`: ``/login?code=…`` trades it for a session cookie (HttpOnly,
  SameSite=Strict) and redirects to ``/``. The session is random too, made when the server starts and gone when
  it stops; so an address left in a browser's history, a process list or a terminal opens nothing later, and a
  cookie sent to another local port (browsers do not keep cookies apart by port) is worth one server's lifetime,
  not the token. Without the token or the cookie: 401.
* **Host.** The Host header must name the loopback address the server listens on (``127.0.0.1``,
  ``localhost`` or ``[::1]`` with its port): a page of another site that rebinds its DNS name to 127.0.0.1
  reaches the port, but with its own name in Host, and is refused (421).
* **Origin.** A request that says where it comes from (``Origin``; ``Sec-Fetch-Site`` other than
  ``same-origin`` or ``none``) must come from the dashboard itself: no other page, not even one on another
  local port, may call the API, with or without the cookie (403). No CORS headers are ever sent.
* **CSRF.** A state-changing request authenticated by the cookie must repeat the page's CSRF token in
  ``X-CSRF-Token`` (403 without it); it is derived from the session, so it is never stored.

The checks are pure functions of the request's headers, so the unit tests call them directly and the ASGI
middleware (:mod:`claude_memory.web.app`) only maps their answer to a response.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

TOKEN_FILE: Final = "web-token"
COOKIE_PREFIX: Final = "claude_memory_web_"  # + the port: two dashboards do not overwrite each other's cookie
CSRF_HEADER: Final = "x-csrf-token"
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
OPEN_PATHS: Final = frozenset({"/login"})  # reachable without the token (it is how a browser signs in)
SAME_SITE_FETCH: Final = frozenset({"same-origin", "none"})
CODE_SECONDS: Final = 600.0  # a printed sign-in address works once, within ten minutes
MAX_CODES: Final = 32  # sign-in codes waiting at once (a script asking for many cannot grow the server)


class TokenFileError(Exception):
    """The token file cannot be made safe (the message says why, in one sentence)."""


def load_token(data_dir: Path) -> str:
    """The data directory's dashboard token, made (user-only) the first time; a token file others could read is
    replaced by a new one."""
    path = data_dir / TOKEN_FILE
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return _new_token(path)
    except OSError as exc:
        raise TokenFileError(f"{path} is not a plain file this user owns ({exc.strerror}).") from None
    with os.fdopen(fd, "r", encoding="ascii", errors="replace") as found:
        info = os.fstat(found.fileno())
        token = found.read().strip()
    if info.st_uid != os.getuid() or not stat.S_ISREG(info.st_mode):
        raise TokenFileError(f"{path} is not a plain file this user owns.")
    if info.st_mode & 0o077 or len(token) < 32:
        path.unlink()
        return _new_token(path)
    return token


def _new_token(path: Path) -> str:
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(token + "\n")
    return token


def same(offered: str, secret: str) -> bool:
    """Constant-time equality of two strings, whatever characters ``offered`` holds."""
    return hmac.compare_digest(offered.encode("utf-8", "surrogatepass"), secret.encode())


def csrf_for(session: str) -> str:
    return hmac.new(session.encode(), b"claude-memory csrf", hashlib.sha256).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    code: str
    message: str


@dataclass(slots=True)
class Guard:
    token: str
    port: int
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    codes: dict[str, float] = field(default_factory=dict)  # sign-in code -> when it stops working (monotonic)

    @property
    def cookie(self) -> str:
        return f"{COOKIE_PREFIX}{self.port}"

    @property
    def csrf(self) -> str:
        return csrf_for(self.session)

    def hosts(self) -> frozenset[str]:
        return frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)

    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts())

    def new_code(self) -> str:
        """A one-time sign-in code, good for :data:`CODE_SECONDS`."""
        now = time.monotonic()
        for stale in [c for c, until in self.codes.items() if until < now]:
            del self.codes[stale]
        while len(self.codes) >= MAX_CODES:
            del self.codes[next(iter(self.codes))]
        code = secrets.token_urlsafe(24)
        self.codes[code] = now + CODE_SECONDS
        return code

    def login(self, offered: str) -> bool:
        """True (once) for a code :meth:`new_code` made that has not expired."""
        match = next((code for code in self.codes if same(offered, code)), None)
        if match is None:
            return False
        return self.codes.pop(match) >= time.monotonic()

    def check(self, method: str, path: str, headers: dict[str, str]) -> Refusal | None:
        """None when the request may go on; else why not. ``headers`` has lower-case names."""
        if headers.get("host", "").lower() not in self.hosts():
            return Refusal(421, "wrong_host", "This server answers only to its loopback address (Host header refused).")
        origin = headers.get("origin")
        fetched_from = headers.get("sec-fetch-site")
        if (origin is not None and origin not in self.origins()) or (
            fetched_from is not None and fetched_from not in SAME_SITE_FETCH
        ):
            return Refusal(403, "cross_origin", "Requests from other sites and other local pages are refused.")
        if path in OPEN_PATHS:
            return None
        bearer = _bearer(headers.get("authorization", ""))
        if bearer is not None:
            if same(bearer, self.token):
                return None  # a script with the token: no cookie, so no CSRF to fear
            return Refusal(401, "unauthorized", "The token is wrong.")
        cookie = _cookie(headers.get("cookie", ""), self.cookie)
        if cookie is None or not same(cookie, self.session):
            return Refusal(
                401,
                "unauthorized",
                "Sign in through the address `claude-memory web` prints (each address works once).",
            )
        if method not in SAFE_METHODS and not same(headers.get(CSRF_HEADER, ""), self.csrf):
            message = "A change from the dashboard needs its CSRF token (X-CSRF-Token); reload the page."
            return Refusal(403, "csrf", message)
        return None


def _bearer(value: str) -> str | None:
    scheme, _, credential = value.partition(" ")
    return credential.strip() if scheme.lower() == "bearer" and credential.strip() else None


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None
