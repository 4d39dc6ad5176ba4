"""The VS Code extension's command names against the language server's (docs that cannot drift, DESIGN §8).

The extension names the server commands it sends in one constant, ``client-vscode/src/serverCommands.ts``;
those must be exactly ``claude_memory.lsp.protocol.COMMANDS``. Its own palette commands (package.json) must
not reuse a server command name: vscode-languageclient registers every command the server advertises in
``executeCommandProvider`` as a VS Code command, and a second registration of the same id fails.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "client-vscode"
SERVER_COMMANDS_TS = CLIENT / "src" / "serverCommands.ts"
CONSTANT = re.compile(r"export const SERVER_COMMANDS = \{(?P<body>.*?)\} as const;", re.S)
ENTRY = re.compile(r'^\s*(?P<key>\w+):\s*"(?P<name>[^"]+)",?\s*$')
LITERAL = re.compile(r'"(claudeMemory\.[A-Za-z.]+)"')


def server_commands() -> tuple[str, ...]:
    try:
        protocol = importlib.import_module("claude_memory.lsp.protocol")
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("claude_memory.lsp"):
            pytest.skip("claude_memory.lsp.protocol does not exist yet: nothing to compare the extension with")
        raise
    commands: tuple[str, ...] = protocol.COMMANDS
    return commands


def extension_server_commands() -> dict[str, str]:
    match = CONSTANT.search(SERVER_COMMANDS_TS.read_text(encoding="utf-8"))
    assert match, f"no `export const SERVER_COMMANDS = {{...}} as const;` in {SERVER_COMMANDS_TS}"
    entries = {}
    for line in match["body"].splitlines():
        if line.strip():
            entry = ENTRY.match(line)
            assert entry, f"unexpected line in SERVER_COMMANDS: {line!r}"
            entries[entry["key"]] = entry["name"]
    return entries


def package_json() -> dict[str, object]:
    data: dict[str, object] = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))
    return data


def contributed_commands() -> set[str]:
    contributes = package_json()["contributes"]
    assert isinstance(contributes, dict)
    return {c["command"] for c in contributes["commands"]}


def test_the_extension_calls_exactly_the_server_commands() -> None:
    ours = extension_server_commands()
    assert len(set(ours.values())) == len(ours), "a server command is listed twice"
    assert sorted(ours.values()) == sorted(server_commands())


def test_server_command_names_are_spelled_only_in_server_commands_ts() -> None:
    server = set(extension_server_commands().values())
    for path in sorted((CLIENT / "src").glob("*.ts")):
        if path == SERVER_COMMANDS_TS:
            continue
        spelled = set(LITERAL.findall(path.read_text(encoding="utf-8"))) & server
        assert not spelled, f"{path.name} spells {sorted(spelled)}; use SERVER_COMMANDS instead"


def test_palette_commands_do_not_clash_with_server_commands() -> None:
    server = set(extension_server_commands().values())
    assert not contributed_commands() & server
    # every other claudeMemory.* id the sources spell is a contributed command or view
    contributes = package_json()["contributes"]
    assert isinstance(contributes, dict)
    views = {v["id"] for group in contributes["views"].values() for v in group}
    for path in sorted((CLIENT / "src").glob("*.ts")):
        if path == SERVER_COMMANDS_TS:
            continue
        for name in LITERAL.findall(path.read_text(encoding="utf-8")):
            assert name in contributed_commands() | views, f"{path.name}: {name} is not a contributed command or view"


def test_palette_titles() -> None:
    titles = {c["command"]: c["title"] for c in package_json()["contributes"]["commands"]}  # type: ignore[index]
    assert {
        "Search Memory",
        "Show Timeline",
        "Open Citation",
        "Forget Memory",
        "Import Claude Code History",
        "Show Memory Stats",
    } <= set(titles.values())
