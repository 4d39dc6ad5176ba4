"""Line provenance end to end: the real Claude Code CLI (against the project's fake Anthropic API) writes and edits a
file through the installed plugin; ``claude-memory blame`` names the calls and prompts; the MCP tool ``why`` tells
the same story to the real MCP client; and in a later session, before Claude edits those lines again, the plugin's
PreToolUse hook puts the earlier prompt into the conversation (seen in the next request Claude Code sends)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from support.fake_anthropic import FakeAnthropic, Rule, text, tool
from support.plugin_home import installed, memory

ASK_WRITE = "PROV-ONE: write a price helper module"
ASK_EDIT = "PROV-TWO: add a rounding helper"
ASK_AGAIN = "PROV-THREE: make the tax rate configurable"
MODULE = '''"""Price helpers."""

TAX_RATE = 0.2


def with_tax(amount):
    """The amount with tax added."""
    return round(amount * (1 + TAX_RATE), 2)
'''
ROUNDING = '''

def to_cents(amount):
    """The amount in whole cents."""
    return int(round(amount * 100))
'''


def claude(claude_bin: Path, env: dict[str, str], prompt: str, cwd: Path, *extra: str) -> dict[str, Any]:
    out = subprocess.run(
        [str(claude_bin), "-p", prompt, "--output-format", "json", "--allowedTools", "Read,Edit,Write", *extra],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.stdout)
    assert not result.get("is_error"), result
    return result


def blame_json(env: dict[str, str], path: Path, *extra: str) -> dict[str, Any]:
    out = memory(env, "blame", str(path), "--json", *extra)
    assert out.returncode == 0, out.stderr
    found: dict[str, Any] = json.loads(out.stdout)
    return found


def wait_for_records(env: dict[str, str], path: Path, edits: int) -> dict[str, Any]:
    """The blame once the service has captured ``edits`` editing calls of ``path`` (the hooks spool them)."""
    deadline = time.monotonic() + 60
    while True:
        found = blame_json(env, path)
        if found["edit_records"] >= edits or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def test_blame_why_and_the_pre_edit_note_through_the_installed_plugin(
    tmp_path: Path, claude_bin: Path, fake_anthropic: Callable[..., FakeAnthropic]
) -> None:
    env = installed(tmp_path, claude_bin)
    work = tmp_path / "work" / "shop"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    prices = work / "prices.py"
    line = "    return round(amount * (1 + TAX_RATE), 2)\n"
    add_rounding = tool("Edit", file_path=str(prices), old_string=line, new_string=line + ROUNDING)
    configurable = "TAX_RATE = float(os.environ.get('TAX_RATE', '0.2'))"
    set_rate = tool("Edit", file_path=str(prices), old_string="TAX_RATE=0.2", new_string=configurable)  # as re-spaced
    read = tool("Read", file_path=str(prices))
    rules = [
        Rule(ASK_WRITE, [[text("Writing prices.py."), tool("Write", file_path=str(prices), content=MODULE)]]),
        Rule(ASK_EDIT, [[text("Reading it first."), read], [text("Adding to_cents."), add_rounding]]),
        Rule(ASK_AGAIN, [[text("Reading it first."), read], [text("Changing the rate."), set_rate]]),
    ]
    api = fake_anthropic(rules)
    talking = {**env, **api.env()}
    try:
        claude(claude_bin, talking, ASK_WRITE, work)
        claude(claude_bin, talking, ASK_EDIT, work, "--continue")
        assert prices.read_text() == MODULE.replace(
            "    return round(amount * (1 + TAX_RATE), 2)\n",
            "    return round(amount * (1 + TAX_RATE), 2)\n" + ROUNDING,
        )
        blamed = wait_for_records(env, prices, 2)
        edits = {e["id"]: e for e in blamed["edits"]}
        owner = [edits[r["edit"]]["tool"] if r["edit"] is not None else None for r in blamed["ranges"]]
        assert blamed["claude_lines"] == blamed["lines"] == 13 and owner == ["Write", "Edit"]
        assert [e["prompt"]["text"] for e in blamed["edits"]] == [ASK_WRITE, ASK_EDIT]

        # a person adds a line and re-spaces one: blame follows the file on disk
        prices.write_text("import os\n" + prices.read_text().replace("TAX_RATE = 0.2", "TAX_RATE=0.2"))
        text_out = memory(env, "blame", str(prices), "--lines", "1-4")
        assert text_out.returncode == 0, text_out.stderr
        first, *rest = text_out.stdout.splitlines()
        assert first.strip().startswith("1 │ import os") and not first.startswith("mem:")  # the person's line
        assert rest[2].startswith("mem:") and rest[2].rstrip().endswith("4 │ TAX_RATE=0.2")
        assert f"asked: {ASK_WRITE}" in text_out.stdout and ASK_EDIT not in text_out.stdout  # only lines 1-4's calls

        mine = work / "notes.py"
        mine.write_text("print('a person wrote this')\n")
        refused = memory(env, "blame", str(mine))
        assert refused.returncode == 4 and refused.stdout == ""
        assert refused.stderr.startswith(f"Error: No Claude Code edit of {mine} is remembered (code written outside")
        assert memory(env, "blame", str(prices), "--lines", "9-2").stderr.startswith(
            "Error: The line range 9-2 ends before"
        )

        # the MCP tool, through the real client, tells the same story for the helper Claude added
        mcp_env = {key: env[key] for key in ("CLAUDE_MEMORY_HOME", "CLAUDE_CONFIG_DIR")}
        mcp_env |= {"CLAUDE_PROJECT_DIR": str(work), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        params = StdioServerParameters(command=sys.executable, args=["-m", "claude_memory", "mcp"], env=mcp_env)
        told = anyio_run(why_tool, params, "prices.py", 12, 14)
        assert told.startswith("### prices.py, lines 12-14")
        assert f"Asked: “{ASK_EDIT}” [mem:" in told and "Edit [mem:" in told

        # a later session edits lines the first one wrote: the note reaches Claude before the edit runs
        claude(claude_bin, talking, ASK_AGAIN, work)
        requests = json.dumps(api.bodies())
        assert "Memory of prices.py: lines about to change were written by Claude in earlier sessions." in requests
        assert ASK_WRITE in requests.split("Memory of prices.py", 1)[1][:800]
        log = Path(env["CLAUDE_MEMORY_HOME"]) / "logs" / "hooks.log"
        assert not log.exists() or "PreToolUse" not in log.read_text(), log.read_text()
    finally:
        memory(env, "stop")


def anyio_run(fn: Callable[..., Any], *args: Any) -> Any:
    import anyio

    return anyio.run(fn, *args)


async def why_tool(params: StdioServerParameters, file: str, start: int, end: int) -> str:
    async with Client(params) as client:
        result = await client.call_tool("why", {"file": file, "start_line": start, "end_line": end})
        assert result.is_error is False, result
        block: Any = result.content[0]
        return str(block.text)
