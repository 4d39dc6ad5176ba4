"""Where the project's own Claude Code fixtures live and what they hold (tests/fixtures, made by
tests/fixtures/make_fixtures.py). The generator and the tests share these names, so a test can refer to a
session or project of the fixtures without repeating their ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE_HOME = FIXTURES / "claude_home"  # a ~/.claude tree: projects/<folder>/<session>.jsonl (+ subagents/)
TRANSCRIPTS = FIXTURES / "transcripts"  # the same transcripts by scenario name (links into CLAUDE_HOME)
HOOK_PAYLOADS = FIXTURES / "hook_payloads"  # <NN>-<run>.jsonl: each hook's stdin, in firing order

# The home directory and projects as they appear in the fixtures (the generator's scratch paths, normalised).
HOME = "/home/dev"
WORK = "/home/dev/work"  # greeting, compaction, subagent, MCP call
SPACED = "/home/dev/My Project_v2.0"  # a resumed session: Read, a failing Read, bare /compact, a last turn
SHOP = "/home/dev/shop"  # a long session on a small Python package: Write, Edit, Read, ruff format, secrets
SEARCH_WORKTREE = "/home/dev/shop/.worktrees/search"  # "/." in a path: its folder has "--"
INFRA = "/home/dev/infra"  # container builds, ruff format of the deploy scripts
PROJECTS = (WORK, SPACED, SHOP, SEARCH_WORKTREE, INFRA)

# Sessions (fixed with `claude --session-id`).
GREETING = "0a1e5c1d-0001-4000-8000-00000000a001"  # prompt, answer, Bash call, answer: 4 events
COMPACTED = "0a1e5c1d-0002-4000-8000-00000000a002"  # Bash, then `/compact focus on the echo command`, a turn after
DELEGATED = "0a1e5c1d-0003-4000-8000-00000000a003"  # an Agent call: a subagent transcript, a task notification
NOTED = "0a1e5c1d-0004-4000-8000-00000000a004"  # an MCP tool call (mcp__notes__remember)
RESUMED = "0a1e5c1d-0005-4000-8000-00000000b001"  # in SPACED: 5 runs with --resume
CART = "0a1e5c1d-0006-4000-8000-00000000c001"  # in SHOP: the long one
SECRETS = "0a1e5c1d-0007-4000-8000-00000000c002"  # in SHOP: <private> sections and fake credentials
RANKING = "0a1e5c1d-0008-4000-8000-00000000d001"  # in SEARCH_WORKTREE
IMAGES = "0a1e5c1d-0009-4000-8000-00000000e001"  # in INFRA
SESSIONS = (GREETING, COMPACTED, DELEGATED, NOTED, RESUMED, CART, SECRETS, RANKING, IMAGES)

ECHO_WORD = "hello-from-fake"  # what the greeting's Bash call prints (WORK and SPACED only)
TOPIC = "ruff format"  # talked about in SHOP and INFRA only, in prompts, answers and tool calls
CART_FILE = f"{SHOP}/src/shop/cart.py"  # written, read, edited (once in vain) in CART
# The cart file as CART's Write made it, the Edit's old and new strings, and the file after that Edit.
CART_V1 = """class Cart:
    def __init__(self):
        self.items = []

    def add(self, name, price):
        self.items.append((name, price))

    def total(self):
        return sum(price for _, price in self.items)
"""
CART_TOTAL = "    def total(self):\n        return sum(price for _, price in self.items)\n"
CART_DISCOUNT = CART_TOTAL + (
    "\n    def apply_discount(self, percent):\n        return self.total() * (100 - percent) / 100\n"
)
CART_NOW = CART_V1.replace(CART_TOTAL, CART_DISCOUNT)
CART_FILE_EVENTS = 6  # Write, Read, Edit, the refused Edit, `grep -n 'def ' ...`, `ruff format --check ...`
CART_FILE_LAST_TOUCHED = "2026-03-13"  # by `ruff format --check src/shop/cart.py`
SECRETS_IN_PROMPTS = (  # typed in SECRETS' prompts (and repeated by an answer); never to be stored
    "fixture-pass-123",  # a password in a postgres:// URL
    "ghp_FixtureTok9Qz7Lm2Xv5Rt8Wp3Ys6Kd1Hb4N",  # a GitHub token's shape
    "fixtureSecretKey1234567890abcdefghijklmn",  # export AWS_SECRET_ACCESS_KEY=...
)
PRIVATE_IN_PROMPTS = ("the staging admin is Jane Roe, phone 555-0100", "my home address is 12 Elm Street")
HOOK_CONTEXT = "FIXTURE-CONTEXT injected by the"  # what the generator's hooks returned as additionalContext


def hook_payloads(run: str | None = None) -> list[dict[str, Any]]:
    """The captured hook payloads (``{"run", "event", "payload"}``), of one run or of all, in firing order."""
    paths = sorted(HOOK_PAYLOADS.glob(f"[0-9][0-9]-{run}.jsonl" if run else "*.jsonl"))
    assert paths, f"no hook payloads for {run or 'any run'} in {HOOK_PAYLOADS}"
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def fixture_path(path: str) -> Path:
    """A path as the fixtures name it (under /home/dev/.claude) in this checkout."""
    prefix = f"{HOME}/.claude/"
    assert path.startswith(prefix), path
    return CLAUDE_HOME / path[len(prefix) :]


def add_summariser_transcript(home: Path, session: str = COMPACTED) -> Path:
    """Write what Claude Code 2.1.39 left beside a compacted session and 2.1.330 (under ``-p``) does not: the
    compaction summariser's own transcript, ``<session>/subagents/agent-acompact-<hex>.jsonl`` (hand-made, in the
    shape of those lines). Importers skip it: the summary is already in the session. ``home`` must be a copy."""
    assert home.resolve() != CLAUDE_HOME.resolve(), "add_summariser_transcript changes the tree: pass a copy"
    (folder,) = [p.parent for p in (home / "projects").glob(f"*/{session}.jsonl")]
    path = folder / session / "subagents" / "agent-acompact-5f3e21.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    common = {"isSidechain": True, "agentId": "acompact-5f3e21", "sessionId": session, "cwd": WORK,
              "version": "2.1.39", "userType": "external"}  # fmt: skip
    lines = [
        {**common, "type": "user", "uuid": "5f3e2100-0000-4000-8000-000000000001", "parentUuid": None,
         "timestamp": "2026-03-03T10:20:01.000Z",
         "message": {"role": "user", "content": "Your task is to create a detailed summary of the conversation."}},
        {**common, "type": "assistant", "uuid": "5f3e2100-0000-4000-8000-000000000002",
         "parentUuid": "5f3e2100-0000-4000-8000-000000000001", "timestamp": "2026-03-03T10:20:02.000Z",
         "message": {"id": "msg_summariser_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": "<summary>We ran the greeting echo.</summary>"}]}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
