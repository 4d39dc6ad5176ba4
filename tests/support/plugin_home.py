"""A scratch user with the plugin installed from a copy of this checkout, for end-to-end runs of the real Claude
Code CLI (never the real ~/.claude)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLUGIN_FILES = (".claude-plugin", "plugin", "hooks", "server/claude_memory")  # what an installed plugin runs


def memory(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``claude-memory ARGS`` as that user."""
    return subprocess.run(
        [sys.executable, "-m", "claude_memory", *args], env=env, capture_output=True, text=True, timeout=600
    )


def scratch_env(tmp_path: Path, claude_bin: Path) -> dict[str, str]:
    """The environment of a scratch user under ``tmp_path``: HOME, Claude Code's directory, a memory store and the
    Claude Code CLI to use, with no traffic to Anthropic but the API."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    return {
        **os.environ,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "data"),
        "CLAUDE_BIN": str(claude_bin),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def installed(tmp_path: Path, claude_bin: Path) -> dict[str, str]:
    """A scratch user's environment (:func:`scratch_env`) with the plugin installed from a copy of the checkout;
    keyword search only (no model)."""
    env = {**scratch_env(tmp_path, claude_bin), "CLAUDE_MEMORY_PYTHON": sys.executable}  # the copy has no .venv
    env.pop("CLAUDE_MEMORY_MODEL_PATH", None)
    root = tmp_path / "checkout"
    for name in PLUGIN_FILES:
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    done = memory(env, "install", "--plugin-root", str(root))
    assert done.returncode == 0, done.stderr
    return env
