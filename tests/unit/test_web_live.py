"""The dashboard's live poller (web/live.py) against a scripted service: one message per look, the start point
learned first, a service that stops answering said once, a slow page losing its oldest messages only."""

from __future__ import annotations

import asyncio
from typing import Any

from claude_memory import wire
from claude_memory.web.live import QUEUE, Hub
from claude_memory.wire import OpError


class Script:
    """Answers ``changes`` and ``status`` as the service would, from what the test put in ``arriving``."""

    def __init__(self) -> None:
        self.seq = 10
        self.arriving: list[dict[str, Any]] = []
        self.down = False
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, method: str, params: dict[str, Any]) -> Any:
        self.asked.append((method, params))
        if self.down:
            raise OpError(wire.UNAVAILABLE, "The memory service is not running.")
        if method == "status":
            return {"store": {"events": self.seq}, "embedding": {"pending": 0, "model": "m"}}
        if "after_seq" not in params:
            return {"seq": self.seq, "events": [], "more": False}
        batch, self.arriving = self.arriving, []
        self.seq += len(batch)
        return {"seq": self.seq, "events": batch, "more": False}


def event(n: int) -> dict[str, Any]:
    return {"id": n, "citation": f"mem:AAAA{n:02d}", "type": "user_prompt", "session_id": "s", "text": "x" * 1000}


def test_a_look_that_finds_events_is_one_message_and_the_start_is_learned_first() -> None:
    async def run() -> None:
        script = Script()
        hub = Hub(script, interval=0.01)
        queue = hub.subscribe()
        await asyncio.sleep(0.05)
        assert script.asked[0] == ("changes", {})  # where to start, not the whole history
        assert all(params.get("after_seq") == 10 for method, params in script.asked[1:] if method == "changes")
        script.arriving = [event(1), event(2), event(3)]
        kinds = []
        while True:
            kind, data = await asyncio.wait_for(queue.get(), 2)
            kinds.append(kind)
            if kind == "events":
                break
        assert data["count"] == 3 and data["seq"] == 13
        assert [e["citation"] for e in data["events"]] == ["mem:AAAA01", "mem:AAAA02", "mem:AAAA03"]
        assert len(data["events"][0]["text"]) == 400 and data["events"][0]["truncated"] is True
        assert "status" in kinds
        hub.unsubscribe(queue)
        await hub.close()

    asyncio.run(run())


def test_a_service_that_stops_answering_is_said_once_and_its_return_once() -> None:
    async def run() -> None:
        script = Script()
        hub = Hub(script, interval=0.01)
        queue = hub.subscribe()
        await asyncio.sleep(0.03)
        script.down = True
        await asyncio.sleep(0.1)
        script.down = False
        await asyncio.sleep(0.05)
        said = []
        while not queue.empty():
            kind, data = queue.get_nowait()
            if kind == "service":
                said.append(data["state"])
        assert said == ["unavailable", "running"]
        await hub.close()

    asyncio.run(run())


def test_a_page_that_does_not_read_loses_its_oldest_messages_only() -> None:
    async def run() -> None:
        hub = Hub(Script(), interval=10)
        queue = hub.subscribe()
        for n in range(QUEUE + 5):
            hub.publish("events", {"n": n})
        assert queue.qsize() == QUEUE
        assert queue.get_nowait()[1] == {"n": 5}
        hub.unsubscribe(queue)
        assert not hub.listeners
        await hub.close()

    asyncio.run(run())
