"""The embedding model (fastembed), loaded lazily from a local folder; never downloads on its own."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

DEFAULT_MODEL: Final = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PATH_ENV: Final = "CLAUDE_MEMORY_MODEL_PATH"
BATCH: Final = 64
# A batch is padded to its longest text, and attention memory grows with batch x length squared: 64 long
# chunks at once took ONNX Runtime to 1.2 GB. Batches are capped at about this many characters of padded
# text instead (~4,000 tokens): as fast, and the peak stays near 0.5 GB (docs/architecture.md).
BATCH_CHARS: Final = 16_000


class Embedder:
    """``model_path`` (or $CLAUDE_MEMORY_MODEL_PATH) is a local folder holding ``model.onnx`` and its
    tokenizer files. Without one, fastembed's own cache is tried without network access. When no model
    can be loaded, ``available`` is False and ``reason`` says why in one sentence."""

    def __init__(self, model_path: Path | None = None, model_name: str = DEFAULT_MODEL) -> None:
        env = os.environ.get(MODEL_PATH_ENV)
        self.model_path = model_path or (Path(env).expanduser() if env else None)
        self.model_name = model_name
        self.reason: str | None = None
        self._model: Any = None
        self._tried = False

    @property
    def model_id(self) -> str:
        """Names the vectors' space: the model name, plus a short fingerprint of model.onnx's size when
        loaded from a folder (a different export gets a different id, so its vectors are not mixed)."""
        onnx = self.model_path / "model.onnx" if self.model_path else None
        if onnx is not None and onnx.exists():
            stat = onnx.stat()
            return f"{self.model_name}@{hashlib.sha256(f'{stat.st_size}'.encode()).hexdigest()[:8]}"
        return self.model_name

    @property
    def available(self) -> bool:
        self._load()
        return self._model is not None

    def _load(self) -> None:
        if self._tried:
            return
        self._tried = True
        try:
            from fastembed import TextEmbedding  # heavy (~0.6 s): only when embeddings are needed
            from loguru import logger
        except ImportError:
            self.reason = "fastembed is not installed, so only keyword search is available."
            return
        logger.disable("fastembed")  # it logs its own failures to stderr; we report them in one sentence
        try:
            if self.model_path is not None:
                if not (self.model_path / "model.onnx").exists():
                    self.reason = f"No model.onnx in {self.model_path}; semantic search is off."
                    return
                self._model = TextEmbedding(
                    self.model_name, specific_model_path=str(self.model_path), enable_cpu_mem_arena=False
                )
            else:
                self._model = TextEmbedding(self.model_name, local_files_only=True, enable_cpu_mem_arena=False)
        except Exception as exc:  # any loading failure means: no semantic search, said plainly
            where = f"from {self.model_path}" if self.model_path else "locally"
            self.reason = (
                f"No embedding model could be loaded {where} ({type(exc).__name__}); set {MODEL_PATH_ENV} to an "
                "all-MiniLM-L6-v2 ONNX folder. Keyword search still works."
            )
            self._model = None

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 vectors, one row per text."""
        self._load()
        if self._model is None:
            raise RuntimeError(self.reason or "No embedding model.")
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        # Batches are padded to their longest text: embedding in length order wastes far less work.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows: list[Any] = []
        for batch in _batches([texts[i] for i in order]):
            rows.extend(self._model.embed(batch, batch_size=len(batch)))
        ordered = np.asarray(rows, dtype=np.float32)
        vectors = np.empty_like(ordered)
        vectors[np.asarray(order)] = ordered
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit


def _batches(ordered: list[str]) -> list[list[str]]:
    """``ordered`` (shortest first) cut into batches of at most BATCH texts and BATCH_CHARS padded characters."""
    batches: list[list[str]] = []
    current: list[str] = []
    for text in ordered:
        if current and (len(current) >= BATCH or (len(current) + 1) * len(text) > BATCH_CHARS):
            batches.append(current)
            current = []
        current.append(text)
    if current:
        batches.append(current)
    return batches
