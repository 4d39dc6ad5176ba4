"""Calls into the memory service for the language server: start or attach on demand, one connection per
call (so a restarted service is simply connected to again and concurrent requests never share a socket),
one retry after a restart for reads, and failures as one plain sentence. Blocking: the server runs it on
worker threads. The mechanism, shared with the MCP face, is :func:`claude_memory.client.call_starting`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_memory.client import (
    RequestDropped,
    ServiceClient,
    ServiceError,
    ServiceUnavailable,
    call_starting,
    start_or_explain,
)

log = logging.getLogger("claude_memory.lsp")


class ServiceFailure(Exception):
    """A request the service could not answer. ``code`` is the service's error code (``not_found``,
    ``bad_request``...) or ``unavailable``; the message is one plain sentence for the user."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class GatewayOptions:
    data_dir: Path
    start: bool = True  # start a service when none answers
    start_wait: float = 30.0
    timeout: float = 120.0


class Gateway:
    def __init__(self, options: GatewayOptions) -> None:
        self.options = options

    def call(self, method: str, params: dict[str, Any] | None = None, *, retry: bool = True, timeout: float = 0) -> Any:
        """One request. A request that never reached the service is sent again after starting it;
        ``retry`` also allows resending one the service dropped (reads only)."""
        client = ServiceClient(self.options.data_dir, timeout=timeout or self.options.timeout)
        try:
            return call_starting(client, method, params or {}, self._start, retry=retry)
        except RequestDropped:
            raise ServiceFailure(
                "unavailable",
                f"The memory service stopped answering during {method}; check whether it took effect "
                "before trying again.",
            ) from None
        except ServiceUnavailable as exc:
            raise ServiceFailure("unavailable", str(exc)) from None
        except ServiceError as exc:
            raise ServiceFailure(exc.code, str(exc)) from None
        finally:
            client.close()

    def running(self) -> bool:
        """True if a service answers now (never starts one)."""
        with ServiceClient(self.options.data_dir, timeout=5.0) as client:
            try:
                client.ping()
            except ServiceUnavailable:
                return False
        return True

    def _start(self, client: ServiceClient) -> None:
        if not self.options.start:
            raise ServiceFailure(
                "unavailable",
                f"The memory service for {self.options.data_dir} is not running (claudeMemory.startService is "
                "off); start it with `claude-memory serve --detach`.",
            )
        problem = start_or_explain(client, self.options.start_wait)
        if problem is not None:
            raise ServiceFailure("unavailable", problem)
