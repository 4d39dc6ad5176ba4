"""How a face reaches the engine: ``call(method, params)`` on a transport, nothing else. The operations are
the contract's (:mod:`claude_memory.service.operations`); a transport only carries them.

* :func:`connect` (the CLI): the memory service when one answers on the data directory's socket (it owns
  the store then, and nothing else may open it), else the store opened in this process
  (:class:`~claude_memory.client.local.LocalTransport`). The CLI never starts a service.
* :class:`StartingTransport` (the MCP and language servers, long-lived): the service, started on demand
  and again after it stopped; one connection per call, so concurrent calls never share a socket.

Every failure comes out as :class:`~claude_memory.wire.OpError`: a code (``not_found``, ``busy``,
``unavailable``...) and one plain sentence.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from claude_memory import wire
from claude_memory.client.connection import (
    RequestDropped,
    ServiceClient,
    ServiceUnavailable,
    call_starting,
    start_or_explain,
)
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from claude_memory.wire import Progress

PING_TIMEOUT: Final = 1.0  # seconds: a live service answers a ping in milliseconds
CALL_TIMEOUT: Final = 600.0  # a query may wait behind a long task (a big import) in the service's worker
LONG_TIMEOUT: Final = 24 * 3600.0  # import, reindex, waiting for embeddings


class Transport(Protocol):
    service: dict[str, Any] | None  # the service's ping answer when calls go to it; None in-process
    warnings: list[str]  # what opening the store had to say (in-process)

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> Any: ...

    def close(self) -> None: ...


class SocketTransport:
    """Calls on one connection to a running service (the CLI's, for one command)."""

    def __init__(self, client: ServiceClient, info: dict[str, Any]) -> None:
        self.client = client
        self.service: dict[str, Any] | None = info
        self.warnings: list[str] = []

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> Any:
        try:
            return self.client.call(method, params, timeout=timeout or CALL_TIMEOUT, progress=progress)
        except ServiceUnavailable:
            raise OpError(
                wire.UNAVAILABLE,
                "The memory service stopped answering in the middle of this command; run it again (with no "
                "service running it runs in-process).",
            ) from None

    def close(self) -> None:
        self.client.close()


def connect(data_dir: Path) -> Transport:
    """The service when one answers a ping within a second, else the store opened in this process (raises
    OpError when it cannot be opened: ``busy`` when another process holds it)."""
    client = ServiceClient(data_dir, timeout=PING_TIMEOUT)
    try:
        info = client.ping(timeout=PING_TIMEOUT)
    except (ServiceUnavailable, OpError):
        client.close()
        from claude_memory.client.local import LocalTransport  # the store and its engine: heavy imports

        return LocalTransport.open(data_dir)
    return SocketTransport(client, info)


class StartingTransport:
    """Calls to the service of ``data_dir``, starting it when none answers (unless ``start`` is off). A
    request that never reached the service is sent again after a start; one the service dropped is resent
    only with ``retry`` (reads)."""

    service: dict[str, Any] | None = None
    warnings: list[str] = []  # noqa: RUF012 - never written

    def __init__(self, data_dir: Path, *, start: bool = True, start_wait: float = 30.0, timeout: float = 120.0) -> None:
        self.data_dir = data_dir
        self.start = start
        self.start_wait = start_wait
        self.timeout = timeout

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        timeout: float | None = None,
        retry: bool = True,
    ) -> Any:
        client = ServiceClient(self.data_dir, timeout=timeout or self.timeout)
        try:
            return call_starting(client, method, params or {}, self._start, retry=retry, progress=progress)
        except RequestDropped:
            raise OpError(
                wire.UNAVAILABLE,
                f"The memory service stopped answering during {method}; check whether it took effect before "
                "trying again.",
            ) from None
        except ServiceUnavailable as exc:
            raise OpError(wire.UNAVAILABLE, str(exc)) from None
        finally:
            client.close()

    def running(self) -> bool:
        """True if a service answers now (never starts one)."""
        with ServiceClient(self.data_dir, timeout=5.0) as client:
            try:
                client.ping()
            except ServiceUnavailable:
                return False
        return True

    def close(self) -> None:
        return None

    def _start(self, client: ServiceClient) -> None:
        if not self.start:
            raise OpError(
                wire.UNAVAILABLE,
                f"The memory service for {self.data_dir} is not running (claudeMemory.startService is off); start "
                "it with `claude-memory serve --detach`.",
            )
        problem = start_or_explain(client, self.start_wait)
        if problem is not None:
            raise OpError(wire.UNAVAILABLE, problem)
