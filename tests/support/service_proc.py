"""The memory service and the hook client as real processes, for the tests that need them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import holder_pid

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "claude-memory-hook"


def env(data: Path, home: Path | None = None) -> dict[str, str]:
    """The environment of a service or hook: the data directory, and the Claude home a service started by a hook
    watches (inside Claude Code that is $CLAUDE_CONFIG_DIR or ~/.claude)."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    out |= {"CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_PYTHON": sys.executable}
    if home is not None:
        out["CLAUDE_CONFIG_DIR"] = str(home)
    return out


def serve(data: Path, home: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(home), *extra],
        env=env(data), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def stop(data: Path) -> None:
    subprocess.run([sys.executable, "-m", "claude_memory", "stop"], env=env(data), capture_output=True, timeout=60)
    assert holder_pid(RuntimePaths(data).lock) is None


def hook(data: Path, home: Path, event: str, payload: dict[str, Any]) -> subprocess.Popen[bytes]:
    """The hook client started with ``payload`` on its stdin (not waited for)."""
    proc = subprocess.Popen([str(HOOK), event], env=env(data, home), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode())
    proc.stdin.close()
    return proc
