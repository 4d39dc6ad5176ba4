"""The HTTP API: the engine contract's operations under ``/api/v1/<operation>``, nothing written by hand.

Every published operation answers ``POST`` with its parameters as a JSON object; one that does not change the
store also answers ``GET``, its parameters in the query string (a list parameter repeated, ``?refs=a&refs=b``;
an object parameter as JSON). The answer is the operation's result as JSON, exactly as the CLI's ``--json``
and the MCP server see it; a failure is ``{"error": {"code", "message"}}`` with one sentence and the status
below. Parameters are checked here against the contract's model before anything is sent to the service.

Not published: what belongs to the hooks and the service's own lifecycle (``service_only`` operations, and
``capture``, which reads a transcript named in its payload) and what waits on long work while it reports
progress (``import``, ``embed_wait``, ``model_fetch``, ``model_use``: the CLI's). :func:`published` decides,
so the OpenAPI schema (:mod:`claude_memory.web.openapi`) lists exactly what is served.
"""

from __future__ import annotations

import json
import typing
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ValidationError

from claude_memory import wire
from claude_memory.service.contract import Operation, Registry, invalid_parameter
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from collections.abc import Iterable

PREFIX: Final = "/api/v1"
HOOK_ONLY: Final = frozenset({"capture"})

STATUS: Final = {
    wire.BAD_REQUEST: 400,
    wire.NOT_FOUND: 404,
    wire.BUSY: 503,
    wire.UNAVAILABLE: 503,
    wire.DAMAGED: 500,
    wire.STORE: 500,
    wire.INTERNAL: 500,
}


def published(ops: Registry) -> list[Operation[Any]]:
    """The operations the HTTP API serves, in the contract's order."""
    return [op for op in ops if not (op.service_only or op.progress or op.name in HOOK_ONLY)]


def methods(op: Operation[Any]) -> tuple[str, ...]:
    return ("POST",) if op.writes else ("GET", "POST")


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def status_of(error: OpError) -> int:
    return STATUS.get(error.code, 500)


def query_params(model: type[BaseModel], pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """A GET query string as the model's parameters: lists from repeated keys (a value is never split: a path may
    hold a comma), objects from JSON, the rest as
    text for pydantic to read (``10``, ``true``, an ISO date). An unknown key is kept, so validation names it."""
    grouped: dict[str, list[str]] = {}
    for key, value in pairs:
        grouped.setdefault(key, []).append(value)
    out: dict[str, Any] = {}
    for key, values in grouped.items():
        info = model.model_fields.get(key)
        shape = _shape(info.annotation) if info is not None else None
        if shape is list:
            out[key] = values
        elif shape is dict:
            try:
                out[key] = json.loads(values[-1])
            except ValueError:
                raise OpError(wire.BAD_REQUEST, f"Invalid parameter {key}: not a JSON object.") from None
        else:
            out[key] = values[-1]
    return out


def _shape(annotation: Any) -> type | None:
    """``list`` or ``dict`` when the annotation is (or may be) one, else None."""
    origin = typing.get_origin(annotation)
    if origin in (list, dict):
        return typing.cast(type, origin)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dict
    for arg in typing.get_args(annotation):
        found = _shape(arg)
        if found is not None:
            return found
    return None


def validated(op: Operation[Any], raw: Any) -> dict[str, Any]:
    """The parameters as the service expects them (JSON types), or OpError naming the first problem."""
    if not isinstance(raw, dict):
        raise OpError(wire.BAD_REQUEST, "The request body must be a JSON object of parameters.")
    try:
        params = op.params.model_validate(raw)
    except ValidationError as exc:
        raise invalid_parameter(exc) from None
    dumped: dict[str, Any] = params.model_dump(mode="json", exclude_unset=True)
    return dumped
