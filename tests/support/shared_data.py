"""What the suite may use from ../shared (or $CLAUDE_MEMORY_SHARED) when it is there: the embedding model,
benchmark data and third-party Claude Code transcripts, none of which this repository copies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    return Path(os.environ.get("CLAUDE_MEMORY_SHARED", REPO.parent / "shared")).resolve()


def embedding_model() -> Path:
    """The all-MiniLM-L6-v2 ONNX export in ../shared/models; skips the calling test when it is not there."""
    path = shared_dir() / "models" / "all-MiniLM-L6-v2-onnx"
    if not (path / "model.onnx").exists():
        pytest.skip(f"needs the embedding model (all-MiniLM-L6-v2 ONNX), not found in {path}")
    return path


def optional_embedding_model() -> Path | None:
    """The embedding model if ../shared has it, else None."""
    path = shared_dir() / "models" / "all-MiniLM-L6-v2-onnx"
    return path if (path / "model.onnx").exists() else None
