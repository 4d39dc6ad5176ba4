"""The embedding model (fastembed), loaded lazily from a local folder; it never downloads by itself (the managed
copy is fetched by :mod:`claude_memory.store.model_files`)."""

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
# A batch is padded to its longest text, and attention memory grows with batch x length squared. Small batches
# are the fastest on 2 cores as well as the leanest: about one long chunk's worth of characters (~250 tokens),
# so short texts still share a batch. Measured on 1,000 dev chunks, int8 model (float32 alike): 16,000 padded
# characters 66.8 chunks/s and a peak 400 MB above the loaded model; 4,000 113.9/s, +190 MB; 1,000 129.9-133.9/s,
# +50 MB; 500 135.1/s (docs/architecture.md).
BATCH_CHARS: Final = 1_000


class Embedder:
    """The model is found in this order (the first that loads wins):

    1. ``model_path``, else ``$CLAUDE_MEMORY_MODEL_PATH``: a local folder holding ``model.onnx`` and its
       tokenizer files (the user said so: when it cannot be loaded, that is the reason given);
    2. ``recorded``: the folder the store's vectors were made with, recorded in the store, when it still
       exists (so a process started without the variable finds the same model);
    3. the managed copy in ``<data_dir>/models`` (:mod:`claude_memory.store.model_files`): its int8 copy when
       ``int8`` and the model was measured quantized, unless the store's vectors were made with the float32
       one (and the int8 copy whenever the store's were made with it);
    4. fastembed's own cache, without network access.

    When none loads, ``available`` is False and ``reason`` says why in one sentence; ``fetchable`` says
    whether downloading the managed copy may help (not when ``offline`` or an explicit path is set).
    :meth:`reset` makes the next use look again (after a download)."""

    def __init__(
        self,
        model_path: Path | None = None,
        model_name: str = DEFAULT_MODEL,
        *,
        data_dir: Path | None = None,
        recorded: Path | None = None,
        offline: bool = False,
        int8: bool = True,
    ) -> None:
        env = os.environ.get(MODEL_PATH_ENV)
        self.explicit = model_path or (Path(env).expanduser() if env else None)
        self.model_name = model_name
        self.data_dir = data_dir
        self.recorded = recorded
        self.offline = offline
        self.int8 = int8
        self.model_path: Path | None = self.explicit  # the folder loaded (None: fastembed's cache)
        self.source: str | None = None  # path | recorded | managed | cache, once loaded
        self.reason: str | None = None
        self._model: Any = None
        self._model_file: str | None = None
        self._tried = False

    @property
    def fetchable(self) -> bool:
        return self.fetch_refusal() is None

    def fetch_refusal(self) -> str | None:
        """Why the managed model may not be downloaded (one sentence), or None when it may."""
        if self.offline:
            return (
                "Offline mode is on (the 'offline' setting, CLAUDE_MEMORY_OFFLINE or HF_HUB_OFFLINE), so nothing is "
                "downloaded."
            )
        if self.explicit is not None:
            return (
                f"A model folder is set ({self.explicit}, by {MODEL_PATH_ENV} or the 'embedding_model_path' "
                "setting), so nothing is downloaded; unset it to use the downloaded model."
            )
        if self.data_dir is None:
            return "No data directory to download the model into."
        return None

    @property
    def model_id(self) -> str:
        """Names the vectors' space: the model name, plus a short fingerprint of model.onnx's size when
        loaded from a folder (a different export gets a different id, so its vectors are not mixed)."""
        onnx = self.model_path / self.model_file if self.model_path else None
        if onnx is not None and onnx.exists():
            stat = onnx.stat()
            return f"{self.model_name}@{hashlib.sha256(f'{stat.st_size}'.encode()).hexdigest()[:8]}"
        return self.model_name

    @property
    def available(self) -> bool:
        self._load()
        return self._model is not None

    def reset(self) -> None:
        """Look for the model again at the next use (a download finished, or a folder appeared)."""
        self._tried = False
        self._model = None
        self.model_path, self.source, self.reason = self.explicit, None, None

    def _load(self) -> None:
        if self._tried:
            return
        self._tried = True
        from claude_memory.store.model_files import no_telemetry

        no_telemetry()
        try:
            from fastembed import TextEmbedding  # heavy (~0.6 s): only when embeddings are needed
            from loguru import logger
        except ImportError:
            self.reason = "fastembed is not installed, so only keyword search is available."
            return
        logger.disable("fastembed")  # it logs its own failures to stderr; we report them in one sentence
        if self.explicit is not None:
            self._model = self._from_folder(TextEmbedding, self.explicit, "path")
            return
        if (
            self.recorded is not None
            and not self._is_managed(self.recorded)
            and (self.recorded / self.model_file).exists()
        ):
            self._model = self._from_folder(TextEmbedding, self.recorded, "recorded")
            if self._model is not None:
                return
        managed = self._managed()  # (a recorded managed copy is found here, under its own name)
        if managed is not None:
            quantized = self._int8_of(managed)
            if quantized is not None:
                self._model = self._from_folder(TextEmbedding, quantized, "managed")
            if self._model is None:
                self._model = self._from_folder(TextEmbedding, managed, "managed")
            if self._model is not None:
                return
        try:
            self._model = TextEmbedding(self.model_name, local_files_only=True, enable_cpu_mem_arena=False)
            self.model_path, self.source, self.reason = None, "cache", None
        except Exception:  # not in fastembed's cache either
            self._model = None
            self.model_path = None
            if self.reason is None:
                self.reason = self._missing()

    def _is_managed(self, folder: Path) -> bool:
        from claude_memory.store import model_files

        return self.data_dir is not None and folder.is_relative_to(model_files.models_dir(self.data_dir))

    @property
    def model_file(self) -> str:
        """The ONNX file of the model in a folder: fastembed's name for it (``model.onnx`` for the default)."""
        if self._model_file is None:
            from claude_memory.store import model_files

            self._model_file = (
                "model.onnx" if self.model_name == DEFAULT_MODEL else model_files.model_file(self.model_name)
            )
        return self._model_file

    @property
    def quantized(self) -> bool:
        """Whether the model loaded is the int8 copy made here."""
        return self.model_path is not None and self._is_int8(self.model_path)

    def _is_int8(self, folder: Path) -> bool:
        from claude_memory.store import model_files

        return self.data_dir is not None and folder.is_relative_to(
            model_files.models_dir(self.data_dir) / model_files.INT8_DIR
        )

    def _int8_of(self, managed: Path) -> Path | None:
        """The int8 copy to load instead of the managed float32 ``managed`` (made now if missing), or None."""
        from claude_memory.store import model_files

        assert self.data_dir is not None  # (there is a managed copy)
        if not model_files.quantizable(self.model_name):
            return None
        recorded = self.recorded
        recorded_int8 = recorded is not None and self._is_int8(recorded)
        recorded_float = recorded is not None and self._is_managed(recorded) and not recorded_int8
        if recorded_float or not (self.int8 or recorded_int8):
            return None  # the store's vectors are float32 ones, or the user wants float32
        try:
            return model_files.make_int8(self.data_dir, self.model_name, managed)
        except model_files.ModelFetchError:
            return None  # the float32 model serves

    def _managed(self) -> Path | None:
        if self.data_dir is None:
            return None
        from claude_memory.store import model_files

        try:
            return model_files.installed(self.data_dir, self.model_name)
        except ValueError:
            return None

    def _from_folder(self, loader: Any, folder: Path, source: str) -> Any:
        """fastembed's model loaded from ``folder``, or None with ``reason`` set."""
        self.model_path, self.source = folder, source
        if not (folder / self.model_file).exists():
            self.reason = f"No {self.model_file} in {folder}; semantic search is off."
            return None
        try:
            model = loader(self.model_name, specific_model_path=str(folder), enable_cpu_mem_arena=False)
        except Exception as exc:  # any loading failure means: no semantic search, said plainly
            self.reason = (
                f"The embedding model in {folder} could not be loaded ({type(exc).__name__}); "
                "keyword search still works."
            )
            return None
        self.reason = None
        return model

    def _missing(self) -> str:
        if self.offline:
            return (
                "Offline mode is on and no embedding model is installed, so only keyword search is available; "
                f"set {MODEL_PATH_ENV} to an all-MiniLM-L6-v2 ONNX folder, or run 'claude-memory model fetch' "
                "with offline off."
            )
        if self.data_dir is None:
            return (
                f"No embedding model could be loaded locally; set {MODEL_PATH_ENV} to an all-MiniLM-L6-v2 ONNX "
                "folder. Keyword search still works."
            )
        return (
            f"The embedding model ({self.model_name}) is not downloaded yet; the memory service fetches it in the "
            "background ('claude-memory model fetch' does it now), and keyword search works meanwhile."
        )

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
