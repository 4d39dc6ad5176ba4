"""The in-process transport: the contract's operations run on a store opened in this process (when no
memory service runs; the CLI's fallback). Same operations, same answers, same errors as through the
service (:mod:`claude_memory.service.dispatch`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from claude_memory import wire
from claude_memory.service import dispatch
from claude_memory.service.contract import Registry
from claude_memory.service.local import LocalEngine
from claude_memory.service.memory import Memory
from claude_memory.service.operations import registry
from claude_memory.store.db import StoreError, first_line
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class LocalTransport:
    service: dict[str, Any] | None = None

    def __init__(self, engine: LocalEngine, operations: Registry) -> None:
        self.engine = engine
        self.operations = operations
        self.warnings = list(engine.memory.warnings)

    @classmethod
    def open(cls, data_dir: Path) -> LocalTransport:
        """Open the store of ``data_dir``; OpError (one sentence) when it cannot be."""
        try:
            memory = Memory(data_dir)
        except StoreError as exc:  # busy, or a store problem the store put in one sentence
            raise dispatch.op_error(exc, str(exc)) from None
        except duckdb.Error as exc:
            message = f"The memory store in {data_dir} could not be prepared: {first_line(exc)}."
            raise OpError(wire.STORE, message) from None
        except OSError as exc:
            reason = exc.strerror or first_line(exc)
            raise OpError(wire.STORE, f"Cannot use {data_dir} as the data directory: {reason}.") from None
        return cls(LocalEngine(memory), registry())

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> Any:
        try:
            result = dispatch.run(self.engine, self.operations, method, _as_sent(params or {}), progress)
        except Exception as exc:
            failed = f"The memory store failed while answering {method}."
            raise dispatch.op_error(exc, failed, self.engine.paths.data_dir) from None
        return result

    def close(self) -> None:
        self.engine.close()


def _as_sent(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters as the service would receive them (JSON: dates as text), so both transports validate
    the same input."""
    loaded: dict[str, Any] = json.loads(wire.dumps(params))
    return loaded
