"""The dashboard's request guard and the API's parameter reading, as pure functions (the same checks run
against the real server in tests/integration/test_web_api.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from claude_memory.service.operations import registry
from claude_memory.service.operations.browse import HistoryParams
from claude_memory.service.operations.hooks import ContextParams
from claude_memory.web import api, auth
from claude_memory.web.auth import Guard, csrf_for, load_token
from claude_memory.wire import OpError

TOKEN = "t" * 43
GUARD = Guard(TOKEN, 37777)
HOST = {"host": "127.0.0.1:37777"}
COOKIE_HEADER = {"cookie": f"other=1; claude_memory_web_37777={GUARD.session}"}


def status(method: str, path: str, **headers: str) -> int | None:
    refusal = GUARD.check(method, path, {**HOST, **headers} if "host" not in headers else headers)
    return None if refusal is None else refusal.status


def test_the_token_or_the_cookie_is_needed() -> None:
    assert status("GET", "/api/v1/stats") == 401
    assert status("GET", "/api/v1/stats", authorization="Bearer wrong") == 401
    assert status("GET", "/api/v1/stats", authorization=f"Bearer {TOKEN}") is None
    assert status("GET", "/api/v1/stats", authorization=f"bearer {TOKEN}") is None
    assert status("GET", "/", cookie=f"claude_memory_web_37777={GUARD.session[:-1]}") == 401
    assert status("GET", "/", cookie=f"claude_memory_web_37777={TOKEN}") == 401  # the cookie is never the token
    assert status("GET", "/", cookie=f"claude_memory_web_8080={GUARD.session}") == 401  # another port's cookie
    assert status("GET", "/", **COOKIE_HEADER) is None
    assert status("GET", "/api/v1/stats", authorization="Bearer é" + TOKEN[1:]) == 401  # not a crash
    assert status("GET", "/", cookie="claude_memory_web_37777=\u00e9") == 401
    assert status("GET", "/login") is None  # how a browser signs in
    assert status("GET", "/login/", **{}) == 401


def test_a_sign_in_code_works_once_and_not_for_long(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = Guard(TOKEN, 37777)
    code = guard.new_code()
    assert code not in (TOKEN, guard.session) and len(code) >= 24
    assert guard.login(code) and not guard.login(code)
    assert not guard.login(TOKEN) and not guard.login("") and not guard.login("é")
    late = guard.new_code()
    now = auth.time.monotonic()
    monkeypatch.setattr(auth.time, "monotonic", lambda: now + auth.CODE_SECONDS + 1)
    assert not guard.login(late)
    for _ in range(auth.MAX_CODES * 2):
        guard.new_code()
    assert len(guard.codes) <= auth.MAX_CODES
    assert Guard(TOKEN, 37777).session != guard.session  # a new session each time the server starts


def test_only_the_loopback_names_with_our_port_are_served() -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    for host in ("127.0.0.1:37777", "localhost:37777", "[::1]:37777", "LOCALHOST:37777"):
        assert status("GET", "/api/v1/stats", host=host, **auth) is None, host
    for host in ("evil.example", "evil.example:37777", "127.0.0.1", "127.0.0.1:8080", "0.0.0.0:37777", ""):
        assert status("GET", "/api/v1/stats", host=host, **auth) == 421, host


def test_other_origins_are_refused_even_with_the_cookie() -> None:
    csrf = {"x-csrf-token": csrf_for(GUARD.session)}
    assert status("POST", "/api/v1/forget", origin="http://evil.example", **COOKIE_HEADER, **csrf) == 403
    assert status("GET", "/api/v1/details", **{"sec-fetch-site": "same-site"}, **COOKIE_HEADER) == 403  # another port
    assert status("POST", "/api/v1/forget", origin="http://127.0.0.1:9999", **COOKIE_HEADER, **csrf) == 403
    assert status("POST", "/api/v1/forget", origin="null", **COOKIE_HEADER, **csrf) == 403
    assert status("GET", "/api/v1/stats", **{"sec-fetch-site": "cross-site"}, **COOKIE_HEADER) == 403
    assert status("POST", "/api/v1/forget", origin="http://127.0.0.1:37777", **COOKIE_HEADER, **csrf) is None
    assert status("GET", "/api/v1/stats", **{"sec-fetch-site": "same-origin"}, **COOKIE_HEADER) is None
    assert status("GET", "/", **{"sec-fetch-site": "none"}, **COOKIE_HEADER) is None  # typed in the address bar


def test_a_cookie_change_needs_the_csrf_token_and_a_token_change_does_not() -> None:
    assert status("POST", "/api/v1/forget", **COOKIE_HEADER) == 403
    assert status("POST", "/api/v1/forget", **COOKIE_HEADER, **{"x-csrf-token": csrf_for("other")}) == 403
    assert status("POST", "/api/v1/forget", **COOKIE_HEADER, **{"x-csrf-token": GUARD.csrf}) is None
    assert status("GET", "/api/v1/stats", **COOKIE_HEADER) is None
    assert status("POST", "/api/v1/forget", authorization=f"Bearer {TOKEN}") is None
    assert GUARD.csrf not in (csrf_for(TOKEN), GUARD.session)


def test_the_token_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = load_token(tmp_path / "data")
    assert len(first) >= 32 and load_token(tmp_path / "data") == first
    mode = (tmp_path / "data" / "web-token").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600
    (tmp_path / "data" / "web-token").write_text("short\n")
    assert load_token(tmp_path / "data") not in (first, "short")
    token_file = tmp_path / "data" / "web-token"
    readable = token_file.read_text().strip()
    token_file.chmod(0o644)  # others could read it: it is replaced, not used
    assert load_token(tmp_path / "data") != readable
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token_file.unlink()
    token_file.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(auth.TokenFileError):
        load_token(tmp_path / "data")


def test_query_strings_become_the_contract_parameters() -> None:
    pairs = [("limit", "5"), ("types", "user_prompt"), ("types", "tool_use"), ("since", "2026-01-01T00:00:00Z")]
    params = api.query_params(HistoryParams, pairs)
    assert params == {"limit": "5", "types": ["user_prompt", "tool_use"], "since": "2026-01-01T00:00:00Z"}
    assert api.query_params(HistoryParams, [("types", "a,b")])["types"] == ["a,b"]  # a path may hold a comma
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
    assert {"hook", "capture", "drain", "shutdown", "import", "embed_wait", "model_fetch", "model_use"}.isdisjoint(
        served
    )
    assert {"search", "details", "history", "stats", "activity", "changes", "forget", "context", "insights"} <= served
    forget = ops.get("forget")
    search = ops.get("search")
    assert forget is not None and search is not None
    assert api.methods(forget) == ("POST",) and api.methods(search) == ("GET", "POST")
