"""The embedding model: ``model_status`` (which model, from where, and any download), ``model_fetch`` (download
the managed copy now and take it into use), ``model_use`` (embed the store again under another model) and
``model_remove`` (delete the managed copy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory.service.contract import Engine, NoParams, Params, Priority, Result, operation
from claude_memory.service.operations.common import Json

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class ModelStatus(Result):
    name: str
    model_id: str
    available: bool
    source: str | None
    path: str | None
    int8: bool
    reason: str | None
    offline: bool
    fetchable: bool
    recorded: Json | None
    managed: str | None
    switch: Json | None
    download: Json


class ModelUseParams(Params):
    target: str = Field(
        min_length=1,
        description="int8 or float32 (the downloaded model's int8 copy or the download itself), a folder holding a "
        "model.onnx, or the name of a model fastembed knows",
    )
    name: str | None = Field(None, description="fastembed's name for a model folder's model (its pooling); "
                             "by default the current model's")  # fmt: skip
    cancel: bool = Field(False, description="give up the switch in progress instead")


class ModelRemoved(Result):
    removed: bool
    managed: str | None
    note: str


@operation("model_status", NoParams, ModelStatus)
def model_status(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """The embedding model: ``{name, model_id, available, source (path | recorded | managed | cache), path, int8
    (the int8 copy made from the downloaded model is in use), reason (why semantic search is off), offline,
    fetchable (a download may help), recorded (the model the store's vectors were made with), managed (the
    downloaded copy's folder), switch (a change of model in progress: {requested, name, model_id, path, events,
    done, error}, else null), download {state (idle | downloading | ready | failed), bytes, total, error, attempts,
    retry_in}}``."""
    return {**engine.memory.model_status(), "download": engine.model_download()}


@operation("model_fetch", NoParams, ModelStatus, Priority.CONNECTION, progress=True)
def model_fetch(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Download the embedding model into the data directory now (by its name, through fastembed: ``HF_ENDPOINT``
    names a mirror) and take it into use; progress in bytes. Refused when offline or when a model folder is set
    explicitly. Then as ``model_status``."""
    return engine.fetch_model(progress)


@operation("model_use", ModelUseParams, ModelStatus, Priority.CONNECTION, writes=True, progress=True)
def model_use(engine: Engine, p: ModelUseParams, progress: Progress) -> dict[str, Any]:
    """Embed every event again under another model (``target``), then use it. The memory service does it in the
    background while the current model keeps serving searches (``switch`` in the answer shows how far it got); a
    store opened in-process does it now, with progress in events. ``cancel`` gives a switch up. Then as
    ``model_status``."""
    return engine.cancel_switch() if p.cancel else engine.switch_model(p.target, p.name, progress)


@operation("model_remove", NoParams, ModelRemoved, writes=True)
def model_remove(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Delete the downloaded copy of the embedding model: ``{removed, managed, note}``. Stored vectors stay;
    semantic search is off until a model is there again."""
    return engine.remove_model()
