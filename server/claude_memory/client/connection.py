"""A connection to the memory service's socket (the wire format is :mod:`claude_memory.wire`), and starting
the service on demand. Standard library only: the hook client imports it when it must start a service.

One request is one JSON object on one line: ``{"id": 1, "method": "search", "params": {...}}``; the
answer is one line too: ``{"id": 1, "result": {...}}`` or ``{"id": 1, "error": {"code": ..., "message":
...}}``. A connection may carry any number of requests, one after another.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

from claude_memory import wire
from claude_memory.core import locations
from claude_memory.core.paths import RuntimePaths, default_data_dir, lock_held
from claude_memory.wire import OpError

# typing costs the hook client ~10 ms of imports; the annotations below are never evaluated at run time
# (``from __future__ import annotations``), and mypy treats a name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from claude_memory.wire import Progress


class ServiceUnavailable(Exception):
    """No memory service answers on the data directory's socket (not running, starting, or dead)."""


class ServiceTimeout(ServiceUnavailable):
    """The service took the request but did not answer in time (it is busy, not gone)."""


class ServiceClient:
    """A connection to the memory service of one data directory, opened on first use."""

    def __init__(self, data_dir: Path | None = None, *, timeout: float = 30.0) -> None:
        self.paths = RuntimePaths(data_dir if data_dir is not None else default_data_dir())
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._file: Any = None
        self._next_id = 0

    # ------------------------------------------------------------------ connection

    def connect(self) -> None:
        if self._sock is not None:
            return
        path = self.paths.socket
        try:
            st = os.lstat(path.parent)
        except OSError as exc:
            raise ServiceUnavailable(f"No memory service answers at {path}.") from exc
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise ServiceUnavailable(f"{path.parent} is not a private directory of this user; not connecting.")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(path))
        except OSError as exc:
            sock.close()
            raise ServiceUnavailable(f"No memory service answers at {self.paths.socket}.") from exc
        self._sock = sock
        self._file = sock.makefile("rb")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._file = None

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ calls

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> Any:
        """Send one request and wait for its answer (passing the progress reports of a long one to
        ``progress``). Raises ServiceUnavailable when the service cannot be reached or drops the connection,
        OpError when it answers with an error."""
        import json  # here, not at the top: a capture hook never needs it (see notify)

        self.connect()
        assert self._sock is not None
        self._next_id += 1
        line = wire.request_line(self._next_id, method, params or {}, progress=progress is not None)
        try:
            self._sock.settimeout(timeout if timeout is not None else self.timeout)
            self._sock.sendall(line)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            self.close()  # the service had closed this connection (it stopped): nothing of the request arrived
            raise RequestNotSent(f"The memory service was gone before {method!r} was sent.") from exc
        except OSError as exc:
            raise self._failed(method, exc) from exc
        while True:
            try:
                answer = self._file.readline(wire.MAX_LINE)
            except OSError as exc:
                raise self._failed(method, exc) from exc
            if not answer:
                self.close()
                raise ServiceUnavailable(f"The memory service closed the connection during {method!r}.")
            try:
                response = json.loads(answer)
            except ValueError as exc:
                self.close()
                raise ServiceUnavailable(f"The memory service sent a malformed answer to {method!r}.") from exc
            report = response.get("progress")
            if report is None:
                break
            if progress is not None and isinstance(report, dict):
                if "total" in report:
                    progress.start(str(report.get("what")), int(report["total"]))
                elif "advance" in report:
                    progress.advance(int(report["advance"]))
        error = response.get("error")
        if error:
            message = str(error.get("message", "The request failed."))
            raise OpError(str(error.get("code", "error")), message, error.get("ref"))
        return response.get("result")

    def _failed(self, method: str, exc: OSError) -> ServiceUnavailable:
        """Close the connection; the error to raise for ``exc`` during ``method``."""
        self.close()
        if isinstance(exc, TimeoutError):
            return ServiceTimeout(f"The memory service did not answer {method!r} in time.")
        return ServiceUnavailable(f"The memory service did not answer {method!r}: {exc}.")

    def notify(self, method: str) -> None:
        """Send a parameterless request and do not wait for its answer (the hooks' nudge: the service
        answers into a closed connection, which it ignores). Raises ServiceUnavailable if it cannot be
        sent."""
        if not method.isidentifier():
            raise ValueError(f"not a method name: {method!r}")
        self.connect()
        assert self._sock is not None
        try:
            self._sock.sendall(
                b'{"id":0,"v":%d,"method":"%s","params":{}}\n' % (wire.PROTOCOL_VERSION, method.encode())
            )
        except OSError as exc:
            raise ServiceUnavailable(f"The memory service did not take {method!r}: {exc}.") from exc
        finally:
            self.close()

    def ping(self, *, timeout: float | None = None) -> dict[str, Any]:
        result = self.call("ping", timeout=timeout)
        return result if isinstance(result, dict) else {}

    # ------------------------------------------------------------------ start on demand

    def ensure_running(self, *, wait: float = 10.0, python: str | None = None) -> bool:
        """Connect, starting a detached service first if none answers. True once it answers; False if it
        did not within ``wait`` seconds (it may still be starting: a later call can succeed)."""
        try:
            self.ping(timeout=min(self.timeout, 5.0))
            return True
        except ServiceUnavailable:
            pass
        if locations.store_damaged(str(self.paths.data_dir)):
            return False  # a service would fail on it again
        start_service(self.paths.data_dir, python=python)
        deadline = time.monotonic() + wait
        while True:
            try:
                self.ping(timeout=max(0.05, min(2.0, deadline - time.monotonic())))
                return True
            except ServiceUnavailable:
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


class RequestDropped(ServiceUnavailable):
    """The service took a request and stopped answering: it may or may not have taken effect."""


class RequestNotSent(ServiceUnavailable):
    """The connection was already closed by the service (it had stopped), so the request never reached it:
    sending it again, even a write, is safe."""


def call_starting(
    client: ServiceClient,
    method: str,
    params: dict[str, Any],
    start: Callable[[ServiceClient], None],
    *,
    retry: bool = True,
    progress: Progress | None = None,
) -> Any:
    """One request for a long-lived face (MCP, language server). A request that never reached the service
    (no service, or a connection it had closed: it stopped, e.g. for an upgrade) is sent after
    ``start(client)`` (which raises to refuse); one the service dropped is sent again after a start only with
    ``retry`` (reads), else RequestDropped. Raises OpError for the service's error answers,
    ServiceUnavailable (one sentence) when it still does not answer."""
    try:
        client.connect()
    except ServiceUnavailable:
        start(client)
    try:
        return client.call(method, params, progress=progress)
    except RequestNotSent:
        pass
    except ServiceUnavailable as exc:
        if not retry:
            raise RequestDropped(f"The memory service stopped answering during {method}.") from exc
    client.close()
    start(client)
    try:
        return client.call(method, params, progress=progress)
    except ServiceUnavailable as exc:
        raise ServiceUnavailable(f"The memory service did not answer the {method} request.") from exc


def start_or_explain(client: ServiceClient, wait: float) -> str | None:
    """Make sure the client's service runs (starting it if needed): None when it answers, else one
    sentence saying it is not running and could not be started, and where its log is."""
    damaged = locations.store_damaged(str(client.paths.data_dir))
    if damaged:
        return damaged
    try:
        if client.ensure_running(wait=wait):
            return None
    except OSError:
        pass
    data_dir = client.paths.data_dir
    return (
        f"The memory service for {data_dir} is not running and could not be started; "
        f"see {client.paths.log_dir / 'service.log'}."
    )


def start_service(data_dir: Path, *, python: str | None = None, args: tuple[str, ...] = ()) -> None:
    """Start ``claude-memory serve [args]`` for ``data_dir`` in the background, detached from the caller (own
    session, no terminal, output to its log file). A second service for the same directory exits at once
    (the lock file decides), so racing starters are harmless."""
    import subprocess  # only here: the hook client rarely starts a service, and these imports cost
    import threading

    data_dir = data_dir.absolute()  # the child runs from /
    paths = RuntimePaths(data_dir)
    if lock_held(paths.lock):
        return  # a service holds the directory (starting, or busy): starting another would only exit
    if locations.store_damaged(str(data_dir)):
        return  # it would fail on the damaged store again (claude-memory repair)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    package_parent = str(Path(__file__).resolve().parents[1])  # importable even from a source tree
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONSAFEPATH", None)
    fd = os.open(paths.log_dir / "service-start.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    log = open(fd, "ab")  # noqa: SIM115 - handed to the child
    child = subprocess.Popen(
        [python or sys.executable, "-m", "claude_memory", "--data-dir", str(data_dir), "serve", "--quiet", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,  # an interpreter that cannot even import the package says why here
        start_new_session=True,
        close_fds=True,
        env=env,
        cwd="/",
    )
    log.close()
    # A long-lived caller (the MCP or language server) reaps the child when it exits; no zombie is left.
    threading.Thread(target=child.wait, name="reap-memory-service", daemon=True).start()
