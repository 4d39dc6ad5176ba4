"""Shared fixtures. Real Claude Code data lives in ../shared (never copied into this repo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    return Path(os.environ.get("CLAUDE_MEMORY_SHARED", REPO.parent / "shared")).resolve()


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_dir()
    if not (path / "fixtures").is_dir():
        pytest.skip(f"../shared is absent ({path}); the real Claude Code fixtures live there")
    return path


@pytest.fixture(scope="session")
def fixtures_home(shared: Path) -> Path:
    return shared / "fixtures" / "claude_home"


@pytest.fixture(scope="session")
def transcripts(shared: Path) -> Path:
    return shared / "fixtures" / "transcripts"
