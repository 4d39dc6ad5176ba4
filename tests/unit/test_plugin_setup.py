"""The pure parts of plugin_setup, and the plugin files' contract (no Claude Code needed)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from claude_memory.cli import plugin_doctor as pd
from claude_memory.cli import plugin_setup as ps

REPO = Path(__file__).resolve().parents[2]
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
INFO = ps.PluginInfo(
    root=Path("/x"), name="memory-layer", version="0.1.0", marketplace="claude-memory-local", folder=Path("/x/plugin")
)


# ---------------------------------------------------------------------- settings.json merge / removal


def test_with_python_env_keeps_unrelated_keys_and_does_not_mutate() -> None:
    settings: dict[str, Any] = {"theme": "dark", "env": {"FOO": "1"}, "enabledPlugins": {"a@b": True}}
    merged = ps.with_python_env(settings, "/venv/bin/python")
    assert merged == {
        "theme": "dark",
        "env": {"FOO": "1", "CLAUDE_MEMORY_PYTHON": "/venv/bin/python"},
        "enabledPlugins": {"a@b": True},
    }
    assert settings == {"theme": "dark", "env": {"FOO": "1"}, "enabledPlugins": {"a@b": True}}
    assert ps.with_python_env({}, "/p") == {"env": {"CLAUDE_MEMORY_PYTHON": "/p"}}
    assert ps.with_python_env({"env": "not an object"}, "/p") == {"env": {"CLAUDE_MEMORY_PYTHON": "/p"}}


def test_without_python_env_removes_only_ours() -> None:
    settings: dict[str, Any] = {"env": {"FOO": "1", "CLAUDE_MEMORY_PYTHON": "/p"}, "model": "opus"}
    assert ps.without_python_env(settings) == {"env": {"FOO": "1"}, "model": "opus"}
    assert settings["env"]["CLAUDE_MEMORY_PYTHON"] == "/p"
    assert ps.without_python_env({"env": {"CLAUDE_MEMORY_PYTHON": "/p"}, "model": "opus"}) == {"model": "opus"}
    assert ps.without_python_env({"model": "opus"}) == {"model": "opus"}
    assert ps.without_python_env({"env": {"FOO": "1"}}) == {"env": {"FOO": "1"}}


def test_merge_then_remove_round_trips() -> None:
    original: dict[str, Any] = {"env": {"FOO": "1"}, "hooks": {"Stop": []}, "permissions": {"allow": ["Bash(ls)"]}}
    assert ps.without_python_env(ps.with_python_env(original, "/p")) == original


def test_recorded_and_hook_python(tmp_path: Path) -> None:
    assert ps.recorded_python({"env": {"CLAUDE_MEMORY_PYTHON": "/a"}}) == "/a"
    assert ps.recorded_python({"env": {"CLAUDE_MEMORY_PYTHON": ""}}) is None
    assert ps.hook_python(tmp_path, {"env": {"CLAUDE_MEMORY_PYTHON": "/a"}}, {"CLAUDE_MEMORY_PYTHON": "/b"}) == "/a"
    assert ps.hook_python(tmp_path, {}, {"CLAUDE_MEMORY_PYTHON": "/b"}) == "/b"
    assert ps.hook_python(tmp_path, {}, {}) == "python3"
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    assert ps.hook_python(tmp_path, {}, {}) == str(tmp_path / ".venv" / "bin" / "python")


def test_needs_python_env(tmp_path: Path) -> None:
    assert ps.needs_python_env(tmp_path, sys.prefix) is True  # no .venv at all
    (tmp_path / ".venv").mkdir()
    assert ps.needs_python_env(tmp_path, tmp_path / ".venv") is False
    assert ps.needs_python_env(tmp_path, tmp_path / "elsewhere") is True


def test_read_and_write_json_object(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "settings.json"
    assert ps.read_json_object(path) == {}
    with pytest.raises(ps.SetupError, match="does not exist"):
        ps.read_json_object(path, missing_ok=False)
    ps.write_json_object(path, {"a": 1, "ü": "ß"})
    assert ps.read_json_object(path) == {"a": 1, "ü": "ß"}
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o644)
    ps.write_json_object(path, {"b": 2})
    assert path.stat().st_mode & 0o777 == 0o644 and ps.read_json_object(path) == {"b": 2}
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ps.SetupError, match="is not valid JSON"):
        ps.read_json_object(path)
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(ps.SetupError, match="does not hold a JSON object"):
        ps.read_json_object(path)


# ---------------------------------------------------------------------- Claude Code's state


def test_plugin_state_installed_and_enabled() -> None:
    settings = {
        "enabledPlugins": {INFO.plugin_id: True},
        "extraKnownMarketplaces": {"claude-memory-local": {"source": {"source": "directory", "path": "/x"}}},
    }
    installed = {
        "version": 2,
        "plugins": {INFO.plugin_id: [{"scope": "user", "version": "0.1.0", "installPath": "/c"}]},
    }
    known = {"claude-memory-local": {"source": {"source": "directory", "path": "/x"}, "installLocation": "/x"}}
    state = ps.plugin_state(settings, installed, known, INFO)
    assert state == ps.PluginState(True, True, "0.1.0", True, "/x")
    assert pd.check_plugin(state, INFO).status == "ok"


def test_plugin_state_disabled_other_scope_or_absent() -> None:
    installed = {"plugins": {INFO.plugin_id: [{"scope": "user"}]}}
    disabled = ps.plugin_state({"enabledPlugins": {INFO.plugin_id: False}}, installed, {}, INFO)
    assert disabled.installed and not disabled.enabled and not disabled.marketplace_known
    assert pd.check_plugin(disabled, INFO).status == "error"
    project_only = {"plugins": {INFO.plugin_id: [{"scope": "project", "projectPath": "/p"}]}}
    assert not ps.plugin_state({}, project_only, {}, INFO).installed
    absent = ps.plugin_state({}, {}, {}, INFO)
    assert not absent.installed and not absent.enabled
    check = pd.check_plugin(absent, INFO)
    assert check.status == "error" and "claude-memory install" in check.message
    assert not ps.plugin_state({}, {"plugins": "garbage"}, {}, INFO).installed


def test_plugin_state_marketplace_elsewhere_is_a_warning() -> None:
    installed = {"plugins": {INFO.plugin_id: [{"scope": "user"}]}}
    known = {"claude-memory-local": {"source": {"source": "directory", "path": "/other/checkout"}}}
    state = ps.plugin_state({"enabledPlugins": {INFO.plugin_id: True}}, installed, known, INFO)
    assert state.marketplace_path == "/other/checkout"
    assert pd.check_plugin(state, INFO).status == "warn"


# ---------------------------------------------------------------------- locating things


def test_repo_plugin_info_matches_pyproject() -> None:
    info = ps.read_plugin_info(ps.find_plugin_root())
    assert info.root == REPO and info.folder == REPO / "plugin"
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert (info.name, info.marketplace, info.version) == (ps.DEFAULT_PLUGIN_NAME, ps.DEFAULT_MARKETPLACE, version)
    assert info.plugin_id == "memory-layer@claude-memory-local"


def test_find_plugin_root_errors(tmp_path: Path) -> None:
    with pytest.raises(ps.SetupError, match="is not the plugin root"):
        ps.find_plugin_root(tmp_path)
    with pytest.raises(ps.SetupError, match="pass --plugin-root"):
        ps.find_plugin_root(None, default=tmp_path)
    (tmp_path / ".claude-plugin").mkdir()
    market = tmp_path / ".claude-plugin" / "marketplace.json"
    market.write_text('{"name": "m", "plugins": []}', encoding="utf-8")
    assert ps.find_plugin_root(tmp_path) == tmp_path.resolve()
    with pytest.raises(ps.SetupError, match="must list exactly one plugin, not 0"):
        ps.read_plugin_info(tmp_path)
    for source, error in (("/abs/plugin", "a source like"), (None, "a source like"), ("../x", "a source like"),
                          ("./../x", "points outside")):  # fmt: skip
        entry = {"name": "x", **({"source": source} if source else {})}
        market.write_text(json.dumps({"name": "m", "plugins": [entry]}), encoding="utf-8")
        with pytest.raises(ps.SetupError, match=error):
            ps.read_plugin_info(tmp_path)
    market.write_text('{"name": "m", "plugins": [{"name": "x", "source": "./plugin"}]}', encoding="utf-8")
    with pytest.raises(ps.SetupError, match=r"plugin\.json does not exist"):
        ps.read_plugin_info(tmp_path)
    (tmp_path / "plugin" / ".claude-plugin").mkdir(parents=True)
    (tmp_path / "plugin" / ".claude-plugin" / "plugin.json").write_text('{"name": "y"}', encoding="utf-8")
    with pytest.raises(ps.SetupError, match=r"lists the plugin 'x', but .* names 'y'"):
        ps.read_plugin_info(tmp_path)
    (tmp_path / "plugin" / ".claude-plugin" / "plugin.json").write_text('{"name": "x"}', encoding="utf-8")
    info = ps.read_plugin_info(tmp_path)
    assert (info.plugin_id, info.folder) == ("x@m", tmp_path / "plugin")


def test_find_claude(tmp_path: Path) -> None:
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    never = lambda name: None  # noqa: E731
    assert ps.find_claude(exe, {}, never) == exe
    assert ps.find_claude(None, {"CLAUDE_BIN": str(exe)}, never) == exe
    assert ps.find_claude(None, {}, lambda name: str(exe)) == exe
    with pytest.raises(ps.SetupError, match=r"^Claude Code's `claude` command was not found"):
        ps.find_claude(None, {}, never)
    with pytest.raises(ps.SetupError, match=r"^\$CLAUDE_BIN points at"):
        ps.find_claude(None, {"CLAUDE_BIN": str(tmp_path / "missing")}, never)


def test_run_claude_reports_the_first_line(tmp_path: Path) -> None:
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\necho '✘ Failed: no such marketplace' >&2\necho more >&2\nexit 1\n", encoding="utf-8")
    exe.chmod(0o755)
    with pytest.raises(ps.SetupError) as info:
        ps.run_claude(exe, ["plugin", "list"])
    assert str(info.value) == "`claude plugin list` failed: Failed: no such marketplace"


# ---------------------------------------------------------------------- doctor checks


def test_simple_checks() -> None:
    assert pd.check_python((3, 11, 7), "/py").status == "ok"
    assert pd.check_python((3, 10, 1), "/py").status == "error"
    assert pd.check_embedder(True, None).status == "ok"
    assert pd.check_embedder(False, "No model.onnx in /m; semantic search is off.").status == "warn"

    def missing(name: str) -> object:
        if name == "hnswlib":
            raise ImportError(name)
        return object()

    check = pd.check_packages(missing)
    assert check.status == "error" and "hnswlib (ImportError)" in check.message
    assert pd.check_packages(lambda name: object()).status == "ok"


def test_service_not_running_is_a_warning() -> None:
    class Down(Exception):
        pass

    def down() -> dict[str, Any]:
        raise Down

    assert pd.check_service(down, Down).status == "warn"
    assert pd.check_service(lambda: {"pid": 42}, Down) == pd.Check(
        "service", "ok", "The memory service is running (pid 42)."
    )


def test_hooks_check(tmp_path: Path) -> None:
    folder = tmp_path / "plugin"  # the plugin folder; the launcher lives in the checkout's hooks/ beside it
    (folder / "hooks").mkdir(parents=True)
    (folder / "bin").mkdir()
    (tmp_path / "hooks").mkdir()
    launcher = tmp_path / "hooks" / "claude-memory-hook"
    bin_launcher = folder / "bin" / "claude-memory"
    command = '"${CLAUDE_PLUGIN_ROOT}/../hooks/claude-memory-hook" Stop'
    hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}
    (folder / "hooks" / "hooks.json").write_text(json.dumps(hooks), encoding="utf-8")
    assert pd.check_hooks(folder).message == f"The hook launcher {launcher} is missing."
    launcher.write_text("#!/bin/sh\n", encoding="utf-8")
    assert "not executable" in pd.check_hooks(folder).message
    launcher.chmod(0o755)
    assert "bin/claude-memory is missing or not executable" in pd.check_hooks(folder).message
    bin_launcher.write_text("#!/bin/sh\n", encoding="utf-8")
    bin_launcher.chmod(0o755)
    assert pd.check_hooks(folder) == pd.Check(
        "hooks", "ok", "plugin/hooks/hooks.json is valid (1 events); hooks/claude-memory-hook executable."
    )
    (folder / "hooks" / "hooks.json").write_text(json.dumps(hooks["hooks"]), encoding="utf-8")  # unwrapped
    assert pd.check_hooks(folder).status == "error"
    (folder / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"SessionBegin": []}}), encoding="utf-8")
    assert "unknown hook events: SessionBegin" in pd.check_hooks(folder).message


def test_doctor_report_and_exit_rule() -> None:
    checks = [pd.Check("a", "ok", "fine."), pd.Check("b", "warn", "meh.")]
    assert pd.overall_ok(checks)
    assert not pd.overall_ok([*checks, pd.Check("c", "error", "bad.")])
    report = pd.doctor_report(checks, ps.PluginState(True, True, "0.1.0", True, "/x"), INFO)
    assert report["ok"] is True and report["plugin"]["installed"] is True
    assert report["checks"][1] == {"name": "b", "status": "warn", "message": "meh."}


# ---------------------------------------------------------------------- the plugin files' contract


def test_hooks_json_contract() -> None:
    data = json.loads((REPO / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert set(data) == {"description", "hooks"} and tuple(data["hooks"]) == EVENTS
    matchers = {
        "SessionStart": "startup|resume|clear|compact|fork",
        "PreToolUse": "Edit|MultiEdit|Write",  # a note on the lines an edit changes; no other tool waits for it
        "PostToolUse": "*",
        "PostToolUseFailure": "*",
    }
    for event, groups in data["hooks"].items():
        (group,) = groups
        assert group.get("matcher") == matchers.get(event)
        (handler,) = group["hooks"]
        assert handler == {
            "type": "command",
            "command": f'"${{CLAUDE_PLUGIN_ROOT}}/../hooks/claude-memory-hook" {event}',
            "timeout": 10,
        }
    assert pd.check_hooks(REPO / "plugin").status == "ok", pd.check_hooks(REPO / "plugin").message


def test_mcp_json_and_manifests() -> None:
    mcp = json.loads((REPO / "plugin" / ".mcp.json").read_text(encoding="utf-8"))
    assert mcp == {"mcpServers": {"memory": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/claude-memory", "args": ["mcp"]}}}
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert market["name"] == "claude-memory-local" and market["plugins"][0]["source"] == "./plugin"
    # the plugin folder holds only the plugin: Claude Code copies all of it into its cache on install
    shipped = sorted(str(p.relative_to(REPO / "plugin")) for p in (REPO / "plugin").rglob("*") if p.is_file())
    assert shipped == [
        ".claude-plugin/plugin.json",
        ".mcp.json",
        "bin/claude-memory",
        *(f"commands/{c}.md" for c in ("memory-forget", "memory-history", "memory-import", "memory-list",
                                        "memory-search", "memory-stats")),
        "hooks/hooks.json",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "subcommand"),
    [
        ("memory-search", "search"),
        ("memory-history", "history"),
        ("memory-stats", "stats"),
        ("memory-import", "import"),
        ("memory-list", "sessions"),
        ("memory-forget", "forget"),
    ],
)
def test_slash_command_runs_only_its_subcommand(command: str, subcommand: str) -> None:
    text = (REPO / "plugin" / "commands" / f"{command}.md").read_text(encoding="utf-8")
    front, body = text.split("---\n")[1:3]
    launcher = '"${CLAUDE_PLUGIN_ROOT}/bin/claude-memory"'
    assert f"allowed-tools: Bash({launcher} {subcommand}:*)\n" in front
    assert "description: " in front and "argument-hint: " in front
    runs = re.findall(r"!`([^`]*)`", body)
    assert len(runs) == 1 and runs[0].startswith(f"{launcher} {subcommand} ") and "$ARGUMENTS" in runs[0]
    if subcommand == "forget":
        assert "--yes" not in runs[0] and "disable-model-invocation: true" in front
        assert "disallowed-tools: Bash" in front


def test_bin_launcher_picks_the_interpreter(tmp_path: Path) -> None:
    launcher = REPO / "plugin" / "bin" / "claude-memory"
    assert os.access(launcher, os.X_OK)
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "fake $*"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "CLAUDE_MEMORY_PYTHON": str(fake)}
    out = subprocess.run([str(launcher), "stats", "--json"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == "fake -m claude_memory stats --json\n"
    link = tmp_path / "claude-memory"
    link.symlink_to(launcher)
    env.pop("CLAUDE_MEMORY_PYTHON")
    out = subprocess.run([str(link), "--version"], env=env, capture_output=True, text=True, check=False)
    if (REPO / ".venv" / "bin" / "python").exists():
        assert out.returncode == 0 and out.stdout.startswith("claude-memory ")


def test_precompile_writes_the_bytecode_hooks_would_otherwise_compile_each_time(tmp_path: Path) -> None:
    package = tmp_path / "server" / "claude_memory"
    package.mkdir(parents=True)
    (package / "hookclient.py").write_text("X = 1\n")
    assert ps.precompile([tmp_path, tmp_path / "not-a-plugin"], sys.executable) is None
    assert [p.name.split(".")[0] for p in (package / "__pycache__").iterdir()] == ["hookclient"]
    failed = ps.precompile([tmp_path], str(tmp_path / "no-python"))
    assert failed is not None and failed.startswith("Could not precompile the plugin's Python files")
    assert "\n" not in failed
