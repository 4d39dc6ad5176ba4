"""docs/service-api.md lists every method the service answers."""

from __future__ import annotations

import re
from pathlib import Path

from claude_memory.service.api import HANDLERS

DOC = Path(__file__).resolve().parents[2] / "docs" / "service-api.md"
SERVER = Path(__file__).resolve().parents[2] / "server" / "claude_memory" / "service" / "server.py"


def test_every_method_is_documented() -> None:
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", DOC.read_text(encoding="utf-8"), re.MULTILINE))
    special = set(re.findall(r'if method == "([a-z_]+)"', SERVER.read_text(encoding="utf-8")))
    assert special, "the service's own methods were not found"
    assert documented == set(HANDLERS) | special
