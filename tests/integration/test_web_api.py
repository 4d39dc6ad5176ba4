"""The dashboard's HTTP API and its defences, against the real processes: the project's own fixture history
imported, the memory service watching it, ``claude-memory web`` in front, and a real HTTP client (httpx).

Each security test names the defence it checks; each would pass a request the defence exists to refuse."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from claude_memory.service.operations import registry
from claude_memory.web import api
from support import own_fixtures as fx
from support import service_proc
from support.web_proc import Dashboard, append_prompt, cli, dashboard

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path) -> Iterator[Dashboard]:
    root = tmp_path_factory.mktemp("web")
    home = root / "claude"
    shutil.copytree(fixtures_home / "projects", home / "projects")
    with dashboard(root / "data", home) as running:
        yield running


@contextmanager
def logged_in(board: Dashboard) -> Iterator[httpx.Client]:
    """A client holding the dashboard's cookie, as a browser has it after opening the printed address."""
    with httpx.Client(base_url=board.base, timeout=60) as client:
        answer = client.get(board.sign_in_url().removeprefix(board.base))
        assert answer.status_code == 303 and answer.headers["location"] == "/"
        session = client.cookies.get(f"claude_memory_web_{board.port}")
        assert session and session != board.token
        yield client


def csrf(board: Dashboard, client: httpx.Client) -> str:
    page = client.get("/").text
    return page.split('name="csrf" content="', 1)[1].split('"', 1)[0]


# ---------------------------------------------------------------------- defences


def test_without_the_token_every_request_is_refused(board: Dashboard) -> None:
    with httpx.Client(base_url=board.base, timeout=30) as anonymous:
        for path in ("/api/v1/stats", "/", "/static/app.js", "/api/v1/openapi.json", "/api/v1/stream"):
            answer = anonymous.get(path)
            assert answer.status_code == 401, path
        body = anonymous.get("/api/v1/stats").json()
        assert body["error"]["code"] == "unauthorized" and body["error"]["message"].endswith(".")
        assert anonymous.get("/api/v1/stats", headers={"Authorization": "Bearer " + "x" * 43}).status_code == 401
        assert anonymous.get("/api/v1/stats", headers={"Authorization": b"Bearer \xe9"}).status_code == 401  # not a 500
        assert anonymous.get(f"/login?token={board.token}").status_code == 401  # the token never signs a browser in
        assert "set-cookie" not in anonymous.get("/login?code=wrong").headers
        token_as_cookie = {"Cookie": f"claude_memory_web_{board.port}={board.token}"}
        assert anonymous.get("/api/v1/stats", headers=token_as_cookie).status_code == 401  # the cookie is not the token
        assert anonymous.post("/signin").status_code == 401
    with board.client() as client:
        assert client.get("/api/v1/stats").status_code == 200


def test_a_wrong_host_header_is_refused(board: Dashboard) -> None:
    """DNS rebinding: another site's page reaching 127.0.0.1 under its own name still says that name."""
    with board.client() as client:
        for host in ("evil.example", f"evil.example:{board.port}", f"127.0.0.1:{board.port + 1}", "127.0.0.1"):
            answer = client.get("/api/v1/stats", headers={"Host": host})
            assert answer.status_code == 421, host
            assert answer.json()["error"]["code"] == "wrong_host"
        for host in (f"127.0.0.1:{board.port}", f"localhost:{board.port}"):
            assert client.get("/api/v1/stats", headers={"Host": host}).status_code == 200


def test_a_cross_origin_post_with_the_cookie_is_refused(board: Dashboard) -> None:
    with logged_in(board) as browser:
        token = csrf(board, browser)
        body = {"session": "no-such-session", "dry_run": True}
        evil = browser.post(
            "/api/v1/forget", json=body, headers={"Origin": "http://evil.example", "X-CSRF-Token": token}
        )
        assert evil.status_code == 403 and evil.json()["error"]["code"] == "cross_origin"
        assert "access-control-allow-origin" not in evil.headers
        fetched = browser.get("/api/v1/stats", headers={"Sec-Fetch-Site": "cross-site"})
        assert fetched.status_code == 403
        own = browser.post("/api/v1/forget", json=body, headers={"Origin": board.base, "X-CSRF-Token": token})
        assert own.status_code == 200, own.text
        assert "access-control-allow-origin" not in own.headers


def test_a_state_change_without_the_csrf_token_is_refused(board: Dashboard) -> None:
    with logged_in(board) as browser:
        body = {"session": "no-such-session", "dry_run": True}
        bare = browser.post("/api/v1/forget", json=body)
        assert bare.status_code == 403 and bare.json()["error"]["code"] == "csrf"
        wrong = browser.post("/api/v1/forget", json=body, headers={"X-CSRF-Token": "0" * 40})
        assert wrong.status_code == 403
        assert (
            browser.post("/api/v1/forget", json=body, headers={"X-CSRF-Token": csrf(board, browser)}).status_code == 200
        )
        assert browser.get("/api/v1/stats").status_code == 200  # reads need no CSRF token
    with board.client() as script:  # the token itself (no cookie a browser would attach): no CSRF needed
        assert script.post("/api/v1/forget", json=body).status_code == 200


def test_a_sign_in_address_works_once_and_sets_an_httponly_strict_cookie(board: Dashboard) -> None:
    url = board.sign_in_url()
    assert board.token not in url
    with httpx.Client(timeout=30) as client:
        answer = client.get(url)
        again = client.get(url)
    assert again.status_code == 401 and "set-cookie" not in again.headers
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    assert answer.headers["location"] == "/"  # the token does not stay in the address bar
    assert "default-src 'self'" in answer.headers["content-security-policy"]
    assert answer.headers["cache-control"] == "no-store"


def _listening(port: int) -> list[str]:
    """The local addresses listening on ``port`` (IPv4 and IPv6), from /proc/net."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.append(address)
    return found


def _outward_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 9))  # no packet is sent: this only picks the outward interface
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_the_port_is_bound_to_loopback_only(board: Dashboard) -> None:
    assert _listening(board.port) == ["0100007F"]  # 127.0.0.1, nothing else, no IPv6 wildcard
    outward = _outward_address()
    if outward is not None:
        with pytest.raises(OSError), socket.create_connection((outward, board.port), timeout=3):
            pass


def test_a_port_in_use_is_one_sentence_unless_our_dashboard_holds_it(board: Dashboard, tmp_path: Path) -> None:
    again = cli(board.data, board.home, "web", "--port", str(board.port), "--no-start")
    assert again.returncode == 0, again.stderr
    url = again.stdout.strip().rsplit(" ", 1)[1]
    said = f"The dashboard for {board.data} is already running; sign in at {board.base}/login?code="
    assert again.stdout.startswith(said)
    with httpx.Client(timeout=30) as client:
        assert client.get(url).status_code == 303  # a fresh address that works
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        taken = cli(tmp_path / "other", board.home, "web", "--port", str(port), "--no-start")
    assert taken.returncode == 1
    assert taken.stderr.strip() == f"Error: Port {port} is in use on 127.0.0.1; pick another with --port."


# ---------------------------------------------------------------------- the API


def test_the_api_answers_what_the_cli_answers(board: Dashboard) -> None:
    stats = board.api("stats")
    from_cli = json.loads(cli(board.data, board.home, "stats", "--json").stdout)
    assert stats == from_cli
    assert stats["events"] == board.imported["events"]["new"] > 0
    with board.client() as client:
        by_get = client.get("/api/v1/history", params={"limit": 3, "types": ["user_prompt", "tool_use"]}).json()
        by_post = client.post("/api/v1/history", json={"limit": 3, "types": ["user_prompt", "tool_use"]}).json()
        assert by_get == by_post and len(by_get) == 3
        assert {e["type"] for e in by_get} <= {"user_prompt", "tool_use"}
        found = client.get("/api/v1/search", params={"query": fx.ECHO_WORD, "mode": "keyword"}).json()
        assert found["results"] and fx.ECHO_WORD in found["results"][0]["text"]
        prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "web-test", "cwd": fx.WORK,
                  "prompt": f"what did {fx.ECHO_WORD} print?"}  # fmt: skip
        preview = client.post("/api/v1/context", json={"payload": prompt}).json()
        assert set(preview) >= {"additional_context", "citations"}


def test_errors_are_one_sentence_with_a_code_and_status(board: Dashboard) -> None:
    with board.client() as client:
        cases = [
            (client.get("/api/v1/history", params={"limit": "many"}), 400, "bad_request", "limit"),
            (client.get("/api/v1/history", params={"colour": "red"}), 400, "bad_request", "colour"),
            (client.post("/api/v1/history", content=b"{not json"), 400, "bad_request", "JSON"),
            (client.post("/api/v1/history", json=[1, 2]), 400, "bad_request", "object"),
            (client.get("/api/v1/forget", params={"refs": "mem:AAAAAA"}), 405, "bad_request", "POST"),
            (client.get("/api/v1/no_such_thing"), 404, "not_found", "operation"),
            (client.get("/api/v1/task", params={"id": "task:none"}), 404, "not_found", "task"),
            (client.get("/api/v1/a/b"), 404, "not_found", "nothing"),
            (client.put("/api/v1/stats"), 405, "bad_request", "method"),
        ]
        for answer, status, code, word in cases:
            error = answer.json()["error"]
            assert (answer.status_code, error["code"]) == (status, code), answer.text
            assert word.lower() in error["message"].lower() and error["message"].endswith(".")
            assert "\n" not in error["message"]


def test_only_the_published_operations_are_served(board: Dashboard) -> None:
    ops = registry()
    served = {op.name for op in api.published(ops)}
    assert {"search", "details", "history", "sessions", "stats", "activity", "changes", "forget", "context"} <= served
    with board.client() as client:
        for name in ("hook", "capture", "shutdown", "drain", "import", "embed_wait", "model_fetch", "model_use"):
            assert name not in served
            assert client.post(f"/api/v1/{name}", json={}).status_code == 404, name
        assert client.get("/api/v1/ping").json()["pid"] > 0  # the service is still there


def test_the_served_openapi_schema_is_the_checked_in_one(board: Dashboard) -> None:
    served = board.api("openapi.json")
    assert served == json.loads((REPO / "docs" / "openapi.json").read_text(encoding="utf-8"))
    assert set(served["paths"]) == {f"/api/v1/{op.name}" for op in api.published(registry())}


def test_new_events_arrive_on_the_stream_in_one_batch(board: Dashboard) -> None:
    transcript = board.home / "projects" / "-home-dev-work" / f"{fx.GREETING}.jsonl"
    markers = [f"stream-marker-{i}-{time.monotonic_ns()}" for i in range(2)]
    with board.client() as client, client.stream("GET", "/api/v1/stream", timeout=httpx.Timeout(60, read=60)) as feed:
        assert feed.headers["content-type"].startswith("text/event-stream")
        kind, deadline, written = None, time.monotonic() + 60, False
        for line in feed.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind == "status" and not written:
                append_prompt(transcript, *markers)  # after the first look (status follows it): where it starts
                written = True
            elif line.startswith("data:") and kind == "events":
                batch = json.loads(line.split(":", 1)[1])
                texts = [e["text"] for e in batch["events"]]
                if any(markers[0] in t for t in texts):
                    assert any(markers[1] in t for t in texts), "two lines written together arrive in one message"
                    assert batch["count"] == len(batch["events"]) and batch["seq"] > 0
                    assert all(e["session_id"] == fx.GREETING for e in batch["events"])
                    break
            assert time.monotonic() < deadline, "the new prompts never reached the stream"


def test_a_stopped_service_is_one_sentence(tmp_path: Path) -> None:
    data = tmp_path / "data"
    web = subprocess.Popen(
        [sys.executable, "-m", "claude_memory", "web", "--port", "0", "--no-start"],
        env=service_proc.env(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert web.stdout is not None
        url = web.stdout.readline().rsplit(" ", 1)[1].strip()
        base, token = url.split("/login")[0], (data / "web-token").read_text().strip()
        answer = httpx.get(f"{base}/api/v1/stats", headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert answer.status_code == 503
        error = answer.json()["error"]
        assert error["code"] == "unavailable" and "not running" in error["message"]
        assert (data / "web-token").stat().st_mode & 0o077 == 0
    finally:
        web.terminate()
        web.wait(20)


def test_the_injection_preview_counts_no_use(board: Dashboard) -> None:
    """The dashboard's preview asks what a prompt would get; only what reaches Claude (or is opened) is a use."""
    asked = 0

    def context(session: str, preview: bool) -> list[str]:
        prompt = {"hook_event_name": "UserPromptSubmit", "session_id": session, "cwd": fx.WORK,
                  "prompt": f"what did {fx.ECHO_WORD} print?"}  # fmt: skip
        with board.client() as client:
            answer = client.post("/api/v1/context", json={"payload": prompt, "preview": preview})
        assert answer.status_code == 200, answer.text
        return [str(c) for c in answer.json()["citations"]]

    def uses(citation: str) -> int:
        """The memory's uses, less those of these look-ups (each opening counts one, at once)."""
        nonlocal asked
        asked += 1
        return int(board.api("details", refs=citation, via="test")["details"][0]["citation_uses"]) - asked

    def settles(citation: str, wanted: int) -> int:
        deadline = time.monotonic() + 30  # the service writes counted uses once it has been quiet for a second
        while (found := uses(citation)) < wanted and time.monotonic() < deadline:
            time.sleep(2.0)  # not sooner: each look is a request, and uses are written after a quiet second
        return found

    shown = context("preview-1", True)
    assert shown, "the prompt is answered with memories"
    time.sleep(2.5)  # uses counted by earlier tests are written once the service has been quiet for a second
    base = uses(shown[0])
    assert context("counted-1", False) == shown
    assert settles(shown[0], base + 1) == base + 1  # a context that reaches Claude counts
    for n in range(3):
        context(f"preview-{n + 2}", True)
    context("counted-2", False)
    # written in order: had the previews counted, they would be in by the time the second counted context is
    assert settles(shown[0], base + 2) == base + 2
