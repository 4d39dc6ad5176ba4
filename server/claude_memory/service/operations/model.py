"""The embedding model: ``model_status`` (which model, from where, and any download), ``model_fetch`` (download
the managed copy now and take it into use) and ``model_remove`` (delete the managed copy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from claude_memory.service.contract import Engine, NoParams, Priority, Result, operation
from claude_memory.service.operations.common import Json

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class ModelStatus(Result):
    name: str
    model_id: str
    available: bool
    source: str | None
    path: str | None
    reason: str | None
    offline: bool
    fetchable: bool
    recorded: Json | None
    managed: str | None
    download: Json


class ModelRemoved(Result):
    removed: bool
    managed: str | None
    note: str


@operation("model_status", NoParams, ModelStatus)
def model_status(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """The embedding model: ``{name, model_id, available, source (path | recorded | managed | cache), path, reason
    (why semantic search is off), offline, fetchable (a download may help), recorded (the model the store's
    vectors were made with), managed (the downloaded copy's folder), download {state (idle | downloading | ready |
    failed), bytes, total, error, attempts, retry_in}}``."""
    return {**engine.memory.model_status(), "download": engine.model_download()}


@operation("model_fetch", NoParams, ModelStatus, Priority.CONNECTION, progress=True)
def model_fetch(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Download the embedding model into the data directory now (by its name, through fastembed: ``HF_ENDPOINT``
    names a mirror) and take it into use; progress in bytes. Refused when offline or when a model folder is set
    explicitly. Then as ``model_status``."""
    engine.fetch_model(progress)
    return {**engine.memory.model_status(), "download": engine.model_download()}


@operation("model_remove", NoParams, ModelRemoved, writes=True)
def model_remove(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Delete the downloaded copy of the embedding model: ``{removed, managed, note}``. Stored vectors stay;
    semantic search is off until a model is there again."""
    return engine.remove_model()
