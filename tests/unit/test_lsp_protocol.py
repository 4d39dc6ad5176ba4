"""Command arguments, settings with per-setting fallback, workspace folders → projects, and --tcp."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer

from claude_memory.cli.lsp import parse_tcp
from claude_memory.lsp import protocol as p
from claude_memory.lsp.projects import WorkspaceProjects, uri_to_path
from claude_memory.lsp.settings import LspSettings, parse_settings, section_of


def test_every_command_has_an_argument_model_and_the_module_is_light() -> None:
    assert set(p.ARGUMENTS) == set(p.COMMANDS) and len(set(p.COMMANDS)) == len(p.COMMANDS) == 14
    assert all(c.startswith("claudeMemory.") for c in p.COMMANDS)
    code = (
        "import sys, claude_memory.lsp.protocol; print(sorted(m for m in ('pygls', 'lsprotocol') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_arguments_are_one_object_camel_or_snake_case() -> None:
    args = p.parse_arguments(p.SEARCH, [{"query": "flaky", "allProjects": True, "limit": 5}])
    assert args == p.SearchArgs(query="flaky", all_projects=True, limit=5)
    assert p.parse_arguments(p.FORGET, [{"refs": ["mem:AbC123"], "dry_run": True}]) == p.ForgetArgs(
        refs=["mem:AbC123"], dry_run=True
    )
    assert p.parse_arguments(p.SHOW, [{"ref": "mem:AbC123"}]) == p.ShowArgs(refs=["mem:AbC123"])
    assert p.parse_arguments(p.STATS, None) == p.NoArgs()
    assert p.parse_arguments(p.STATS, [None]) == p.NoArgs()


@pytest.mark.parametrize(
    ("command", "arguments", "message"),
    [
        (p.SEARCH, [{}], "The argument query is required."),
        (p.SEARCH, [{"query": "x", "limit": 0}], "Invalid argument limit: Input should be greater than or equal to 1."),
        (p.SEARCH, [{"query": "x", "typo": 1}], "Invalid argument typo: Extra inputs are not permitted."),
        (p.SEARCH, [{"query": "x", "types": ["nope"]}], "Invalid argument types.0: Input should be 'user_prompt'"),
        (p.SEARCH, ["x", 1], "claudeMemory.search takes one JSON object argument, not 2."),
        (p.SEARCH, ["x"], "claudeMemory.search takes one JSON object argument."),
        (p.TIMELINE, [{"refs": ["a"], "session": "s"}], "Give either refs (citations) or a session id."),
        (p.FORGET, [{}], "Say what to forget: refs, session, project or before."),
        (p.FILE_HISTORY, [{"symbol": "x"}], "Give the file as uri or path."),
        ("claudeMemory.nope", [], "Unknown command 'claudeMemory.nope'"),
    ],
)
def test_bad_arguments_are_one_sentence(command: str, arguments: list[object], message: str) -> None:
    with pytest.raises(p.ArgumentError) as failed:
        p.parse_arguments(command, arguments)
    assert str(failed.value).startswith(message)
    assert "\n" not in str(failed.value) and str(failed.value).endswith(".")


def test_settings_defaults_sections_and_fallback_per_setting() -> None:
    assert parse_settings({}) == (LspSettings(), [])
    assert section_of({"claudeMemory": {"hoverLimit": 3}}) == {"hoverLimit": 3}
    assert section_of({"hoverLimit": 3}) == {"hoverLimit": 3} and section_of(None) == {}
    settings, problems = parse_settings({"hoverLimit": 0, "codeLens": False, "searchMode": 3, "unknown": 1})
    assert settings == LspSettings(code_lens=False)
    assert problems == [
        "Ignoring the setting claudeMemory.hoverLimit (Input should be greater than or equal to 1); "
        "using the default 5.",
        "Ignoring the setting claudeMemory.searchMode (Input should be 'hybrid', 'keyword' or 'semantic'); "
        "using the default 'hybrid'.",
    ]
    base = LspSettings(hover_limit=7)
    assert parse_settings({"hover_max_chars": 100}, base) == (LspSettings(hover_limit=7, hover_max_chars=100), [])


def test_workspace_folders_map_to_projects(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg" / "sub").mkdir(parents=True)
    projects = WorkspaceProjects()
    assert projects.default() is None
    projects.set_folders([(repo / "pkg").as_uri(), "file:///absent/app", "untitled:x", (repo / "pkg").as_uri()])
    assert projects.folders == (str(repo / "pkg"), "/absent/app")
    assert projects.default() == str(repo)  # a folder inside a repository is the repository's project
    assert projects.project_of(str(repo / "pkg" / "sub" / "a.py")) == str(repo)
    assert projects.project_of("/absent/app/lib/x.ex") == "/absent/app"
    assert projects.project_of(str(tmp_path / "elsewhere.py")) == str(tmp_path)  # outside: its own directory
    assert projects.project_of("/nowhere/at/all.py") == str(repo)  # nothing known: the first folder's
    assert uri_to_path("file:///home/a%20b/c.py") == "/home/a b/c.py"
    assert uri_to_path("untitled:Untitled-1") is None


def test_tcp_is_loopback_only() -> None:
    assert parse_tcp("127.0.0.1:2087") == ("127.0.0.1", 2087)
    assert parse_tcp("[::1]:2087") == ("::1", 2087)
    assert parse_tcp("localhost:9") == ("localhost", 9)
    for bad in ("0.0.0.0:2087", "10.0.0.1:80", "example.com:80", "127.0.0.1", "127.0.0.1:99999"):
        with pytest.raises(typer.BadParameter):
            parse_tcp(bad)
