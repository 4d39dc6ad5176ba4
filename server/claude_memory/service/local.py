"""The engine in the caller's own process: a store opened here (:class:`Memory`), for when no memory service
runs (the CLI then works on the store itself; nothing else may open it meanwhile). Implements what
:class:`~claude_memory.service.contract.Engine` asks of a host; the operations are the service's own."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_memory import wire
from claude_memory.config import claude_home as resolve_claude_home
from claude_memory.core.paths import RuntimePaths
from claude_memory.service import model_switch
from claude_memory.service.capture import Capture, HookPayload
from claude_memory.service.memory import Memory
from claude_memory.service.model_fetch import ModelFetcher, remove_model
from claude_memory.service.recall import ContextParams, Recaller

if TYPE_CHECKING:
    from claude_memory.wire import Progress

SWITCH_BATCH = 256  # events per step of a model switch done in the foreground
DEFAULT_SETTLE_SECONDS = 60.0  # `import --settle-seconds`: a transcript untouched this long is finished for now


class LocalEngine:
    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.paths = RuntimePaths(memory.data_dir)
        self.started_at = datetime.now(UTC)
        self.fetcher = ModelFetcher(memory.data_dir, memory.embedder.model_name, lambda: None)

    def close(self) -> None:
        self.memory.close()

    def host_status(self) -> dict[str, Any]:
        return {
            "service": None,
            "watcher": None,
            "spool": wire.spool_state(self.paths),
            "warnings": list(self.memory.warnings),
        }

    def import_history(
        self, claude_home: str | None, project: str | None, settle_seconds: float | None, progress: Progress
    ) -> dict[str, Any]:
        home = resolve_claude_home(Path(claude_home) if claude_home else None)
        settle = DEFAULT_SETTLE_SECONDS if settle_seconds is None else settle_seconds
        plan = self.memory.plan_import(home, project, settle_seconds=settle)
        progress.start("import", plan.pending_bytes())
        return plan.run(progress.advance).to_json()

    def wait_embedded(self, progress: Progress) -> int:
        """Embed what is queued, here and now (a missing model is fetched first, when allowed)."""
        memory = self.memory
        if not memory.model_ready() and self.fetcher.ensure(memory.embedder.fetchable, progress):
            memory.model_changed()
        if not memory.model_ready():
            return 0
        pending = memory.embedding_status()["pending"]
        if pending:
            progress.start("embed", pending)
        return memory.embed_pending(progress.advance)

    def semantics_notes(self) -> list[str]:
        notes = self.memory.warnings_for_semantics()
        return self.fetcher.explain(notes)

    def model_download(self) -> dict[str, Any]:
        return self.fetcher.status()

    def fetch_model(self, progress: Progress) -> dict[str, Any]:
        refusal = self.memory.embedder.fetch_refusal()
        if refusal:
            raise ValueError(refusal)
        self.fetcher.fetch(progress)
        self.memory.model_changed()
        return self._model_state()

    def switch_model(self, requested: str, name: str | None, progress: Progress) -> dict[str, Any]:
        """No service to do it in the background: the whole switch, now, with progress in events."""
        switch = self.memory.switch
        state = switch.start(model_switch.resolve(self.memory, requested, name))
        progress.start("embed", int(state["events"]))
        shown = int(state["done"])
        while switch.step(SWITCH_BATCH):
            done = int((switch.status() or {"done": state["events"]})["done"])
            progress.advance(done - shown)
            shown = done
        if switch.active:  # a batch failed: its sentence
            raise ValueError((switch.status() or {}).get("error") or "The model switch stopped.")
        return self._model_state()

    def cancel_switch(self) -> dict[str, Any]:
        self.memory.switch.cancel()
        return self._model_state()

    def _model_state(self) -> dict[str, Any]:
        return {**self.memory.model_status(), "download": self.fetcher.status()}

    def remove_model(self) -> dict[str, Any]:
        return remove_model(self.memory, self.fetcher)

    def hook(self, event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        raise ValueError("Hooks are answered only by the memory service.")

    def context(self, payload: dict[str, Any], budget: int, *, counted: bool = True) -> dict[str, Any]:
        return Recaller(self.memory).context(ContextParams(payload=HookPayload.model_validate(payload), budget=budget))

    def capture(self, payload: dict[str, Any]) -> dict[str, Any]:
        return Capture(self.memory, resolve_claude_home()).apply(HookPayload.model_validate(payload))

    def drain(self) -> None:
        raise ValueError("The hook spool is applied only by the memory service.")

    def shutdown(self) -> None:
        raise ValueError("No memory service runs to shut down.")
