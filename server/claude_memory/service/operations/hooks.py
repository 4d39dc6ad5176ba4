"""Claude Code's hooks: the hook client's one request (``hook``), the context the prompt and session-start
hooks inject (``context``), applying a capture now (``capture``) and the hooks' nudge to apply the spool
(``drain``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory import wire
from claude_memory.core.disclosure import DEFAULT_BUDGET
from claude_memory.service.contract import Engine, NoParams, Params, Priority, Result, operation
from claude_memory.service.operations.common import Json

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class HookParams(Params):
    """The hook client's request: the event name and Claude Code's payload, as it came (its JSON text)."""

    event: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z][A-Za-z0-9]*$", description="The hook event.")
    payload: str = Field(
        max_length=wire.MAX_PAYLOAD,
        description=f"Claude Code's stdin object as JSON text (at most {wire.MAX_PAYLOAD_DEPTH} levels deep).",
    )


class ContextParams(Params):
    payload: Json = Field(description="A SessionStart or UserPromptSubmit hook's stdin object.")
    budget: int = Field(default=DEFAULT_BUDGET, ge=0, le=50_000, description="Tokens the context may use.")
    preview: bool = Field(
        default=False, description="Only show what the hook would inject: the memories shown count no use."
    )


class CaptureParams(Params):
    payload: Json = Field(description="A capture hook's stdin object (PostToolUse, Stop, SessionEnd...).")


class HookOutput(Result):
    hookSpecificOutput: dict[str, str]  # Claude Code's name


class Context(Result):
    additional_context: str
    citations: list[str]
    scores: dict[str, float] | None = None  # how well each injected memory matched: cosine, or share of the words
    reason: str | None = None
    meta: Json | None = None


class Captured(Result):
    event: str
    new_events: int
    session_summary: bool


class Scheduled(Result):
    scheduled: bool


@operation("hook", HookParams, HookOutput | None, Priority.CONNECTION, service_only=True)
def hook(engine: Engine, p: HookParams, progress: Progress) -> dict[str, Any] | None:
    """The hook client's one request. SessionStart and UserPromptSubmit: the hook's stdout object, or null
    when nothing is relevant. Any other event is a capture: spooled before the answer (which transcript to
    read, never content) and applied by the worker soon after; null. The answer is written
    ``{"id":1,"result":…}`` exactly, so the client prints the result without parsing JSON. A payload that is
    not a JSON object within the wire limits is a ``bad_request``."""
    return engine.hook(p.event, wire.parse_payload(p.payload))


@operation("context", ContextParams, Context, Priority.CONNECTION)
def context(engine: Engine, p: ContextParams, progress: Progress) -> dict[str, Any]:
    """The context a SessionStart or UserPromptSubmit hook would inject, with its citations and the reason
    when there is none."""
    return engine.context(p.payload, p.budget, counted=not p.preview)


@operation("capture", CaptureParams, Captured, writes=True)
def capture(engine: Engine, p: CaptureParams, progress: Progress) -> dict[str, Any]:
    """Apply one hook capture now: read its transcript from the checkpoint (``{event, new_events,
    session_summary}``)."""
    return engine.capture(p.payload)


@operation("drain", NoParams, Scheduled, Priority.CONNECTION, service_only=True)
def drain(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Apply the hook spool soon (the hooks' nudge): ``{scheduled: true}``."""
    engine.drain()
    return {"scheduled": True}
