"""A real editor as the language server's client: headless Neovim (0.7, from apt) opens a Markdown file
citing a memory, hovers on the citation, and must be shown the memory's text (tests/e2e/lsp_nvim_hover.lua).
Skipped when nvim is not installed, except in CI (the CI variable set), where that is a failure."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from claude_memory.client.connection import ServiceClient, ServiceUnavailable
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import holder_pid
from support import own_fixtures as fx

Cli = Callable[..., subprocess.CompletedProcess[str]]
SCRIPT = Path(__file__).resolve().parent / "lsp_nvim_hover.lua"


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper does not count)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        reason = "Neovim (nvim) is not installed: apt-get install -y neovim"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def test_hover_on_a_citation_in_neovim_shows_the_memory(tmp_path: Path, fixtures_home: Path, cli: Cli) -> None:
    editor = nvim()
    data = tmp_path / "data"
    imported = cli(data, "import", "--claude-home", str(fixtures_home), "--no-wait")
    assert imported.returncode == 0, imported.stderr
    found = cli(data, "search", fx.ECHO_WORD, "--mode", "keyword", "--project", fx.WORK, "--json")
    assert found.returncode == 0, found.stderr
    hit = next(h for h in json.loads(found.stdout)["results"] if h["type"] == "tool_use")
    env = {
        **os.environ,
        "CLAUDE_MEMORY_HOME": str(data),
        "CLAUDE_CONFIG_DIR": str(fixtures_home),
        "LSP_PY": sys.executable,
        "LSP_OUT": str(tmp_path),
        "MEM_CITATION": hit["citation"],
    }
    env.pop("CLAUDE_MEMORY_MODEL_PATH", None)
    pid = None
    try:
        run = subprocess.run(
            [editor, "--headless", "--clean", "-c", f"luafile {SCRIPT}"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        with contextlib.suppress(ServiceUnavailable):
            pid = int(ServiceClient(data, timeout=5).ping()["pid"])
        out = (tmp_path / "hover.out").read_text(encoding="utf-8")
        assert out.startswith("OK\n"), f"{out}\nnvim stderr: {run.stderr}"
        shown = cli(data, "show", hit["citation"], "--json")  # through the service the editor started
        assert shown.returncode == 0, shown.stderr
        memory = json.loads(shown.stdout)
        hover = out.removeprefix("OK\n")
        assert hover.startswith(f"**`[{hit['citation']}]`** · tool_use (Bash) · ")
        assert f"```text\n{memory['text']}\n```" in hover  # the memory's text, whole (it is short)
        assert memory["text"].startswith(f"Bash: echo {fx.ECHO_WORD}")
        source = memory["source"]
        assert f"Source: `{source['path']}:{source['line_start']}-{source['line_end']}`" in hover
    finally:
        stopped = cli(data, "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert holder_pid(RuntimePaths(data).lock) is None
        deadline = time.monotonic() + 15
        while pid is not None and alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid is None or not alive(pid), "the memory service outlived the test"
