"""Waiting in tests for something a service does in the background."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from claude_memory.client.connection import ServiceUnavailable


def wait_for(check: Callable[[], Any], what: str = "the service", timeout: float = 60) -> Any:
    """``check()``'s first truthy answer, asked every 0.1 s (a service not answering yet counts as no);
    fails the test after ``timeout`` seconds, naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
        except ServiceUnavailable:
            found = None
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
