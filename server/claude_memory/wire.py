"""The memory service's wire format, in one place: what the hook client, the socket client and the service
must agree on. Standard library only, and nothing imported at module level, because the hook client
imports this for every hook Claude Code runs (see :mod:`claude_memory.hooks.client`).

* A request is one JSON object on one line: ``{"id": 1, "v": PROTOCOL_VERSION, "method": ..., "params":
  {...}}``, at most :data:`MAX_LINE` bytes. The answer is one line too, ``{"id": 1, "result": ...}`` or
  ``{"id": 1, "error": {"code": ..., "message": ...}}``; a request that asked for ``"progress": true`` may
  first get any number of ``{"id": 1, "progress": {...}}`` lines (:func:`progress_line`).
* The hook spool (``<data dir>/spool/hooks.jsonl``): one capture per line, written by :func:`spool_capture`
  (a hook or the service) and read back by :func:`read_batch` (the service's drain).
"""

# No ``from __future__ import annotations``: even that is a module to load for the hook client.

TYPE_CHECKING = False  # the typing module costs the hook client ~10 ms; mypy treats this name as true
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any, Protocol

    from claude_memory.core.paths import RuntimePaths

    class Progress(Protocol):
        """Where a long operation reports how far it is: ``start`` a stage of known size (``import`` in
        transcript bytes, ``embed`` in events), then ``advance`` it; over the socket, as progress lines."""

        def start(self, what: str, total: int) -> None: ...

        def advance(self, n: int) -> None: ...


PROTOCOL_VERSION = 1
MAX_LINE = 64 << 20  # one request or answer line; search results are bounded far below this
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse")  # answered with context; others are captures
ANSWER_HEAD = b'{"id":1,"result":'  # how the service writes a successful answer to request id 1 (the hook's)

# Error codes of an answer's ``error`` (docs/service-api.md).
BAD_REQUEST = "bad_request"
NOT_FOUND = "not_found"
BUSY = "busy"
DAMAGED = "damaged"  # the store file cannot be read: `claude-memory repair`
STORE = "store"
UNAVAILABLE = "unavailable"
INTERNAL = "internal"

# What a spooled capture keeps of a hook payload: which transcript to read and where it stands, never
# content (prompts, tool input and output, messages, summaries). The service reads the content from the
# transcript, through the privacy filter, so no unfiltered text of a session reaches our disk.
CAPTURE_FIELDS = (
    "hook_event_name", "session_id", "transcript_path", "agent_transcript_path", "cwd", "source", "reason",
    "trigger", "tool_use_id", "tool_name", "agent_id", "agent_type",
)  # fmt: skip
SPOOL_BATCH_GLOB = "batch-*.jsonl"


class OpError(Exception):
    """An operation's error answer: ``code`` is one of the codes above, the message one plain sentence;
    ``ref`` names the citation or id a ``not_found`` error is about, when there is one."""

    def __init__(self, code: str, message: str, ref: "str | None" = None) -> None:
        super().__init__(message)
        self.code = code
        self.ref = ref

    def to_json(self) -> "dict[str, Any]":
        error: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.ref is not None:
            error["ref"] = self.ref
        return error


def dumps(value: "Any") -> bytes:
    """One JSON line (no newline) as the service writes it: compact, UTF-8, dates as ISO text."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def request_line(req_id: int, method: str, params: "dict[str, Any]", *, progress: bool = False) -> bytes:
    request: dict[str, Any] = {"id": req_id, "v": PROTOCOL_VERSION, "method": method, "params": params}
    if progress:
        request["progress"] = True
    return dumps(request) + b"\n"


def hook_request(event: str, payload: bytes) -> bytes:
    """The hook client's one request, ``hook`` with ``{"event", "payload"}``, built without a JSON encoder.
    ``event`` must be an identifier; ``payload`` (the hook's stdin, JSON without raw line breaks or tabs) is
    sent as one JSON *string*, escaped, so that no payload can change the request's structure. The service
    parses it with :func:`parse_payload`."""
    text = payload.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    return b'{"id":1,"v":%d,"method":"hook","params":{"event":"%s","payload":"%s"}}\n' % (
        PROTOCOL_VERSION,
        event.encode(),
        text,
    )


MAX_PAYLOAD = 32 << 20  # bytes of one hook payload (Claude Code's stdin)
MAX_PAYLOAD_DEPTH = 64  # nesting of one hook payload; Claude Code's are a few levels deep


def parse_payload(text: str) -> "dict[str, Any]":
    """A hook payload (the JSON text a hook read on stdin) as an object, within :data:`MAX_PAYLOAD` bytes
    and :data:`MAX_PAYLOAD_DEPTH` levels; ValueError (one sentence, never quoting the payload) otherwise."""
    import json

    if len(text) > MAX_PAYLOAD:
        raise ValueError(f"The hook payload is over {MAX_PAYLOAD >> 20} MB.")
    too_deep = f"The hook payload is nested deeper than {MAX_PAYLOAD_DEPTH} levels."
    try:
        value = json.loads(text)
    except RecursionError:  # the parser stops at the interpreter's recursion limit
        raise ValueError(too_deep) from None
    except ValueError:
        raise ValueError("The hook payload is not valid JSON.") from None
    stack = [(value, 1)]
    while stack:  # iterative: no recursion to exhaust
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= MAX_PAYLOAD_DEPTH:
                    raise ValueError(too_deep)
                stack.append((child, depth + 1))
    if not isinstance(value, dict):
        raise ValueError("The hook payload is not a JSON object.")
    return value


def progress_line(req_id: "Any", what: str, *, total: "int | None" = None, advance: "int | None" = None) -> bytes:
    """A progress report on a long request: ``{"id", "progress": {"what", "total"}}`` when a stage of known
    size starts (``what`` is ``import``, in transcript bytes, or ``embed``, in events), ``{"what",
    "advance"}`` as it moves on."""
    report: dict[str, Any] = {"what": what}
    if total is not None:
        report["total"] = total
    if advance is not None:
        report["advance"] = advance
    return dumps({"id": req_id, "progress": report}) + b"\n"


# ---------------------------------------------------------------------- the hook spool


def capture_record(payload: "dict[str, Any]", received_at: float) -> bytes:
    """The spool line for one hook capture: the payload's :data:`CAPTURE_FIELDS` only."""
    kept = {k: payload[k] for k in CAPTURE_FIELDS if isinstance(payload.get(k), str)}
    return dumps({"v": 1, "received_at": round(received_at, 3), "payload": kept})


def spool_capture(paths: "RuntimePaths", payload: "dict[str, Any]") -> None:
    """Spool a hook capture (which transcript to read, never content) for the service to apply."""
    import time

    spool_append_line(paths, capture_record(payload, time.time()))


def spool_append_line(paths: "RuntimePaths", record: bytes) -> None:
    """Append one JSON record to the spool file, under the spool lock so a drain never splits a line.
    The service drains it idempotently (captures carry dedupe keys), so a record written twice is
    harmless."""
    import fcntl
    import os

    paths.spool_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    line = b"\n" + record + b"\n"  # the leading newline ends a line a failed write (disk full) left open
    lock_fd = os.open(paths.spool_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        fd = os.open(paths.spool, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)
    finally:
        os.close(lock_fd)  # closing releases the lock


def spool_state(paths: "RuntimePaths") -> "dict[str, int]":
    """Hook captures waiting to be applied: bytes in the spool file, and batches set aside."""
    spool = paths.spool
    waiting = sum(1 for _ in paths.spool_dir.glob(SPOOL_BATCH_GLOB)) if paths.spool_dir.is_dir() else 0
    return {"bytes": spool.stat().st_size if spool.exists() else 0, "batches_waiting": waiting}


def take_batches(paths: "RuntimePaths") -> "list[Path]":
    """Move the current spool aside as a new batch; return every batch waiting, oldest first."""
    import fcntl
    import os
    import time

    spool_dir = paths.spool_dir
    if not spool_dir.is_dir():
        return []
    if paths.spool.exists() and paths.spool.stat().st_size > 0:
        fd = os.open(paths.spool_lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if paths.spool.exists() and paths.spool.stat().st_size > 0:
                paths.spool.rename(spool_dir / f"batch-{time.time_ns():020d}.jsonl")
        finally:
            os.close(fd)
    return sorted(spool_dir.glob(SPOOL_BATCH_GLOB))


def read_batch(path: "Path") -> "Iterator[tuple[int, Any, str | None]]":
    """(line number, the capture's payload object, why the line was rejected) for each non-empty line of a
    spool batch; the payload is None when the line is rejected."""
    import json

    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):
                # A hook killed mid-write: the line is incomplete, and its hook exited without success.
                yield line_no, None, "the line is incomplete (its hook was killed while writing it)"
                continue
            try:
                record = json.loads(raw)
            except ValueError as exc:
                yield line_no, None, f"not a hook capture ({str(exc).splitlines()[0]})"
                continue
            payload = record.get("payload") if isinstance(record, dict) else None
            if not isinstance(payload, dict):
                yield line_no, None, "not a hook capture (no payload object)"
                continue
            yield line_no, payload, None
