"""The Claude Code plugin with the real ``claude`` CLI (scratch HOME, never the real ~/.claude).

Install runs from a copy of the plugin's own files (manifests, bin/, commands/, hooks/, .mcp.json):
Claude Code copies a directory plugin's whole folder into its cache, and the working tree also holds
.venv and .tools (about 1 GB), which would make every install here slow. The validation tests read
the repository root itself.

They pass with both Claude Code versions the README names: the pinned 2.1.330 and the oldest supported,
2.1.197 (``.ci/run`` runs this file with each; set CLAUDE_BIN to try another). What only the newer one reports
(``plugin validate --json``, ``readFromFolder`` in ``plugin list --json``, a slash command's shell error as
its ``-p`` result) is required from 2.1.330 on; older ones are held to what they do report.
"""

from __future__ import annotations

import json
import os
import re
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
from support.plugin_home import scratch_env

REPO = Path(__file__).resolve().parents[2]
# What of a checkout the plugin uses: the marketplace, the plugin folder, and the hook launchers beside it.
PLUGIN_FILES = (".claude-plugin", "plugin", "hooks")
PLUGIN_ID = "memory-layer@claude-memory-local"
COMMANDS = ("memory-search", "memory-history", "memory-stats", "memory-import", "memory-list", "memory-forget")
PINNED = (2, 1, 330)  # the Claude Code .ci/run (and tests/conftest.py) pins: the newer reports are required from here


@pytest.fixture(scope="module")
def claude_version(claude_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, int, int]:
    """(2, 1, 330) from the CLI's ``2.1.330 (Claude Code)``."""
    home = tmp_path_factory.mktemp("version-home")
    out = subprocess.run(
        [str(claude_bin), "--version"],
        env={**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", out.stdout.strip())
    assert out.returncode == 0 and match, out.stdout + out.stderr
    return int(match[1]), int(match[2]), int(match[3])


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
    environ = {**scratch_env(tmp_path, claude_bin), "COLUMNS": "200"}
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


def test_claude_code_lists_every_part_of_the_plugin(claude_bin: Path, env: dict[str, str]) -> None:
    """`claude plugin details` (the same inventory in 2.1.197 and 2.1.330) shows the six commands, every event of
    hooks/hooks.json and the MCP server memory."""
    out = claude(claude_bin, env, "--plugin-dir", str(REPO / "plugin"), "plugin", "details", "memory-layer")
    assert out.returncode == 0, out.stdout + out.stderr
    inventory = {
        m["part"]: (int(m["count"]), m["names"].split("  (")[0].split(", "))
        for m in re.finditer(r"^ *(?P<part>[A-Z][A-Za-z ]*?) \((?P<count>\d+)\) +(?P<names>.+)$", out.stdout, re.M)
    }
    events = list(json.loads((REPO / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"])
    assert inventory["Skills"] == (len(COMMANDS), sorted(COMMANDS)), out.stdout
    assert inventory["Hooks"] == (len(events), events), out.stdout
    assert inventory["MCP servers"] == (1, ["memory"]), out.stdout


def test_validate_reports_every_part(claude_bin: Path, env: dict[str, str], claude_version: tuple[int, ...]) -> None:
    if "--json" not in claude(claude_bin, env, "plugin", "validate", "--help").stdout:
        assert claude_version < PINNED, "`claude plugin validate` lost its --json report"
        pytest.skip(
            f"`claude plugin validate` of Claude Code {'.'.join(map(str, claude_version))} has no --json report "
            "(2.1.330's has); test_claude_code_lists_every_part_of_the_plugin checks the parts it sees"
        )
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


def test_install_is_idempotent_and_uninstall_removes_it(
    tmp_path: Path, claude_bin: Path, env: dict[str, str], claude_version: tuple[int, ...]
) -> None:
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
    # Claude Code runs a directory marketplace's plugin from its folder; 2.1.330 says so here (2.1.197 does the
    # same without saying it: test_an_installed_plugin_captures_a_session_through_its_hooks shows it on both)
    if claude_version >= PINNED or "readFromFolder" in plugin:
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


def test_an_older_claude_code_is_named_with_the_fix(tmp_path: Path, env: dict[str, str]) -> None:
    """A Claude Code older than the README supports: install says so first (and goes on), doctor fails its
    claude check with the same sentence. The install record is the one-object shape of installed_plugins.json
    version 1, beside an entry it cannot read: the plugin still counts as installed."""
    root = copy_plugin(tmp_path / "checkout").resolve()
    fake = tmp_path / "claude"
    fake.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "2.1.9 (Claude Code)"\nexit 0\n', encoding="utf-8")
    fake.chmod(0o755)
    claude_dir = Path(env["CLAUDE_CONFIG_DIR"])
    (claude_dir / "plugins").mkdir()
    source = {"source": {"source": "directory", "path": str(root)}}
    (claude_dir / "settings.json").write_text(
        json.dumps(
            {
                "enabledPlugins": {PLUGIN_ID: True},
                "extraKnownMarketplaces": {"claude-memory-local": source},
                "env": {"CLAUDE_MEMORY_PYTHON": sys.executable},  # the copy has no .venv
            }
        )
    )
    (claude_dir / "plugins" / "installed_plugins.json").write_text(
        json.dumps({"version": 1, "plugins": {PLUGIN_ID: {"version": "0.1.0"}, "other@elsewhere": 7}})
    )
    environment = {**env, "CLAUDE_BIN": str(fake)}
    sentence = (
        f"Claude Code 2.1.9 ({fake}) is older than 2.1.197, the oldest version claude-memory supports: "
        "update it with `claude update` (or `npm install -g @anthropic-ai/claude-code@latest`)."
    )

    installed = memory(environment, "install", "--plugin-root", str(root))
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.splitlines()[0] == sentence
    assert "already installed" in installed.stdout

    doctor = memory(environment, "doctor", "--plugin-root", str(root), "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["claude"] == {"name": "claude", "status": "error", "message": sentence}
    assert checks["plugin"]["status"] == "ok", checks["plugin"]
    assert doctor.returncode == 1


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
    tmp_path: Path,
    claude_bin: Path,
    fake_api: dict[str, str],
    api: FakeAnthropic,
    fixtures_home: Path,
    claude_version: tuple[int, ...],
) -> None:
    """/memory-layer:memory-stats runs plugin/bin/claude-memory through `!`; memory-forget deletes nothing without
    --yes, and says so without asking the model. Only the commands are loaded (no hooks, no MCP server), with
    $CLAUDE_MEMORY_PYTHON picking the interpreter because the copy has no .venv."""
    root = copy_plugin(tmp_path / "checkout", ("plugin/.claude-plugin", "plugin/bin", "plugin/commands")) / "plugin"
    env = {**fake_api, "CLAUDE_MEMORY_PYTHON": sys.executable}
    imported = memory(env, "import", "--claude-home", str(fixtures_home), "--no-wait", "--json")
    assert imported.returncode == 0, imported.stderr
    before = json.loads(memory(env, "stats", "--json").stdout)["events"]
    session = json.loads(memory(env, "sessions", "--json").stdout)["sessions"][0]["session_id"]
    work = tmp_path / "work"
    work.mkdir()

    def slash(prompt: str) -> tuple[dict[str, Any], str]:
        """The run's result message, and what the user was shown: the result, and the messages of a local
        command (where 2.1.197 puts a failed `!` command's error; 2.1.330 makes it the result)."""
        out = claude(
            claude_bin, env, "-p", prompt, "--plugin-dir", str(root), "--output-format", "stream-json", "--verbose",
            cwd=work,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        messages = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        result = next(m for m in reversed(messages) if m.get("type") == "result")
        local = [m["message"]["content"] for m in messages if m.get("type") == "user" and "message" in m]
        return result, "\n".join([str(result.get("result", "")), *map(str, local)])

    slash("/memory-layer:memory-stats")
    sent = json.dumps(api.bodies())
    assert f"Events: {before} in " in sent, "the stats output did not reach the model"

    refused, shown = slash(f"/memory-layer:memory-forget --session {session}")
    assert "re-run with --yes" in shown and refused["num_turns"] == 0
    if claude_version >= PINNED:
        assert "re-run with --yes" in refused["result"]
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
WAIT_TOOL = "WaitForMcpServers"  # Claude Code's tool that waits for MCP servers still connecting


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
    rules = [
        # a search, then (the answer's turn) a second one, so the last result is a search's either way
        Rule("LOOK_IT_UP", [[look_up], [look_up], [text("Found it in memory.")]], needs_tool=SEARCH_TOOL),
        # `claude -p` (2.1.197 and 2.1.330) does not wait long for MCP servers: when ours is still starting (a busy
        # machine), the first request offers WaitForMcpServers instead of its tools, and the model waits for it
        Rule("LOOK_IT_UP", [[tool(WAIT_TOOL)]], needs_tool=WAIT_TOOL),
    ]
    work = tmp_path / "work"
    work.mkdir()
    api = fake_anthropic(rules)
    # (without ENABLE_TOOL_SEARCH=false Claude Code lists MCP tools only behind its ToolSearch tool; under `-p` it
    # waits 5 s for MCP servers to connect, which a loaded machine's Python start can exceed)
    talking = {**environment, **api.env(), "ENABLE_TOOL_SEARCH": "false", "MCP_CONNECT_TIMEOUT_MS": "60000"}
    try:
        out = claude(
            claude_bin, talking, "-p", "LOOK_IT_UP", "--allowedTools", f"{SEARCH_TOOL},{WAIT_TOOL}",
            "--output-format", "json", cwd=work,
        )  # fmt: skip
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
