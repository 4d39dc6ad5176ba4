"""The dashboard in a real browser: Playwright driving headless Chromium (the system's, never a downloaded one)
against ``claude-memory web`` and the memory service, over a store imported from ../shared's Claude home.

One browser session walks what a person does: opens the printed address, reads the overview, searches and opens
a memory, reads a session's timeline, watches a new prompt arrive live, and forgets it after the preview. Each
page's screenshot is saved under test-artifacts/web (or $CLAUDE_MEMORY_ARTIFACTS/web), never committed."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.web_proc import Dashboard, append_prompt, dashboard

pytestmark = pytest.mark.covered_by("tests/integration/test_web_api.py")

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip
WAIT_MS = 30_000


def chromium() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide Chromium (.ci/run installs the chromium package).")
        pytest.skip("needs a system Chromium (apt install chromium) for the browser tests")
    return found


@pytest.fixture(scope="module")
def artifacts() -> Path:
    root = Path(os.environ.get("CLAUDE_MEMORY_ARTIFACTS", REPO / "test-artifacts")) / "web"
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="module")
def board(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    from conftest import third_party

    shared_home = third_party(request, "claude_home")
    root = tmp_path_factory.mktemp("web-e2e")
    home = root / "claude"
    shutil.copytree(shared_home / "projects", home / "projects")
    with dashboard(root / "data", home) as running:
        yield running


@pytest.fixture(scope="module")
def page(board: Dashboard) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        tab.set_default_timeout(WAIT_MS)
        problems: list[str] = []
        tab.on("pageerror", lambda exc: problems.append(str(exc)))
        expected = ("status of 400", "status of 404")  # an API answer the page shows (a file not on disk for blame)

        def console(msg: Any) -> None:
            if msg.type == "error" and not any(e in msg.text for e in expected):
                problems.append(msg.text)

        tab.on("console", console)
        tab.problems = problems
        try:
            yield tab
        finally:
            browser.close()


def number(value: int) -> str:
    return f"{value:,}"


def test_1_opening_the_printed_address_logs_in_and_shows_the_right_counts(
    board: Dashboard, page: Any, artifacts: Path
) -> None:
    page.goto(board.login_url)
    page.wait_for_selector('[data-testid="stat-events"]')
    assert page.url == board.base + "/"  # the token left the address bar
    cookie = next(c for c in page.context.cookies() if c["name"] == f"claude_memory_web_{board.port}")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["value"] != board.token
    stats = board.api("stats")
    assert stats["events"] == board.imported["events"]["new"]
    assert page.inner_text('[data-testid="stat-events"]') == number(stats["events"])
    assert page.inner_text('[data-testid="stat-sessions"]') == number(stats["sessions"])
    assert page.inner_text('[data-testid="stat-projects"]') == number(stats["projects"])
    shown = {cell.get_attribute("data-type"): cell.inner_text() for cell in page.query_selector_all("#by-type td.num")}
    assert shown == {kind: number(n) for kind, n in stats["events_by_type"].items()}
    bars = page.query_selector_all("#activity-chart rect")
    activity = board.api("activity", days=30)
    assert len(bars) == sum(len(day["by_type"]) for day in activity["days"]) > 0  # a bar per day and type
    page.select_option("#chart-split", "project")
    page.wait_for_selector('#activity-chart[data-split="project"]')
    bars = page.query_selector_all("#activity-chart rect")
    assert len(bars) == sum(len(day["by_project"]) for day in activity["days"])
    assert activity["projects"][0]["project"] in page.inner_text("#activity-chart .legend")
    page.wait_for_selector("#live.on")  # the live stream is connected
    page.screenshot(path=str(artifacts / "overview.png"), full_page=True)
    assert page.problems == []


def known_prompt(board: Dashboard) -> dict[str, Any]:
    """A user prompt of the fixtures with enough words to search for."""
    prompts = board.api("history", types="user_prompt", limit=500)
    return max(prompts, key=lambda e: len(set(re.findall(r"[a-z]{4,}", e["text"].lower()))))


def test_2_search_finds_a_known_memory_and_opens_it_in_place(board: Dashboard, page: Any, artifacts: Path) -> None:
    target = known_prompt(board)
    words = list(dict.fromkeys(re.findall(r"[a-z]{5,}", target["text"].lower())))[:8]
    page.goto(board.base + "/#/search")
    page.fill("#q", " ".join(words))
    page.press("#q", "Enter")
    page.wait_for_selector("#results .hit")
    hit = page.wait_for_selector(f'#results .hit[data-citation="{target["citation"]}"]')
    hit.query_selector(".head").click()
    details = hit.wait_for_selector(".open .details")
    full = details.query_selector("pre.full").inner_text()
    assert full.strip() == target["text"].strip()
    source = details.query_selector('[data-testid="source"]').inner_text()
    assert source.startswith(target["source"]["path"]) and f":{target['source']['line_start']}" in source
    page.click("#preview-button")
    page.wait_for_selector("#preview .preview")
    page.screenshot(path=str(artifacts / "search.png"), full_page=True)
    page.goto(board.base + f"/#/memory/{target['citation']}")
    page.wait_for_selector(f'h1:text-is("Memory {target["citation"]}")')
    assert page.inner_text(".details pre.full").strip() == target["text"].strip()
    page.screenshot(path=str(artifacts / "memory.png"), full_page=True)
    assert page.problems == []


def test_3_a_session_timeline_renders_its_tool_calls(board: Dashboard, page: Any, artifacts: Path) -> None:
    sessions = board.api("sessions", limit=100)
    busiest = max(sessions, key=lambda s: s["events"])
    calls = board.api("history", session=busiest["session_id"], types="tool_use", limit=10000)
    assert calls, "the busiest fixture session has tool calls"
    page.goto(board.base + "/#/sessions")
    page.wait_for_selector("#sessions a")
    assert len(page.query_selector_all("#sessions tr")) == len(sessions) + 1  # and a heading row
    assert page.query_selector("#older-sessions").is_hidden()  # fewer than a page of them
    page.screenshot(path=str(artifacts / "sessions.png"), full_page=True)
    page.click(f'#sessions a[href="#/session/{busiest["session_id"]}"]')
    page.wait_for_selector("#timeline .item")
    tools = page.query_selector_all("#timeline details.item.tool_use")
    assert len(tools) == len(calls)
    names = {call["tool_name"] for call in calls}
    assert {t.query_selector("summary").inner_text().split(" · ")[0] for t in tools} == names
    assert len(page.query_selector_all("#timeline .item")) == busiest["events"]
    tools[0].query_selector("summary").click()
    assert tools[0].query_selector("pre").is_visible()
    if busiest["subagents"]:
        assert page.query_selector_all("#timeline .subagent .item")
    page.screenshot(path=str(artifacts / "session.png"))
    assert page.problems == []


def test_4_a_prompt_written_to_a_transcript_appears_without_reload(
    board: Dashboard, page: Any, artifacts: Path
) -> None:
    latest = board.api("sessions", limit=1)[0]
    page.goto(board.base + f"/#/session/{latest['session_id']}")
    page.wait_for_selector("#timeline .item")
    page.wait_for_selector("#live.on")
    page.evaluate("window.__same_page = true")
    marker = f"live-marker-{time.monotonic_ns()}"
    markup = '<img src=x onerror="window.__injected=1"><script>window.__injected=2</script>'
    tail = " and keep the rest of this long prompt too" * 12  # past the 400 characters a live message carries
    prompt = f"Please remember {marker} for later {markup}{tail}."
    append_prompt(Path(latest["transcript"]), prompt)
    arrived = page.wait_for_selector(f'#timeline .item.fresh:has-text("{marker}")', timeout=45_000)
    assert page.evaluate("window.__same_page") is True  # no reload happened
    assert page.inner_text("#event-count") == f"{latest['events'] + 1} events"
    assert arrived.query_selector("a.cite") is not None
    assert markup in arrived.inner_text()  # stored text is shown as text
    assert arrived.query_selector("img, script") is None and page.evaluate("window.__injected") is None
    arrived.query_selector("button.more").click()  # the rest of a long prompt, fetched when asked
    page.wait_for_function("(item) => !item.querySelector('button.more')", arg=arrived)
    assert prompt in arrived.inner_text()
    page.screenshot(path=str(artifacts / "live.png"))
    assert page.problems == []


def test_5_forget_previews_then_removes_a_memory(board: Dashboard, page: Any, artifacts: Path) -> None:
    found = board.api("search", query="live-marker", mode="keyword")["results"]
    assert found, "the live prompt of the previous test is stored"
    citation = found[0]["citation"]
    before = board.api("stats")["events"]
    page.goto(board.base + f"/#/forget?refs={citation}")
    page.click('form button[type="submit"]')
    preview = page.wait_for_selector("#forget-preview")
    assert preview.inner_text().startswith("1 memory would be forgotten")
    assert board.api("details", refs=citation)["details"], "the preview forgets nothing"
    page.screenshot(path=str(artifacts / "forget.png"))
    page.click("#confirm-forget")
    assert page.wait_for_selector("#forgotten").inner_text() == "Forgotten: 1 memory."
    assert board.api("details", refs=citation)["missing"] == [citation]
    assert board.api("stats")["events"] == before - 1
    assert not [
        hit
        for hit in board.api("search", query="live-marker", mode="keyword")["results"]
        if hit["citation"] == citation
    ]
    assert page.problems == []


def test_6_the_knowledge_pages_render(board: Dashboard, page: Any, artifacts: Path) -> None:
    def show(name: str, title: str) -> None:
        page.goto(board.base + f"/#/{name}")
        page.wait_for_selector(f'h1:text-is("{title}")')

    tasks = board.api("tasks", limit=500)
    show("tasks", "Tasks")
    assert len(page.query_selector_all("#board li")) == len(tasks)
    page.screenshot(path=str(artifacts / "tasks.png"), full_page=True)
    insights = board.api("insights")
    show("insights", "Insights")
    assert len(page.query_selector_all("#topics > li")) == len(insights["topics"])
    page.screenshot(path=str(artifacts / "insights.png"), full_page=True)
    touched = next(e for e in board.api("history", types="tool_use", limit=500) if e["files"])
    show("files", "Files")
    page.fill('input[name="path"]', touched["files"][0])
    page.press('input[name="path"]', "Enter")
    page.wait_for_selector(f'.convo .item[data-citation="{touched["citation"]}"]')
    page.screenshot(path=str(artifacts / "files.png"), full_page=True)
    page.emulate_media(color_scheme="dark")
    show("", "Overview")
    page.screenshot(path=str(artifacts / "overview-dark.png"), full_page=True)
    assert page.problems == []
