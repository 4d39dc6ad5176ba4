"""The memory service's idle work (:class:`claude_memory.service.idle.IdleWork`) on a store opened in the test, as a
quiet service runs it: no request for a long time, nothing queued, nothing stopping."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from claude_memory.service import idle
from claude_memory.service.memory import Memory


def quiet_idle_work(memory: Memory) -> idle.IdleWork:
    return idle.IdleWork(
        lambda: memory,
        SimpleNamespace(last_request=0.0, pending=lambda: False),  # type: ignore[arg-type]
        lambda uses: None,
        lambda: None,
        threading.Event(),
    )
