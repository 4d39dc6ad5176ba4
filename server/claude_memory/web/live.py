"""Live updates for the dashboard's pages: one poller per server, fanned out to every open page as Server-Sent
Events (``/api/v1/stream``).

While at least one page listens, the poller asks the service for what arrived since the last insertion number
(``changes``) every second, and for its status every few seconds. Each look that found something becomes
one ``events`` message with all of it (batched, never one message per event), and a status that changed
becomes one ``status`` message; a service that stops answering is one ``service`` message, said once. A page
too slow to read its messages loses the oldest ones, never the server's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from claude_memory.wire import OpError

log = logging.getLogger("claude_memory.web")

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
Message = tuple[str, dict[str, Any]]

POLL_SECONDS: Final = 1.0
STATUS_EVERY: Final = 5  # polls between two looks at the status
BATCH: Final = 200  # events per look (more are fetched on the next look, straight away)
QUEUE: Final = 64  # messages a page may fall behind before its oldest are dropped
TEXT_CHARS: Final = 400  # an event's text in a live message (the page fetches the rest when asked)

PIPELINE: Final = (
    "model",
    "available",
    "reason",
    "source",
    "pending",
    "failed",
    "embedded_events",
    "vectors",
    "download",
)


class Hub:
    def __init__(self, call: Call, *, interval: float = POLL_SECONDS) -> None:
        self.call = call
        self.interval = interval
        self.seq: int | None = None
        self.listeners: set[asyncio.Queue[Message]] = set()
        self._task: asyncio.Task[None] | None = None
        self._status: dict[str, Any] | None = None
        self._down: str | None = None

    def subscribe(self) -> asyncio.Queue[Message]:
        queue: asyncio.Queue[Message] = asyncio.Queue(QUEUE)
        self.listeners.add(queue)
        if self._status is not None:
            queue.put_nowait(("status", self._status))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="web-live")
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Message]) -> None:
        self.listeners.discard(queue)
        if not self.listeners:
            self.seq = None  # the next page starts from what is there then, not from where this one left
            if self._task is not None:
                self._task.cancel()
                self._task = None

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def publish(self, kind: str, data: dict[str, Any]) -> None:
        for queue in list(self.listeners):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait((kind, data))

    async def _run(self) -> None:
        polls = 0
        while self.listeners:
            try:
                more = await self.poll(with_status=polls % STATUS_EVERY == 0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an OpError is the service's one sentence; anything else is ours, logged
                if not isinstance(exc, OpError):
                    log.exception("The live updates failed.")
                more = False
                message = str(exc) if isinstance(exc, OpError) else "The live updates failed; reload the page."
                if self._down != message:
                    self._down = message
                    self.publish("service", {"state": "unavailable", "message": message})
            polls += 1
            if not more:
                await asyncio.sleep(self.interval)

    async def poll(self, *, with_status: bool) -> bool:
        """One look; True when more events are waiting than one message carries."""
        found = await self.call("changes", {"after_seq": self.seq, "limit": BATCH} if self.seq is not None else {})
        if self._down is not None:
            self._down = None
            self.publish("service", {"state": "running", "message": "The memory service answers again."})
        if found["events"]:
            events = [_compact(e) for e in found["events"]]
            self.publish("events", {"seq": found["seq"], "count": len(events), "events": events})
        self.seq = int(found["seq"])
        if with_status:
            status = await self.call("status", {})
            summary = pipeline(status)
            if summary != self._status:
                self._status = summary
                self.publish("status", summary)
        return bool(found["more"])


def pipeline(status: dict[str, Any]) -> dict[str, Any]:
    """What a ``status`` message carries: the store's size and the embedding pipeline."""
    embedding = status.get("embedding") or {}
    return {"events": (status.get("store") or {}).get("events")} | {key: embedding.get(key) for key in PIPELINE}


def _compact(event: dict[str, Any]) -> dict[str, Any]:
    text = str(event.get("text") or "")
    keep = ("id", "citation", "type", "timestamp", "session_id", "project", "agent_id", "tool_name", "files", "source")
    return {key: event.get(key) for key in keep} | {"text": text[:TEXT_CHARS], "truncated": len(text) > TEXT_CHARS}
