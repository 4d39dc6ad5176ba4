"""Who may talk to the dashboard, decided for every request before any route runs (docs/web.md, "Security").

* **Token.** One random token per data directory (``web-token``, user-only), made on first use. A request
  carries it as ``Authorization: Bearer …`` (scripts) or as the HttpOnly, SameSite=Strict cookie that
  ``/login?token=…`` sets (the browser, once). Without either: 401.
* **Host.** The Host header must name the loopback address the server listens on (``127.0.0.1``,
  ``localhost`` or ``[::1]`` with its port): a page of another site that rebinds its DNS name to 127.0.0.1
  reaches the port, but with its own name in Host, and is refused (421).
* **Origin.** A request that says where it comes from (``Origin``, or ``Sec-Fetch-Site: cross-site``) must
  come from the dashboard itself: no other page may call the API, with or without the cookie (403). No CORS
  headers are ever sent.
* **CSRF.** A state-changing request authenticated by the cookie must repeat the page's CSRF token in
  ``X-CSRF-Token`` (403 without it); it is derived from the token, so it is the same for every page load and
  never stored.

The checks are pure functions of the request's headers, so the unit tests call them directly and the ASGI
middleware (:mod:`claude_memory.web.app`) only maps their answer to a response.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final

TOKEN_FILE: Final = "web-token"
COOKIE: Final = "claude_memory_web"
CSRF_HEADER: Final = "x-csrf-token"
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
OPEN_PATHS: Final = frozenset({"/login"})  # reachable without the token (it is how the token arrives)


def load_token(data_dir: Path) -> str:
    """The data directory's dashboard token, made (user-only) the first time."""
    path = data_dir / TOKEN_FILE
    try:
        token = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        token = ""
    if len(token) >= 32:
        return token
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(token + "\n")
    return token


def csrf_for(token: str) -> str:
    return hmac.new(token.encode(), b"claude-memory csrf", hashlib.sha256).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Guard:
    token: str
    port: int

    @property
    def csrf(self) -> str:
        return csrf_for(self.token)

    def hosts(self) -> frozenset[str]:
        return frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)

    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts())

    def check(self, method: str, path: str, headers: dict[str, str]) -> Refusal | None:
        """None when the request may go on; else why not. ``headers`` has lower-case names."""
        if headers.get("host", "").lower() not in self.hosts():
            return Refusal(421, "wrong_host", "This server answers only to its loopback address (Host header refused).")
        origin = headers.get("origin")
        if (origin is not None and origin not in self.origins()) or headers.get("sec-fetch-site") == "cross-site":
            return Refusal(403, "cross_origin", "Requests from other sites are refused.")
        if path in OPEN_PATHS:
            return None
        bearer = _bearer(headers.get("authorization", ""))
        if bearer is not None:
            if hmac.compare_digest(bearer, self.token):
                return None  # a script with the token: no cookie, so no CSRF to fear
            return Refusal(401, "unauthorized", "The token is wrong.")
        cookie = _cookie(headers.get("cookie", ""), COOKIE)
        if cookie is None or not hmac.compare_digest(cookie, self.token):
            return Refusal(
                401,
                "unauthorized",
                "Open the dashboard through the address `claude-memory web` prints (it carries the token).",
            )
        if method not in SAFE_METHODS and not hmac.compare_digest(headers.get(CSRF_HEADER, ""), self.csrf):
            return Refusal(
                403, "csrf", "A change from the dashboard needs its CSRF token (X-CSRF-Token); reload the page."
            )
        return None

    def login(self, offered: str) -> bool:
        return bool(offered) and hmac.compare_digest(offered, self.token)


def _bearer(value: str) -> str | None:
    scheme, _, credential = value.partition(" ")
    return credential.strip() if scheme.lower() == "bearer" and credential.strip() else None


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None
