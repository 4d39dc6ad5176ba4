"""The one engine contract: every operation a face can ask of the memory, declared once.

An :class:`Operation` is a name, a pydantic params model, a pydantic result model, a priority (where and
when the service runs it) and the function that runs it against an :class:`Engine`. The operations
themselves live in :mod:`claude_memory.service.operations` (one module per feature, each registering its
own); every face reaches them through ``call(method, params)`` on a transport (:mod:`claude_memory.client`),
whether the engine is the memory service or a store opened in the same process. ``docs/service-api.md``
is generated from this registry (:mod:`claude_memory.service.reference`).

Light on purpose (pydantic and the standard library): the MCP and language servers import the models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from claude_memory import wire

if TYPE_CHECKING:
    from datetime import datetime

    from claude_memory.core.paths import RuntimePaths
    from claude_memory.service.memory import Memory
    from claude_memory.wire import Progress


class Priority(IntEnum):
    """Where the service runs an operation: in the connection's own thread (``CONNECTION``: it does not
    touch the store, or it queues its own parts), or as a task on the store's one worker thread, client
    requests (``INTERACTIVE``) before ingest (``INGEST``) before long jobs (``LONG``)."""

    CONNECTION = -2
    INTERACTIVE = 0
    INGEST = 1
    LONG = 2


class Params(BaseModel):
    """Operation parameters: unknown ones are refused."""

    model_config = ConfigDict(extra="forbid")


class NoParams(Params):
    pass


class Result(BaseModel):
    """An operation's answer, as documented (and checked by the tests); keys beyond the listed ones are
    allowed where a nested record is described as a whole."""

    model_config = ConfigDict(extra="forbid")


class NotFound(Exception):
    """The request names something the store does not have (the message says what)."""

    def __init__(self, message: str, ref: str | None = None) -> None:
        super().__init__(message)
        self.ref = ref


def invalid_parameter(exc: ValidationError) -> wire.OpError:
    """The answer for parameters a model refused: its first problem, named, in one sentence."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return wire.OpError(wire.BAD_REQUEST, f"Invalid parameter {where or 'params'}: {first['msg']}.")


class NoProgress:
    def start(self, what: str, total: int) -> None:
        return None

    def advance(self, n: int) -> None:
        return None


class Engine(Protocol):
    """What an operation runs against: the store (``memory``) and what only its host can do. Two hosts:
    the memory service (:class:`claude_memory.service.server.MemoryService`) and a store opened in the
    caller's process (:class:`claude_memory.service.local.LocalEngine`)."""

    @property
    def memory(self) -> Memory: ...

    paths: RuntimePaths
    started_at: datetime

    def host_status(self) -> dict[str, Any]:
        """``{service, watcher, spool, warnings}`` (``service`` and ``watcher`` None in-process)."""

    def import_history(
        self, claude_home: str | None, project: str | None, settle_seconds: float | None, progress: Progress
    ) -> dict[str, Any]: ...

    def wait_embedded(self, progress: Progress) -> int:
        """Until what is queued for embedding is embedded (or stops moving); how many events were."""

    def semantics_notes(self) -> list[str]:
        """A sentence saying why semantic search is off, when it is."""

    def model_download(self) -> dict[str, Any]:
        """The managed model's download: ``{state, bytes, total, error, attempts, retry_in}``."""

    def fetch_model(self, progress: Progress) -> dict[str, Any]:
        """Download the managed model now and take it into use; ValueError when not allowed. Returns the model's
        state (as ``model_status``)."""

    def remove_model(self) -> dict[str, Any]:
        """Delete the managed model: ``{removed, managed, note}``."""

    def switch_model(self, requested: str, name: str | None, progress: Progress) -> dict[str, Any]:
        """Start embedding the store again under another model (:mod:`claude_memory.service.model_switch`): in the
        background in the service, to the end in-process; ValueError (one sentence) when it names no model.
        Returns the model's state (as ``model_status``)."""

    def cancel_switch(self) -> dict[str, Any]:
        """Give up the model switch in progress; the model's state (as ``model_status``)."""

    def hook(self, event: str, payload: dict[str, Any]) -> dict[str, Any] | None: ...

    def context(self, payload: dict[str, Any], budget: int, *, counted: bool = True) -> dict[str, Any]:
        """What the hook would inject; ``counted``: what it shows counts as used (as the hook's answer does)."""

    def capture(self, payload: dict[str, Any]) -> dict[str, Any]: ...

    def drain(self) -> None: ...

    def shutdown(self) -> None: ...


P = TypeVar("P", bound=Params)


@dataclass(frozen=True)
class Operation(Generic[P]):
    name: str
    params: type[P]
    result: Any  # a Result model, or a type such as list[Model] (a pydantic TypeAdapter reads either)
    priority: Priority
    run: Callable[[Engine, P, Progress], Any]
    summary: str  # one line for the generated reference
    writes: bool = False  # changes the store: never answered from a cache, never resent after a drop
    service_only: bool = False  # needs the running service (hooks' spool, shutdown...)
    progress: bool = False  # long: reports progress when the caller asks for it


class Registry:
    """The operations by name, in the order they were declared."""

    def __init__(self, ops: Iterable[Operation[Any]] = ()) -> None:
        self._ops: dict[str, Operation[Any]] = {}
        for op in ops:
            if op.name in self._ops:
                raise ValueError(f"The operation {op.name!r} is declared twice.")
            self._ops[op.name] = op

    def get(self, name: str) -> Operation[Any] | None:
        return self._ops.get(name)

    def __iter__(self) -> Iterator[Operation[Any]]:
        return iter(self._ops.values())

    def __len__(self) -> int:
        return len(self._ops)


OPERATION_ATTR = "__operation__"


def operation(
    name: str,
    params: type[P],
    result: Any,
    priority: Priority = Priority.INTERACTIVE,
    **flags: bool,
) -> Callable[[Callable[[Engine, P, Progress], Any]], Callable[[Engine, P, Progress], Any]]:
    """Declare the decorated function as the operation ``name`` (the declaration rides on the function; a
    registry gathers them from the feature modules). Its docstring's first paragraph is the summary in the
    generated reference."""

    def declare(fn: Callable[[Engine, P, Progress], Any]) -> Callable[[Engine, P, Progress], Any]:
        summary = " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())
        setattr(fn, OPERATION_ATTR, Operation(name, params, result, priority, fn, summary, **flags))
        return fn

    return declare


def declared(module: object) -> list[Operation[Any]]:
    """The operations declared in a module, in the order its functions were defined."""
    found = (getattr(value, OPERATION_ATTR, None) for value in vars(module).values())
    return [op for op in found if isinstance(op, Operation)]


_CONSTRAINTS = ("ge", "gt", "le", "lt", "min_length", "max_length")  # annotated_types' bounds, by attribute


def field(model: type[BaseModel], name: str, **overrides: Any) -> Any:
    """A field like one of a contract model's (its description and bounds, not its default), for a face whose
    own schema mirrors it (the MCP tools): ``Annotated[int, field(SearchParams, "limit", le=20)] = 10``."""
    info = model.model_fields[name]
    kwargs: dict[str, Any] = {"description": info.description}
    for item in info.metadata:
        kwargs.update((key, getattr(item, key)) for key in _CONSTRAINTS if hasattr(item, key))
    return Field(**{**kwargs, **overrides})
