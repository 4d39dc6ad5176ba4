"""The Claude Code hook client: standard library only, one request to the memory service, never in the way.

Claude Code runs it for every hook event (``hooks/claude-memory-hook <Event>``, payload on stdin):

* SessionStart and UserPromptSubmit ask the service for context and print it as
  ``hookSpecificOutput.additionalContext`` (nothing at all when there is nothing relevant);
* every other event is a capture: which transcript to read (never its content, see
  ``claude_memory.client.CAPTURE_FIELDS``) is appended to the spool file first, so it survives a dead or
  restarting service, then the service is nudged to apply it at once.

Whatever goes wrong (no service, a slow one, a broken payload), the client exits 0 without output, so
Claude Code carries on; the reason goes to ``<data dir>/logs/hooks.log``. If the service is not running,
the client starts it, detached.
"""

from __future__ import annotations

import os
import sys
import time

from claude_memory.client import ServiceClient, ServiceTimeout, ServiceUnavailable, spool_capture, start_service
from claude_memory.core.paths import RuntimePaths, default_data_dir

# typing costs the hook client ~10 ms of imports; the annotations below are never evaluated at run time
# (``from __future__ import annotations``), and mypy treats a name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
# Seconds to wait for context: a warm service answers in tens of milliseconds; a cold start (the first
# hook after boot) takes a few seconds, which SessionStart can afford and a prompt should not.
# Together under the 10 s timeout hooks/hooks.json gives them.
CONTEXT_TIMEOUT = {"SessionStart": 4.0, "UserPromptSubmit": 3.0}
START_WAIT = {"SessionStart": 5.0, "UserPromptSubmit": 2.0}
NUDGE_TIMEOUT = 0.5
MAX_PAYLOAD = 32 << 20
MAX_LOG_BYTES = 1_000_000


def _log(paths: RuntimePaths, event: str, message: str) -> None:
    try:
        paths.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        log = paths.log_dir / "hooks.log"
        if log.exists() and log.stat().st_size > MAX_LOG_BYTES:
            os.replace(log, log.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} [{os.getpid()}] {event}: {message}\n")
    except OSError:
        pass


def _context(paths: RuntimePaths, event: str, payload: dict[str, Any]) -> str:
    client = ServiceClient(paths.data_dir, timeout=CONTEXT_TIMEOUT[event])
    try:
        try:
            result = client.call("context", {"payload": payload})
        except ServiceTimeout:
            _log(paths, event, "the memory service is busy; no context this time")
            return ""
        except ServiceUnavailable:
            if not client.ensure_running(wait=START_WAIT[event]):
                _log(paths, event, "the memory service is starting; no context this time")
                return ""
            result = client.call("context", {"payload": payload})
    finally:
        client.close()
    text = result.get("additional_context", "") if isinstance(result, dict) else ""
    return text if isinstance(text, str) else ""


def _capture(paths: RuntimePaths, payload: dict[str, Any]) -> None:
    spool_capture(paths, payload)
    try:
        ServiceClient(paths.data_dir, timeout=NUDGE_TIMEOUT).notify("drain")
    except ServiceUnavailable:
        start_service(paths.data_dir)  # it drains the spool when it starts


def run(argv: list[str], stdin: bytes) -> str:
    """The hook's stdout for this payload ('' for none). Raises on any failure; main() swallows it."""
    import json

    payload = json.loads(stdin[:MAX_PAYLOAD])
    if not isinstance(payload, dict):
        raise ValueError("the hook payload is not a JSON object")
    event = argv[0] if argv else str(payload.get("hook_event_name") or "")
    payload["hook_event_name"] = event
    paths = RuntimePaths(default_data_dir())
    if event not in CONTEXT_EVENTS:
        _capture(paths, payload)
        return ""
    text = _context(paths, event, payload)
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    event = args[0] if args else "hook"
    try:
        out = run(args, sys.stdin.buffer.read())
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except Exception as exc:  # never break Claude Code: log, print nothing, succeed
        try:  # noqa: SIM105 - contextlib costs the hook an import
            _log(RuntimePaths(default_data_dir()), event, f"{type(exc).__name__}: {exc}")
        except Exception:
            pass
    return 0
