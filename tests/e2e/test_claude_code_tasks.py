"""Tasks across sessions end to end: the real Claude Code CLI (against the project's fake Anthropic API) with the
installed plugin plans work with its task tools in one session (2.1.330 offers TaskCreate and TaskUpdate, not
TodoWrite, under ``--tools``); the next session's SessionStart context lists what is still open, with citations;
finishing a task under a reworded title finishes the same task."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.fake_anthropic import FakeAnthropic, Rule, text, tool
from support.plugin_home import installed, memory

PLAN = "TASKS-ONE: plan the checkout work"
FINISH = "TASKS-TWO: finish the validation"
TOOLS = "TaskCreate,TaskUpdate"


def create(subject: str) -> dict[str, Any]:
    return tool("TaskCreate", subject=subject, description=f"{subject}.", activeForm=subject)


def update(task_id: str, status: str) -> dict[str, Any]:
    return tool("TaskUpdate", taskId=task_id, status=status)


def claude(claude_bin: Path, env: dict[str, str], prompt: str, cwd: Path) -> None:
    out = subprocess.run(
        [str(claude_bin), "-p", prompt, "--output-format", "json", "--tools", TOOLS, "--allowedTools", TOOLS],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0 and not json.loads(out.stdout).get("is_error"), out.stdout[-2000:] + out.stderr[-2000:]


def test_open_tasks_reach_the_next_session_and_a_reworded_title_is_the_same_task(
    tmp_path: Path, claude_bin: Path, fake_anthropic: Callable[..., FakeAnthropic]
) -> None:
    env = installed(tmp_path, claude_bin)
    work = tmp_path / "work" / "checkout-app"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    plan = [
        [text("Planning."), create("Add input validation to the checkout form")],
        [create("Write the release notes")],
        [create("Rename the cart module")],
        [text("Starting."), update("1", "in_progress")],
        [text("Renamed it."), update("3", "in_progress")],
        [update("3", "completed")],
    ]
    finish = [[text("Finishing."), create("Add input validation to the checkout form and its tests")],
              [update("1", "in_progress")], [update("1", "completed")]]  # fmt: skip
    rules = [Rule(PLAN, plan, needs_tool="TaskCreate"), Rule(FINISH, finish, needs_tool="TaskCreate")]
    api = fake_anthropic(rules)
    talking = {**env, **api.env()}
    try:
        claude(claude_bin, talking, PLAN, work)
        deadline = time.monotonic() + 60
        while True:  # the capture hooks spool the calls; the service stores them soon after
            listed = json.loads(memory(env, "tasks", "--json", "--project", str(work)).stdout or "[]")
            if len(listed) == 3 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert {t["title"]: t["status"] for t in listed} == {
            "Add input validation to the checkout form": "in_progress",
            "Write the release notes": "pending",
            "Rename the cart module": "done",
        }
        claude(claude_bin, talking, FINISH, work)
        sent = json.dumps(next(b for b in api.bodies() if FINISH in json.dumps(b)))
        assert "Open tasks from earlier sessions:" in sent, "the SessionStart context did not list the open tasks"
        opened = sent.split("Open tasks from earlier sessions:")[1][:600]
        assert "in progress: Add input validation to the checkout form [mem:" in opened
        assert "pending: Write the release notes [mem:" in opened and "Rename the cart module" not in opened
        deadline = time.monotonic() + 60
        while True:
            listed = json.loads(memory(env, "tasks", "--json", "--project", str(work)).stdout or "[]")
            if any(t["status"] == "done" and "validation" in t["title"] for t in listed) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert sorted((t["title"], t["status"]) for t in listed) == [
            ("Add input validation to the checkout form", "done"),  # one task, finished under the reworded title
            ("Rename the cart module", "done"),
            ("Write the release notes", "pending"),
        ]
    finally:
        memory(env, "stop")
