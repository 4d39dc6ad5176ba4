"""The dashboard's request guard and the API's parameter reading, as pure functions (the same checks run
against the real server in tests/integration/test_web_api.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from claude_memory.service.operations import registry
from claude_memory.service.operations.browse import HistoryParams
from claude_memory.service.operations.hooks import ContextParams
from claude_memory.web import api
from claude_memory.web.auth import COOKIE, Guard, csrf_for, load_token
from claude_memory.wire import OpError

TOKEN = "t" * 43
GUARD = Guard(TOKEN, 37777)
HOST = {"host": "127.0.0.1:37777"}
COOKIE_HEADER = {"cookie": f"other=1; {COOKIE}={TOKEN}"}


def status(method: str, path: str, **headers: str) -> int | None:
    refusal = GUARD.check(method, path, {**HOST, **headers} if "host" not in headers else headers)
    return None if refusal is None else refusal.status


def test_the_token_or_the_cookie_is_needed() -> None:
    assert status("GET", "/api/v1/stats") == 401
    assert status("GET", "/api/v1/stats", authorization="Bearer wrong") == 401
    assert status("GET", "/api/v1/stats", authorization=f"Bearer {TOKEN}") is None
    assert status("GET", "/api/v1/stats", authorization=f"bearer {TOKEN}") is None
    assert status("GET", "/", cookie=f"{COOKIE}={TOKEN[:-1]}") == 401
    assert status("GET", "/", **COOKIE_HEADER) is None
    assert status("GET", "/login") is None  # how the token arrives
    assert status("GET", "/login/", **{}) == 401


def test_only_the_loopback_names_with_our_port_are_served() -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    for host in ("127.0.0.1:37777", "localhost:37777", "[::1]:37777", "LOCALHOST:37777"):
        assert status("GET", "/api/v1/stats", host=host, **auth) is None, host
    for host in ("evil.example", "evil.example:37777", "127.0.0.1", "127.0.0.1:8080", "0.0.0.0:37777", ""):
        assert status("GET", "/api/v1/stats", host=host, **auth) == 421, host


def test_other_origins_are_refused_even_with_the_cookie() -> None:
    csrf = {"x-csrf-token": csrf_for(TOKEN)}
    assert status("POST", "/api/v1/forget", origin="http://evil.example", **COOKIE_HEADER, **csrf) == 403
    assert status("POST", "/api/v1/forget", origin="http://127.0.0.1:9999", **COOKIE_HEADER, **csrf) == 403
    assert status("POST", "/api/v1/forget", origin="null", **COOKIE_HEADER, **csrf) == 403
    assert status("GET", "/api/v1/stats", **{"sec-fetch-site": "cross-site"}, **COOKIE_HEADER) == 403
    assert status("POST", "/api/v1/forget", origin="http://127.0.0.1:37777", **COOKIE_HEADER, **csrf) is None
    assert status("GET", "/api/v1/stats", **{"sec-fetch-site": "same-origin"}, **COOKIE_HEADER) is None


def test_a_cookie_change_needs_the_csrf_token_and_a_token_change_does_not() -> None:
    assert status("POST", "/api/v1/forget", **COOKIE_HEADER) == 403
    assert status("POST", "/api/v1/forget", **COOKIE_HEADER, **{"x-csrf-token": csrf_for("other")}) == 403
    assert status("POST", "/api/v1/forget", **COOKIE_HEADER, **{"x-csrf-token": GUARD.csrf}) is None
    assert status("GET", "/api/v1/stats", **COOKIE_HEADER) is None
    assert status("POST", "/api/v1/forget", authorization=f"Bearer {TOKEN}") is None
    assert GUARD.csrf != TOKEN and TOKEN not in GUARD.csrf


def test_the_token_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = load_token(tmp_path / "data")
    assert len(first) >= 32 and load_token(tmp_path / "data") == first
    mode = (tmp_path / "data" / "web-token").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600
    (tmp_path / "data" / "web-token").write_text("short\n")
    assert load_token(tmp_path / "data") not in (first, "short")


def test_query_strings_become_the_contract_parameters() -> None:
    pairs = [("limit", "5"), ("types", "user_prompt"), ("types", "tool_use"), ("since", "2026-01-01T00:00:00Z")]
    params = api.query_params(HistoryParams, pairs)
    assert params == {"limit": "5", "types": ["user_prompt", "tool_use"], "since": "2026-01-01T00:00:00Z"}
    assert api.query_params(HistoryParams, [("types", "user_prompt,tool_use")])["types"] == ["user_prompt", "tool_use"]
    ops = registry()
    history = ops.get("history")
    assert history is not None
    assert api.validated(history, params) == {
        "limit": 5,
        "types": ["user_prompt", "tool_use"],
        "since": "2026-01-01T00:00:00Z",
    }
    context = api.query_params(ContextParams, [("payload", '{"hook_event_name": "UserPromptSubmit"}')])
    assert context == {"payload": {"hook_event_name": "UserPromptSubmit"}}
    with pytest.raises(OpError, match="not a JSON object"):
        api.query_params(ContextParams, [("payload", "{oops")])
    with pytest.raises(OpError, match="Invalid parameter limit"):
        api.validated(history, {"limit": 0})


def test_hooks_lifecycle_and_long_waits_are_not_published() -> None:
    ops = registry()
    served = {op.name for op in api.published(ops)}
    for op in ops:
        hidden = op.service_only or op.progress or op.name == "capture"
        assert (op.name in served) != hidden, op.name
    forget = ops.get("forget")
    search = ops.get("search")
    assert forget is not None and search is not None
    assert api.methods(forget) == ("POST",) and api.methods(search) == ("GET", "POST")
