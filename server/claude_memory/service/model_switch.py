"""Changing the embedding model (``claude-memory model use``) while semantic search keeps working.

Vectors of two models never meet: the next model's chunks go to their own table (``next_chunks``) and index
(``vectors.next.*``), built in the background a batch at a time, oldest events first, then every event added
meanwhile. The current model and its index keep answering searches. When every event is done, one transaction
puts the next chunks in place of the current ones, deletes the current model's vectors and records the next
model with the store; then its index files replace the current ones and the store's owner loads the new model.
A process stopped half-way resumes where it was (``next_model.done_seq``); a forget removes the forgotten
events' next chunks too (store/writer.py).

What may be asked for: ``int8`` or ``float32`` (the downloaded model's int8 copy, or the download itself), a
folder holding a ``model.onnx`` (loaded as ``--name``, by default the current model's name: fastembed needs the
name to know the pooling), or the name of a model fastembed knows (downloaded first when missing).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from claude_memory.service.embedding import embed_events
from claude_memory.store import embedding_queue, model_files
from claude_memory.store.embedder import Embedder
from claude_memory.store.heap import release_freed_memory
from claude_memory.store.vector_index import NEXT_STEM, VectorIndex

if TYPE_CHECKING:
    from claude_memory.service.memory import Memory

PRECISIONS: Final = ("int8", "float32")
RETRY_SECONDS: Final = 60.0  # after a failed batch (the model or the disk): one sentence in the status meanwhile


@dataclass(frozen=True)
class Target:
    """A model to switch to: fastembed's name for it, its folder, and how later processes find it."""

    name: str
    folder: Path
    source: str  # managed | path
    requested: str


def resolve(memory: Memory, requested: str, name: str | None = None) -> Target:
    """What ``requested`` names, as a model folder; ValueError (one sentence) when it names none. A model fastembed
    knows but that is not downloaded is fetched now, unless offline (the caller's thread waits)."""
    embedder, data_dir = memory.embedder, memory.data_dir
    if embedder.explicit is not None:
        raise ValueError(
            f"A model folder is set ({embedder.explicit}, by CLAUDE_MEMORY_MODEL_PATH or the 'embedding_model_path' "
            "setting) and overrides the store's model; unset it before 'model use'."
        )
    current = name or embedder.model_name
    if requested in PRECISIONS:
        managed = _managed(data_dir, current)
        if managed is None:
            raise ValueError(f"{current} is not downloaded ('claude-memory model fetch' does it), so it has no "
                             f"{requested} copy to use.")  # fmt: skip
        if requested == "float32":
            return Target(current, managed, "managed", requested)
        if not model_files.quantizable(current):
            raise ValueError(f"No int8 copy of {current} is made: its quantization was not measured.")
        try:
            return Target(current, model_files.make_int8(data_dir, current, managed), "managed", requested)
        except model_files.ModelFetchError as exc:
            raise ValueError(str(exc)) from exc
    folder = Path(requested).expanduser()
    if folder.is_dir():
        onnx = model_files.model_file(current)
        if not (folder / onnx).exists():
            raise ValueError(f"No {onnx} in {folder}.")
        return Target(current, folder.resolve(), "path", requested)
    try:
        kind_name = model_files.describe(requested)[1].model
    except ValueError:
        raise ValueError(
            f"{requested!r} is neither int8, float32, a model folder nor a model fastembed knows "
            "('claude-memory model status' names the one in use)."
        ) from None
    managed = _managed(data_dir, kind_name)
    if managed is None:
        refusal = embedder.fetch_refusal()
        if refusal:
            raise ValueError(refusal)
        try:
            managed = model_files.fetch(data_dir, kind_name)
        except model_files.ModelFetchError as exc:
            raise ValueError(str(exc)) from exc
    return Target(kind_name, managed, "managed", requested)


def _managed(data_dir: Path, name: str) -> Path | None:
    try:
        return model_files.installed(data_dir, name)
    except ValueError:
        return None


class ModelSwitch:
    """The switch in progress, for the store's owner: started by :meth:`start`, advanced by :meth:`step` (the
    service's idle work, or a foreground loop), finished by the step that finds every event done."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._embedder: Embedder | None = None  # the next model, loaded while a switch runs
        self._index: VectorIndex | None = None
        self._retry_at = 0.0
        self.active = embedding_queue.switching(memory.con)

    def status(self) -> dict[str, Any] | None:
        state = embedding_queue.next_model(self.memory.con)
        return state.to_json() if state else None

    def start(self, target: Target) -> dict[str, Any]:
        memory = self.memory
        embedder = Embedder(target.folder, target.name)
        if not embedder.available:
            raise ValueError(embedder.reason or f"The model in {target.folder} could not be loaded.")
        if memory.model_ready() and embedder.model_id == memory.embedder.model_id:
            raise ValueError(f"The store already uses {embedder.model_id}; nothing to change.")
        self._drop_index()
        memory.writer.start_switch(target.name, embedder.model_id, str(target.folder), target.source, target.requested)
        self._embedder, self._retry_at, self.active = embedder, 0.0, True
        self._index = self._next_index(embedder.model_id)
        self._index.rebuild(memory.con)  # (empty: clears any files a switch given up left)
        state = self.status()
        assert state is not None
        return state

    def cancel(self) -> bool:
        """Give up the switch in progress (its vectors go); False when there was none."""
        if not self.active:
            return False
        self.memory.writer.cancel_switch()
        self._drop_index()
        self.active = False
        return True

    def step(self, batch: int) -> bool:
        """Embed up to ``batch`` more events under the next model, or finish the switch; True if there was work."""
        if not self.active or time.monotonic() < self._retry_at:
            return False
        memory = self.memory
        state = embedding_queue.next_model(memory.con)
        if state is None:
            self.active = False
            return False
        loaded = self._load(state)
        if loaded is None:
            return False
        embedder, index = loaded
        due, last_seq = embedding_queue.next_due(memory.con, state.done_seq, batch)
        try:
            if due:
                embedded = embed_events(memory.con, embedder, due)
                labels = memory.writer.add_next_embeddings(
                    embedded.chunks, embedded.new_hashes, embedded.new_vectors, last_seq
                )
                if labels:
                    index.add(labels, embedded.vectors())
                return True
            return self._finish(state, embedder, index)
        except Exception as exc:  # the model or the disk failed: said in the status, tried again later
            self._failed(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
            return False
        finally:
            release_freed_memory()

    def _finish(self, state: embedding_queue.NextModel, embedder: Embedder, index: VectorIndex) -> bool:
        memory = self.memory
        index.save()
        folder = Path(state.path)
        if not memory.writer.finish_switch(model_files.fingerprint(folder, state.name)):
            return False  # events arrived since the last look: the next step embeds them
        index.take_place_of(VectorIndex(memory.data_dir, state.model_id))
        self._embedder, self._index, self.active = None, None, False
        memory.model_switched(index)
        return True

    def _load(self, state: embedding_queue.NextModel) -> tuple[Embedder, VectorIndex] | None:
        """The next model and its index (after a restart: loaded again, the index brought level)."""
        if self._embedder is None or self._embedder.model_id != state.model_id:
            embedder = Embedder(Path(state.path), state.name)
            if not embedder.available or embedder.model_id != state.model_id:
                self._failed(embedder.reason or f"The model in {state.path} changed since the switch began; "
                             "start it again with 'claude-memory model use'.")  # fmt: skip
                return None
            self._embedder = embedder
            self._index = None
        if self._index is None:
            self._index = self._next_index(state.model_id)
            self._index.load(self.memory.con)
        return self._embedder, self._index

    def forget(self, labels: list[int]) -> None:
        """Forgotten chunks leave the next index too (the store's rows went with the forget's transaction)."""
        if self._index is not None and labels:
            self._index.remove(labels)
            self._index.save()

    def _failed(self, sentence: str) -> None:
        self._retry_at = time.monotonic() + RETRY_SECONDS
        self.memory.writer.switch_failed(sentence)

    def _next_index(self, model_id: str) -> VectorIndex:
        """The switch's index: the chunks of ``next_chunks``, in the ``vectors.next.*`` files."""
        return VectorIndex(self.memory.data_dir, model_id, table="next_chunks", stem=NEXT_STEM)

    def _drop_index(self) -> None:
        (self._index or self._next_index("")).remove_files()
        self._index = None
        self._embedder = None
