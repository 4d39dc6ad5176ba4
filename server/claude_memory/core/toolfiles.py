"""Which files did a tool call touch? Read from the tool input (and result, for search tools)."""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable
from typing import Any, Final

_PATH_KEYS: Final = ("file_path", "notebook_path", "path")
_SEARCH_TOOLS: Final = frozenset({"Grep", "Glob", "LS"})
_MAX_FILES: Final = 50

# Bash commands whose non-option arguments are files.
_FILE_COMMANDS: Final = frozenset(
    {
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "bat",
        "nano",
        "vim",
        "vi",
        "nvim",
        "emacs",
        "code",
        "rm",
        "cp",
        "mv",
        "touch",
        "chmod",
        "chown",
        "ln",
        "wc",
        "diff",
        "stat",
        "file",
        "python",
        "python3",
        "node",
        "ruby",
        "bash",
        "sh",
        "pytest",
        "mypy",
        "ruff",
        "black",
        "eslint",
        "prettier",
        "tsc",
        "sed",
        "awk",
        "grep",
        "rg",
        "source",
        "open",
        "xdg-open",
    }
)
_GIT_FILE_SUBCOMMANDS: Final = frozenset({"add", "rm", "mv", "diff", "checkout", "restore", "blame", "log"})
_SHELL_SPLIT: Final = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_LOOKS_LIKE_FILE: Final = re.compile(r"^[\w.~/@+-][\w./~@+-]*$")
_HAS_EXTENSION: Final = re.compile(r"\.[A-Za-z0-9]{1,10}$")


def _absolute(path: str, cwd: str | None) -> str:
    if cwd and not posixpath.isabs(path) and not path.startswith("~"):
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path) if path else path


def _bash_files(command: str) -> Iterable[str]:
    for part in _SHELL_SPLIT.split(command):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            continue
        if not words:
            continue
        prog = posixpath.basename(words[0])
        args = words[1:]
        if prog == "git" and args and args[0] in _GIT_FILE_SUBCOMMANDS:
            args = args[1:]
        elif prog not in _FILE_COMMANDS:
            continue
        if prog in {"sed", "awk", "grep", "rg"}:
            # the first non-option argument is a pattern or program, not a file
            positional = [a for a in args if not a.startswith("-")]
            args = positional[1:]
        for arg in args:
            if arg.startswith("-") or "://" in arg or not _LOOKS_LIKE_FILE.match(arg):
                continue
            if "/" in arg or _HAS_EXTENSION.search(arg):
                yield arg


def files_touched(tool_name: str, tool_input: Any, result_meta: Any, cwd: str | None) -> list[str]:
    """Absolute, normalised file paths a tool call read, wrote or searched (at most 50, in order)."""
    found: list[str] = []
    if isinstance(tool_input, dict):
        for key in _PATH_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                found.append(value)
        if tool_name == "MultiEdit":
            edits = tool_input.get("edits")
            for edit in edits if isinstance(edits, list) else []:
                if isinstance(edit, dict) and isinstance(edit.get("file_path"), str):
                    found.append(edit["file_path"])
        if tool_name == "Bash" and isinstance(tool_input.get("command"), str):
            found.extend(_bash_files(tool_input["command"]))
    if tool_name in _SEARCH_TOOLS and isinstance(result_meta, dict):
        names = result_meta.get("filenames")
        if isinstance(names, list):
            found.extend(n for n in names if isinstance(n, str))
    if isinstance(result_meta, dict):
        file_info = result_meta.get("file")
        if isinstance(file_info, dict) and isinstance(file_info.get("filePath"), str):
            found.append(file_info["filePath"])
        if isinstance(result_meta.get("filePath"), str):
            found.append(result_meta["filePath"])
    unique: dict[str, None] = {}
    for path in found:
        unique.setdefault(_absolute(path, cwd), None)
        if len(unique) >= _MAX_FILES:
            break
    return list(unique)
