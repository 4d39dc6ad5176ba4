"""The Claude Code hook client: one request to the memory service, never in the way.

Claude Code runs it for every hook event (``hooks/claude-memory-hook <Event>``, payload on stdin) and
waits for it, so it must cost little more than the interpreter's own start. It imports no module that
the interpreter has not loaded already, except ``_socket`` (no json, no pathlib, no socket module: those
cost it ~25 ms). The payload goes to the service unparsed, as one escaped JSON string inside a ``hook``
request (never spliced into the request's structure: :func:`claude_memory.wire.hook_request`), and the
service's answer comes back ready to print (``docs/service-api.md``, method ``hook``):

* SessionStart and UserPromptSubmit: the service searches memory and answers with the hook output,
  ``{"hookSpecificOutput": {..., "additionalContext": ...}}``, which is printed as it is, or ``null``
  when there is nothing relevant (nothing is printed); PreToolUse (for edits) likewise, with the earlier
  prompts behind the lines about to change;
* every other event is a capture: the service spools which transcript to read (never its content) and
  applies it at once.

Whatever goes wrong (no service, a slow one, a broken payload), the client exits 0 without output, so
Claude Code carries on; the reason goes to ``<data dir>/logs/hooks.log``. Only then does it import more:
:mod:`claude_memory.client.connection` to start a stopped service (detached), and
:func:`claude_memory.wire.spool_capture` to spool a capture the service did not take, which the service
applies when it is back.
"""

# No ``from __future__ import annotations``: even that is a module to load (0.3 ms), and nothing here needs it.
import os
import sys

from claude_memory.core.locations import HOOK_LOG, LOG_DIR, default_data_dir, direct_socket, store_damaged
from claude_memory.wire import ANSWER_HEAD, CONTEXT_EVENTS, MAX_PAYLOAD, hook_request

# Seconds to wait for context: a warm service answers in tens of milliseconds; a cold start (the first
# hook after boot) takes a few seconds, which SessionStart can afford and a prompt should not.
# Together under the 10 s timeout plugin/hooks/hooks.json gives them.
# PreToolUse (registered for edits only) is a note about the lines an edit is about to change: worth little against
# a delay before every edit, so it waits briefly and never starts a service.
CONTEXT_TIMEOUT = {"SessionStart": 4.0, "UserPromptSubmit": 3.0, "PreToolUse": 1.0}
START_WAIT = {"SessionStart": 5.0, "UserPromptSubmit": 2.0, "PreToolUse": 0.0}
CAPTURE_TIMEOUT = 0.5  # the service spools a capture without waiting for its worker
MAX_ANSWER = 1 << 20  # context is capped at 10,000 characters
MAX_LOG_BYTES = 1_000_000


class Unanswered(Exception):
    """The service did not answer: not running (``busy`` False) or too slow (``busy`` True)."""

    def __init__(self, message: str, *, busy: bool) -> None:
        super().__init__(message)
        self.busy = busy


def _log(data_dir: str, event: str, message: str) -> None:
    import time  # built into the interpreter: no file to load

    try:
        log_dir = os.path.join(data_dir, LOG_DIR)
        os.makedirs(log_dir, mode=0o700, exist_ok=True)
        log = os.path.join(log_dir, HOOK_LOG)
        if os.path.exists(log) and os.stat(log).st_size > MAX_LOG_BYTES:
            os.replace(log, log + ".1")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} [{os.getpid()}] {event}: {message}\n")
    except OSError:
        pass


def _socket_path(data_dir: str) -> str:
    direct = direct_socket(data_dir)
    if direct is not None:
        return direct
    from pathlib import Path  # rare: a data directory whose path is too long for a socket address

    from claude_memory.core.paths import RuntimePaths

    return str(RuntimePaths(Path(data_dir)).socket)


def ask(data_dir: str, event: str, payload: bytes, timeout: float) -> bytes:
    """Send one ``hook`` request with ``payload`` (a JSON object, unparsed) and return the answer's
    result as JSON text (``b"null"`` for none). Raises Unanswered, or ValueError when the service
    refuses the request (its one-sentence error)."""
    import _socket

    path = _socket_path(data_dir)
    parent = os.path.dirname(path)
    try:
        st = os.lstat(parent)
    except OSError as exc:
        raise Unanswered(f"No memory service answers at {path}.", busy=False) from exc
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise Unanswered(f"{parent} is not a private directory of this user; not connecting.", busy=False)
    request = hook_request(event, payload)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except TimeoutError as exc:
            raise Unanswered("The memory service did not accept the connection in time.", busy=True) from exc
        except OSError as exc:
            raise Unanswered(f"No memory service answers at {path}.", busy=False) from exc
        answer = b""
        try:
            sock.sendall(request)
            while not answer.endswith(b"\n") and len(answer) < MAX_ANSWER:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except TimeoutError as exc:
            raise Unanswered(f"The memory service did not answer the {event} hook in time.", busy=True) from exc
        except OSError as exc:
            raise Unanswered(f"The memory service dropped the {event} hook: {exc}.", busy=False) from exc
    finally:
        sock.close()
    if answer.startswith(ANSWER_HEAD) and answer.endswith(b"}\n"):
        return answer[len(ANSWER_HEAD) : -2]
    if not answer:
        raise Unanswered(f"The memory service closed the connection during the {event} hook.", busy=False)
    raise ValueError(f"The memory service refused the {event} hook: {answer[:500].decode('utf-8', 'replace').strip()}")


def _start(data_dir: str, wait: float) -> bool:
    """Start the service (detached) if none runs; True once it answers within ``wait`` seconds."""
    from pathlib import Path

    from claude_memory.client.connection import ServiceClient

    client = ServiceClient(Path(data_dir), timeout=wait)
    try:
        return client.ensure_running(wait=wait)
    finally:
        client.close()


def _spool(data_dir: str, event: str, payload: bytes, *, start: bool) -> None:
    """Keep a capture the service did not take (which transcript to read, never content), for the
    service to apply when it runs; start it if it is not running."""
    from pathlib import Path

    from claude_memory.client.connection import start_service
    from claude_memory.core.paths import RuntimePaths
    from claude_memory.wire import parse_payload, spool_capture

    fields = parse_payload(payload.decode("utf-8", "replace"))  # ValueError for a payload no service could use
    fields["hook_event_name"] = event
    spool_capture(RuntimePaths(Path(data_dir)), fields)
    if start:
        start_service(Path(data_dir))  # it drains the spool when it starts (not while the store is damaged)


def run(event: str, stdin: bytes, data_dir: str) -> bytes:
    """The hook's stdout for this payload (b"" for none). Raises on any failure; main() swallows it."""
    if not event:
        raise ValueError("no hook event name: plugin/hooks/hooks.json passes it as the first argument")
    if not (event.isidentifier() and event.isascii()):
        raise ValueError(f"{event!r} is not a hook event name")
    if len(stdin) > MAX_PAYLOAD:
        raise ValueError(f"the hook payload is over {MAX_PAYLOAD >> 20} MB")
    payload = stdin.strip()
    if not (payload.startswith(b"{") and payload.endswith(b"}")):
        raise ValueError("the hook payload is not a JSON object")
    # JSON has no raw line breaks or tabs inside strings, so these are whitespace: the request stays one line
    payload = payload.replace(b"\n", b" ").replace(b"\r", b" ").replace(b"\t", b" ")
    if event in CONTEXT_EVENTS:
        try:
            result = ask(data_dir, event, payload, CONTEXT_TIMEOUT[event])
        except Unanswered as exc:
            if exc.busy:
                _log(data_dir, event, "the memory service is busy; no context this time")
                return b""
            damaged = store_damaged(data_dir)
            if damaged:
                _log(data_dir, event, damaged)
                return b""
            if not START_WAIT[event]:
                return b""  # no service: no note, and the capture hooks start one
            if not _start(data_dir, START_WAIT[event]):
                _log(data_dir, event, "the memory service is starting; no context this time")
                return b""
            result = ask(data_dir, event, payload, CONTEXT_TIMEOUT[event])
        return b"" if result == b"null" else result + b"\n"
    try:
        ask(data_dir, event, payload, CAPTURE_TIMEOUT)
    except Unanswered as exc:
        # a busy service may still take it: spooled twice is harmless, captures carry dedupe keys
        _spool(data_dir, event, payload, start=not exc.busy)
    except ValueError as refused:
        # refused, e.g. by a service started before an upgrade that has no `hook` method yet: its next
        # drain applies the spool (and reports a capture it cannot use); a payload that is not a JSON object
        # within the wire's limits is not kept, and the refusal says why
        try:  # noqa: SIM105 - contextlib costs the hook an import
            _spool(data_dir, event, payload, start=False)
        except ValueError:
            pass
        raise refused from None
    return b""


def main(argv: list[str] | None = None) -> int:
    os.umask(0o077)  # the hook log and the spool are user-only (claude_memory.core.paths.private_umask)
    args = sys.argv[1:] if argv is None else argv
    event = args[0] if args else ""
    data_dir = default_data_dir()
    try:
        out = run(event, sys.stdin.buffer.read(), data_dir)
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
    except Exception as exc:  # never break Claude Code: log, print nothing, succeed
        try:  # noqa: SIM105 - contextlib costs the hook an import
            _log(data_dir, event or "hook", f"{type(exc).__name__}: {exc}")
        except Exception:
            pass
    return 0
