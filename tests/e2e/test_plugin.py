"""The Claude Code plugin with the real ``claude`` CLI (scratch HOME, never the real ~/.claude).

Install runs from a copy of the plugin's own files (manifests, bin/, commands/, hooks/, .mcp.json):
Claude Code copies a directory plugin's whole folder into its cache, and the working tree also holds
.venv and .tools (about 1 GB), which would make every install here slow. The validation tests read
the repository root itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import holder_pid
from support import own_fixtures
from support.fake_anthropic import FakeAnthropic, Rule, text, tool

REPO = Path(__file__).resolve().parents[2]
# What of a checkout the plugin uses: the marketplace, the plugin folder, and the hook launchers beside it.
PLUGIN_FILES = (".claude-plugin", "plugin", "hooks")
PLUGIN_ID = "memory-layer@claude-memory-local"
COMMANDS = ("memory-search", "memory-history", "memory-stats", "memory-import", "memory-list", "memory-forget")


def copy_plugin(dest: Path, parts: tuple[str, ...] = PLUGIN_FILES) -> Path:
    dest.mkdir(parents=True)
    for name in parts:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture()
def env(tmp_path: Path, claude_bin: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    environ = {
        **os.environ,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "data"),
        "CLAUDE_BIN": str(claude_bin),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "COLUMNS": "200",
    }
    environ.pop("CLAUDE_MEMORY_PYTHON", None)
    return environ


def claude(
    claude_bin: Path, env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(claude_bin), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def memory(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claude_memory", *args], env=env, capture_output=True, text=True, timeout=600
    )


def listed(claude_bin: Path, env: dict[str, str]) -> dict[str, Any]:
    out = claude(claude_bin, env, "plugin", "list", "--json")
    assert out.returncode == 0, out.stderr
    return {p["id"]: p for p in json.loads(out.stdout)}


@pytest.mark.parametrize("target", ["", "plugin", "plugin/.claude-plugin/plugin.json"])
@pytest.mark.parametrize("strict", [True, False])
def test_validate_passes(claude_bin: Path, env: dict[str, str], target: str, strict: bool) -> None:
    """The repository root validates as a marketplace (and its plugin), and so do the plugin folder and its
    plugin.json on their own."""
    args = ["plugin", "validate", str(REPO / target) if target else str(REPO), *(["--strict"] if strict else [])]
    out = claude(claude_bin, env, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Validation passed" in out.stdout


def test_validate_reports_every_part(claude_bin: Path, env: dict[str, str]) -> None:
    out = claude(
        claude_bin, env, "plugin", "validate", str(REPO / "plugin" / ".claude-plugin" / "plugin.json"), "--json"
    )
    report = json.loads(out.stdout)
    assert report["success"] is True and not report["manifest"]["errors"] and not report["manifest"]["warnings"]
    provides = json.dumps(report["provides"])
    for command in COMMANDS:
        assert f"memory-layer:{command}" in provides
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "PreCompact"):
        assert event in provides
    assert "bin/claude-memory" in provides and "memory" in provides


def test_install_is_idempotent_and_uninstall_removes_it(tmp_path: Path, claude_bin: Path, env: dict[str, str]) -> None:
    root = copy_plugin(tmp_path / "checkout")
    (root / "bench" / "out").mkdir(parents=True)  # what a real checkout also holds: the plugin must not carry it
    (root / "bench" / "out" / "store.duckdb").write_bytes(b"\0" * (4 << 20))
    settings = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.write_text(json.dumps({"theme": "dark", "env": {"KEEP_ME": "1"}}), encoding="utf-8")

    first = memory(env, "install", "--plugin-root", str(root))
    assert first.returncode == 0, first.stderr
    assert "Installed the Claude Code plugin memory-layer@claude-memory-local" in first.stdout
    plugin = listed(claude_bin, env)[PLUGIN_ID]
    assert plugin["enabled"] is True and plugin["scope"] == "user"
    assert Path(plugin["readFromFolder"]).resolve() == (root / "plugin").resolve()
    # Claude Code's cache copy is the plugin folder alone (it was the whole checkout, .venv and all)
    cached = sorted(str(p.relative_to(plugin["installPath"])) for p in Path(plugin["installPath"]).rglob("*"))
    assert ".claude-plugin/plugin.json" in cached and "hooks/hooks.json" in cached
    assert not any(p.startswith(("bench", "server", ".venv")) for p in cached), cached
    assert sum(p.stat().st_size for p in Path(plugin["installPath"]).rglob("*") if p.is_file()) < 64 << 10
    # The copy has no .venv: the interpreter running claude-memory is recorded for hooks and MCP.
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["env"] == {"KEEP_ME": "1", "CLAUDE_MEMORY_PYTHON": sys.executable}
    assert data["theme"] == "dark"

    again = memory(env, "install", "--plugin-root", str(root))
    assert again.returncode == 0, again.stderr
    assert "already installed" in again.stdout
    assert json.loads(settings.read_text(encoding="utf-8")) == data

    doctor = memory(env, "doctor", "--plugin-root", str(root), "--json")
    report = json.loads(doctor.stdout)
    assert report["plugin"]["installed"] is True and report["plugin"]["enabled"] is True
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["plugin"]["status"] == "ok", checks["plugin"]
    assert checks["claude"]["status"] == "ok" and "2.1." in checks["claude"]["message"]
    assert checks["hooks"]["status"] == "ok", checks["hooks"]
    assert checks["hook_python"]["status"] == "ok", checks["hook_python"]
    assert checks["service"]["status"] in ("ok", "warn")
    assert doctor.returncode == (0 if report["ok"] else 1)

    gone = memory(env, "uninstall", "--plugin-root", str(root))
    assert gone.returncode == 0, gone.stderr
    assert f"Your memories are kept in {env['CLAUDE_MEMORY_HOME']}" in gone.stdout
    assert PLUGIN_ID not in listed(claude_bin, env)
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["env"] == {"KEEP_ME": "1"} and data["theme"] == "dark"
    market = claude(claude_bin, env, "plugin", "marketplace", "list", "--json")
    assert "claude-memory-local" not in market.stdout

    twice = memory(env, "uninstall", "--plugin-root", str(root))
    assert twice.returncode == 0 and "not installed" in twice.stdout

    doctor = memory(env, "doctor", "--plugin-root", str(root), "--json")
    assert doctor.returncode == 1
    report = json.loads(doctor.stdout)
    assert report["plugin"]["installed"] is False
    assert {c["name"]: c["status"] for c in report["checks"]}["plugin"] == "error"


def test_install_errors_are_one_sentence(tmp_path: Path, env: dict[str, str]) -> None:
    root = copy_plugin(tmp_path / "checkout")
    missing = memory(env, "install", "--plugin-root", str(root), "--claude-bin", str(tmp_path / "nope"))
    assert missing.returncode == 1
    assert missing.stderr.startswith("Error: --claude-bin points at") and missing.stderr.count("\n") == 1

    no_root = memory(env, "install", "--plugin-root", str(tmp_path))
    assert no_root.returncode == 1 and "is not the plugin root" in no_root.stderr

    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\necho 'first problem' >&2\necho 'second line' >&2\nexit 3\n", encoding="utf-8")
    fake.chmod(0o755)
    failed = memory(env, "install", "--plugin-root", str(root), "--claude-bin", str(fake))
    assert failed.returncode == 1
    assert failed.stderr == f"Error: `claude plugin marketplace add {root.resolve()}` failed: first problem\n"


@pytest.fixture()
def api(env: dict[str, str], fake_anthropic: Callable[..., FakeAnthropic]) -> Iterator[FakeAnthropic]:
    """The project's fake Anthropic API (tests/support/fake_anthropic.py), which records every request."""
    yield fake_anthropic()
    memory(env, "stop")  # in case a command started the memory service for this data directory


@pytest.fixture()
def fake_api(env: dict[str, str], api: FakeAnthropic) -> dict[str, str]:
    """The environment for claude, talking to the fake API."""
    return {**env, **api.env()}


def test_slash_commands_run_the_cli(
    tmp_path: Path, claude_bin: Path, fake_api: dict[str, str], api: FakeAnthropic, fixtures_home: Path
) -> None:
    """/memory-layer:memory-stats runs plugin/bin/claude-memory through `!`; memory-forget deletes nothing without
    --yes. Only the commands are loaded (no hooks, no MCP server), with $CLAUDE_MEMORY_PYTHON picking the
    interpreter because the copy has no .venv."""
    root = copy_plugin(tmp_path / "checkout", ("plugin/.claude-plugin", "plugin/bin", "plugin/commands")) / "plugin"
    env = {**fake_api, "CLAUDE_MEMORY_PYTHON": sys.executable}
    imported = memory(env, "import", "--claude-home", str(fixtures_home), "--no-wait", "--json")
    assert imported.returncode == 0, imported.stderr
    before = json.loads(memory(env, "stats", "--json").stdout)["events"]
    session = json.loads(memory(env, "sessions", "--json").stdout)["sessions"][0]["session_id"]
    work = tmp_path / "work"
    work.mkdir()

    def slash(prompt: str) -> dict[str, Any]:
        out = claude(claude_bin, env, "-p", prompt, "--plugin-dir", str(root), "--output-format", "json", cwd=work)
        assert out.returncode == 0, out.stderr
        result: dict[str, Any] = json.loads(out.stdout)
        return result

    slash("/memory-layer:memory-stats")
    sent = json.dumps(api.bodies())
    assert f"Events: {before} in " in sent, "the stats output did not reach the model"

    refused = slash(f"/memory-layer:memory-forget --session {session}")
    assert "re-run with --yes" in refused["result"] and refused["num_turns"] == 0
    assert json.loads(memory(env, "stats", "--json").stdout)["events"] == before


def test_an_installed_plugin_captures_a_session_through_its_hooks(
    tmp_path: Path, claude_bin: Path, fake_api: dict[str, str]
) -> None:
    """`claude-memory install`, then a real `claude -p`: Claude Code runs the installed plugin from the checkout's
    plugin/ folder, whose hooks reach the launcher in the checkout's hooks/ and store the session."""
    root = copy_plugin(tmp_path / "checkout", (*PLUGIN_FILES, "server/claude_memory"))
    installed = memory(fake_api, "install", "--plugin-root", str(root))
    assert installed.returncode == 0, installed.stderr
    work = tmp_path / "work"
    work.mkdir()
    lock = RuntimePaths(Path(fake_api["CLAUDE_MEMORY_HOME"])).lock
    assert holder_pid(lock) is None
    out = claude(claude_bin, fake_api, "-p", "Note the codeword quokka-lantern-42", "--output-format", "json", cwd=work)
    assert out.returncode == 0, out.stderr
    assert holder_pid(lock) is not None, "no hook started the memory service"  # nothing else ran yet
    deadline = time.monotonic() + 60
    while True:
        found = memory(fake_api, "search", "quokka-lantern-42", "--mode", "keyword", "--json")
        results = json.loads(found.stdout)["results"] if found.returncode == 0 else []
        if any("quokka-lantern-42" in r["text"] for r in results) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    hooks_log = Path(fake_api["CLAUDE_MEMORY_HOME"]) / "logs" / "hooks.log"
    assert results, f"nothing stored; hooks log: {hooks_log.read_text() if hooks_log.exists() else 'none'}"
    assert results[0]["type"] == "user_prompt" and results[0]["source"]["path"].startswith(str(Path(fake_api["HOME"])))


SEARCH_TOOL = "mcp__plugin_memory-layer_memory__search"  # Claude Code's name for plugin memory-layer's server memory


def test_claude_code_calls_the_search_tool_of_an_installed_plugin(
    tmp_path: Path,
    claude_bin: Path,
    env: dict[str, str],
    fixtures_home: Path,
    fake_anthropic: Callable[..., FakeAnthropic],
) -> None:
    """`claude-memory install`, then a real `claude -p` whose (scripted) model calls the plugin's MCP search tool:
    Claude Code starts plugin/.mcp.json's server (plugin/bin/claude-memory mcp), and the tool's answer, found in
    the memory store, reaches the model."""
    root = copy_plugin(tmp_path / "checkout", (*PLUGIN_FILES, "server/claude_memory"))
    environment = {**env, "CLAUDE_MEMORY_PYTHON": sys.executable}  # the copy has no .venv
    installed = memory(environment, "install", "--plugin-root", str(root))
    assert installed.returncode == 0, installed.stderr
    imported = memory(environment, "import", "--claude-home", str(fixtures_home), "--no-wait", "--json")
    assert imported.returncode == 0, imported.stderr
    look_up = tool(SEARCH_TOOL, query=own_fixtures.ECHO_WORD, mode="keyword", all_projects=True)
    rules = [Rule("LOOK_IT_UP", [[look_up], [text("Found it in memory.")]], needs_tool=SEARCH_TOOL)]
    work = tmp_path / "work"
    work.mkdir()
    api = fake_anthropic(rules)
    # (without ENABLE_TOOL_SEARCH=false Claude Code lists MCP tools only behind its ToolSearch tool; under `-p` it
    # waits 5 s for MCP servers to connect, which a loaded machine's Python start can exceed)
    talking = {**environment, **api.env(), "ENABLE_TOOL_SEARCH": "false", "MCP_CONNECT_TIMEOUT_MS": "60000"}
    try:
        out = claude(
            claude_bin, talking, "-p", "LOOK_IT_UP", "--allowedTools", SEARCH_TOOL, "--output-format", "json", cwd=work
        )
    finally:
        memory(environment, "stop")
    assert out.returncode == 0, out.stderr
    bodies = api.bodies()
    offered = sorted(
        {t.get("name", "") for b in bodies for t in b.get("tools", []) if t.get("name", "").startswith("mcp__")}
    )
    assert SEARCH_TOOL in offered, f"Claude Code offered these MCP tools: {offered}"
    results = [
        block
        for body in bodies
        for message in body.get("messages", [])
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results, "the model never got the tool's result"
    answer = json.dumps(results[-1].get("content"))
    assert not results[-1].get("is_error"), answer
    assert own_fixtures.ECHO_WORD in answer and "mem:" in answer  # a stored event, cited
    assert json.loads(out.stdout)["result"] == "Found it in memory."
