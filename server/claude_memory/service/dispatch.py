"""Running an operation of the contract: look it up, validate its parameters, run it against an engine,
and turn any failure into one :class:`~claude_memory.wire.OpError` (a code and one plain sentence). The
memory service and the in-process transport both come through here, so a face sees the same answers and
the same errors whichever engine served it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
from pydantic import ValidationError

from claude_memory import wire
from claude_memory.service.contract import Engine, NoProgress, NotFound, Operation, Registry, invalid_parameter
from claude_memory.service.worker import ServiceStopping
from claude_memory.store.db import StoreBusyError, StoreDamagedError, StoreError, first_line, io_failure
from claude_memory.store.model_files import ModelFetchError
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from claude_memory.wire import Progress


def lookup(registry: Registry, method: str, *, in_service: bool) -> Operation[Any]:
    op = registry.get(method)
    if op is None:
        raise ValueError(f"Unknown method {method!r}.")
    if op.service_only and not in_service:
        raise ValueError(f"{method!r} is answered only by the memory service (`claude-memory serve`).")
    return op


def run(
    engine: Engine, registry: Registry, method: str, params: dict[str, Any], progress: Progress | None = None
) -> Any:
    """One operation in this process (the in-process transport). Raises whatever the operation raises;
    :func:`op_error` makes it an answer."""
    op = lookup(registry, method, in_service=False)
    return op.run(engine, op.params.model_validate(params), progress or NoProgress())


def op_error(exc: BaseException, internal: str, data_dir: Path | None = None) -> OpError:
    """The answer for a failed operation; ``internal`` is the sentence for an unexpected failure (it says
    where the traceback was logged). Logging is the caller's: the service logs, the CLI only says it. An I/O
    error of the store of ``data_dir`` is a full disk or a damaged file (:func:`store.db.io_failure`)."""
    if isinstance(exc, OpError):
        return exc
    if isinstance(exc, duckdb.IOException) and data_dir is not None:
        exc = io_failure(exc, data_dir)
    if isinstance(exc, ValidationError):
        return invalid_parameter(exc)
    if isinstance(exc, NotFound):
        return OpError(wire.NOT_FOUND, str(exc), exc.ref)
    if isinstance(exc, ValueError):
        return OpError(wire.BAD_REQUEST, str(exc))
    if isinstance(exc, ServiceStopping | ModelFetchError):
        return OpError(wire.UNAVAILABLE, str(exc))
    if isinstance(exc, StoreBusyError):
        return OpError(wire.BUSY, str(exc))
    if isinstance(exc, StoreDamagedError):
        return OpError(wire.DAMAGED, str(exc))
    if isinstance(exc, StoreError):
        return OpError(wire.STORE, str(exc))
    if isinstance(exc, duckdb.Error):
        return OpError(wire.STORE, f"The memory store failed: {first_line(exc)}.")
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return OpError(wire.STORE, f"{exc.strerror or first_line(exc)}{where}.")
    return OpError(wire.INTERNAL, internal)
