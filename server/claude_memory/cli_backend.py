"""Where a CLI command's request goes: to the memory service when one answers on the data directory's
socket (it owns the store then, and nothing else may open it), else to a :class:`Memory` opened in this
process. Both backends answer with the same JSON-able dicts (the shapes of the service API), so every
command renders one way whichever answered. The CLI never starts a service.
"""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal

import duckdb

from claude_memory.client import ServiceClient, ServiceError, ServiceUnavailable
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.memory import ForgetSelector, Memory
from claude_memory.service.projects import normalise_project_arg
from claude_memory.service.spool import spool_state
from claude_memory.store.db import StoreBusyError, StoreError
from claude_memory.store.keyword import KeywordFilters

PING_TIMEOUT: Final = 1.0  # seconds: a live service answers a ping in milliseconds
CALL_TIMEOUT: Final = 600.0  # a query may wait behind a long task (a big import) in the service's worker
LONG_TIMEOUT: Final = 24 * 3600.0  # import and reindex
EMBED_POLL: Final = 2.0  # seconds between looks at the embedding queue (each look pauses its embedding 0.2 s)
EMBED_STALL: Final = 120.0  # stop waiting for embeddings when the queue has not moved for this long

Kind = Literal["failure", "busy", "nothing"]
Advance = Callable[[int], None]
# (what, total) -> a context giving the function that advances a progress display; what is "import"
# (total in bytes) or "embed" (total in events).
Meter = Callable[[str, int], AbstractContextManager[Advance]]


class BackendError(Exception):
    """A command cannot go on; the message is one plain sentence, ``kind`` picks the exit code."""

    def __init__(self, message: str, kind: Kind = "failure") -> None:
        super().__init__(message)
        self.kind: Kind = kind


class NoSuchMemory(BackendError):
    """A reference (citation or event id) names no stored event."""

    def __init__(self, ref: str, message: str | None = None) -> None:
        super().__init__(message or f"No memory {ref}.", "nothing")
        self.ref = ref


class ServiceLost(BackendError):
    """The service answered the ping, then stopped answering."""

    def __init__(self) -> None:
        super().__init__(
            "The memory service stopped answering in the middle of this command; run it again (with no service "
            "running it runs in-process)."
        )


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    filters: KeywordFilters  # project already normalised
    limit: int
    mode: str


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    refs: tuple[str, ...] = ()
    session: str | None = None
    project: str | None = None  # already normalised
    before: datetime | None = None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Backend(ABC):
    """What the CLI asks of the store. Every answer is plain JSON data."""

    data_dir: Path
    service: dict[str, Any] | None = None  # the service's ping answer when requests go to it
    warnings: list[str]

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def search(self, q: Query) -> dict[str, Any]:
        """``{"results": [hit...], "meta": {...}}``."""

    @abstractmethod
    def smart_search(self, q: Query, budget: int) -> dict[str, Any]:
        """The smart search JSON plus its prompt text under ``"text"``."""

    @abstractmethod
    def details(self, ref: str, context: int) -> dict[str, Any] | None:
        """One event in full (counted as a use of its citation), or None."""

    @abstractmethod
    def timeline(self, refs: list[str], before: int, after: int) -> dict[str, Any]: ...

    @abstractmethod
    def history(self, filters: KeywordFilters, limit: int) -> list[dict[str, Any]]: ...

    @abstractmethod
    def sessions(self, project: str | None, limit: int) -> list[dict[str, Any]]: ...

    @abstractmethod
    def stats(self) -> dict[str, Any]: ...

    @abstractmethod
    def status(self) -> dict[str, Any]:
        """``store`` (the data directory), ``events``, the embedding status keys, then ``service`` (None
        in-process), ``watcher`` (None in-process), ``spool`` and ``warnings``."""

    @abstractmethod
    def reindex(self) -> int: ...

    @abstractmethod
    def forget(self, request: ForgetRequest, *, dry_run: bool) -> int:
        """How many events match (dry run) or were forgotten. Raises NoSuchMemory for an unknown ref."""

    @abstractmethod
    def import_history(
        self, home: Path, project: str | None, *, settle_seconds: float, meter: Meter | None
    ) -> dict[str, Any] | None:
        """The import report, or None when ``project`` has no transcripts under ``home``."""

    @abstractmethod
    def embed_new(self, meter: Meter | None) -> int:
        """Wait until what the import queued is embedded; how many events were."""

    @abstractmethod
    def semantics_notes(self) -> list[str]:
        """A sentence for the import report when semantic search is off."""


def _status(store: Path, events: int, embedding: dict[str, Any], paths: RuntimePaths, **service: Any) -> dict[str, Any]:
    return {
        "store": str(store),
        "events": events,
        **embedding,
        "service": service.get("service"),
        "watcher": service.get("watcher"),
        "spool": service.get("spool") or spool_state(paths),
        "warnings": list(service.get("warnings") or []),
    }


# ---------------------------------------------------------------------- in-process


class LocalBackend(Backend):
    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.data_dir = memory.data_dir
        self.warnings = list(memory.warnings)

    def close(self) -> None:
        self.memory.close()

    def search(self, q: Query) -> dict[str, Any]:
        hits, meta = self.memory.search(q.text, q.filters, q.limit, q.mode)
        return {"results": [h.to_json() for h in hits], "meta": meta}

    def smart_search(self, q: Query, budget: int) -> dict[str, Any]:
        found = self.memory.smart_search(q.text, q.filters, q.limit, q.mode, budget=budget, via="cli")
        return {**found.to_json(), "text": found.text()}

    def details(self, ref: str, context: int) -> dict[str, Any] | None:
        return self.memory.show(ref, context=context, via="cli")

    def timeline(self, refs: list[str], before: int, after: int) -> dict[str, Any]:
        return self.memory.timeline(refs, before=before, after=after).to_json()

    def history(self, filters: KeywordFilters, limit: int) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.memory.history(filters, limit)]

    def sessions(self, project: str | None, limit: int) -> list[dict[str, Any]]:
        return self.memory.sessions(project, limit)

    def stats(self) -> dict[str, Any]:
        return self.memory.stats()

    def status(self) -> dict[str, Any]:
        memory = self.memory
        embedding = memory.embedding_status()
        paths = RuntimePaths(self.data_dir)
        return _status(self.data_dir, memory.stats()["events"], embedding, paths, warnings=memory.warnings)

    def reindex(self) -> int:
        return self.memory.reindex()

    def forget(self, request: ForgetRequest, *, dry_run: bool) -> int:
        ids = []
        for ref in request.refs:
            found = self.memory.resolve(ref)
            if found is None:
                raise NoSuchMemory(ref)
            ids.append(found.id)
        selector = ForgetSelector(tuple(ids), request.session, request.project, request.before)
        return self.memory.count_matching(selector) if dry_run else self.memory.forget(selector)

    def import_history(
        self, home: Path, project: str | None, *, settle_seconds: float, meter: Meter | None
    ) -> dict[str, Any] | None:
        plan = self.memory.plan_import(home, project, settle_seconds=settle_seconds)
        if not plan.found.files and project:
            return None
        if meter is None:
            return plan.run().to_json()
        with meter("import", plan.pending_bytes()) as advance:
            return plan.run(advance).to_json()

    def embed_new(self, meter: Meter | None) -> int:
        memory = self.memory
        if not memory.embedder.available:
            return 0
        pending = memory.embedding_status()["pending"] if meter is not None else 0
        if meter is None or not pending:
            return memory.embed_pending()
        with meter("embed", pending) as advance:
            return memory.embed_pending(advance)

    def semantics_notes(self) -> list[str]:
        return self.memory.warnings_for_semantics()


# ---------------------------------------------------------------------- the service


def _filter_params(f: KeywordFilters) -> dict[str, Any]:
    return {
        "project": f.project,
        "session": f.session_id,
        "types": list(f.types),
        "since": f.since.isoformat() if f.since else None,
        "until": f.until.isoformat() if f.until else None,
    }


def _query_params(q: Query) -> dict[str, Any]:
    return {**_filter_params(q.filters), "query": q.text, "limit": q.limit, "mode": q.mode}


class RemoteBackend(Backend):
    def __init__(self, data_dir: Path, client: ServiceClient, info: dict[str, Any]) -> None:
        self.data_dir = data_dir
        self.client = client
        self.service = info
        self.warnings = []

    def close(self) -> None:
        self.client.close()

    def _call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = CALL_TIMEOUT) -> Any:
        try:
            return self.client.call(method, params, timeout=timeout)
        except ServiceUnavailable:
            raise ServiceLost() from None
        except ServiceError as exc:
            raise BackendError(str(exc), "nothing" if exc.code == "not_found" else "failure") from None

    def search(self, q: Query) -> dict[str, Any]:
        result: dict[str, Any] = self._call("search", _query_params(q))
        return result

    def smart_search(self, q: Query, budget: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("smart_search", {**_query_params(q), "budget": budget, "via": "cli"})
        return result

    def details(self, ref: str, context: int) -> dict[str, Any] | None:
        found = self._call("details", {"refs": [ref], "context": context, "via": "cli"})["details"]
        return dict(found[0]) if found else None

    def timeline(self, refs: list[str], before: int, after: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("timeline", {"refs": refs, "before": before, "after": after})
        return result

    def history(self, filters: KeywordFilters, limit: int) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._call("history", {**_filter_params(filters), "limit": limit})
        return result

    def sessions(self, project: str | None, limit: int) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._call("sessions", {"project": project, "limit": limit})
        return result

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("stats")
        return result

    def status(self) -> dict[str, Any]:
        s = self._call("status")
        paths = RuntimePaths(self.data_dir)
        return _status(
            self.data_dir,
            s["store"]["events"],
            s["embedding"],
            paths,
            service=s["service"],
            watcher=s["watcher"],
            spool=s["spool"],
            warnings=s["warnings"],
        )

    def reindex(self) -> int:
        return int(self._call("reindex", timeout=LONG_TIMEOUT)["vectors"])

    def forget(self, request: ForgetRequest, *, dry_run: bool) -> int:
        params = {
            "refs": list(request.refs),
            "session": request.session,
            "project": request.project,
            "before": request.before.isoformat() if request.before else None,
            "dry_run": dry_run,
        }
        try:
            result = self._call("forget", params)
        except BackendError as exc:
            if exc.kind != "nothing":
                raise
            # The service stops at the first reference it cannot resolve and names it: "No memory <ref> (...".
            ref = next((r for r in request.refs if str(exc).startswith(f"No memory {r} ")), None)
            raise NoSuchMemory(ref or "", str(exc)) from None
        return int(result["matching"] if dry_run else result["forgotten"])

    def import_history(
        self, home: Path, project: str | None, *, settle_seconds: float, meter: Meter | None
    ) -> dict[str, Any] | None:
        """The service imports from its own Claude Code directory with its own settle time (it captures
        live, so a transcript quiet for a few seconds is finished for now); ``settle_seconds`` does not
        apply. Asking it to import another directory is an error."""
        watched = Path(self._call("status")["watcher"]["root"])
        if _same_dir(watched, home / "projects") is False:
            raise BackendError(
                f"The running memory service imports from {watched.parent}, not {home}; stop it with "
                "`claude-memory stop` to import from there."
            )
        wanted = normalise_project_arg(project) if project else None  # the service resolves from another cwd
        report: dict[str, Any] = self._call("import", {"project": wanted}, timeout=LONG_TIMEOUT)
        if project and not report["files"]["found"]:
            return None
        report["events"].setdefault("embedded", 0)
        return report

    def _embedding(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("status")["embedding"]
        return result

    def embed_new(self, meter: Meter | None) -> int:
        """The service embeds in the background: wait for its queue to empty (or to stop moving); how many
        events left the queue meanwhile."""
        state = self._embedding()
        if not state["available"] or not state["pending"]:
            return 0
        pending, embedded, moved = int(state["pending"]), 0, time.monotonic()
        display = meter("embed", pending) if meter is not None else contextlib.nullcontext(_ignore)
        with display as advance:
            while pending and time.monotonic() - moved < EMBED_STALL:
                time.sleep(EMBED_POLL if embedded else EMBED_POLL / 4)
                now_pending = int(self._embedding()["pending"])
                if now_pending != pending:
                    moved = time.monotonic()
                if now_pending < pending:
                    embedded += pending - now_pending
                    advance(pending - now_pending)
                pending = now_pending
        return embedded

    def semantics_notes(self) -> list[str]:
        state = self._embedding()
        return [] if state["available"] else [state.get("reason") or "Semantic search is off."]


def _ignore(_: int) -> None:
    return None


def _same_dir(a: Path, b: Path) -> bool | None:
    """Whether two paths name the same directory; None when that cannot be told."""
    try:
        return a.expanduser().resolve() == b.expanduser().resolve()
    except OSError:
        return None


# ---------------------------------------------------------------------- choosing


def _open_memory(data_dir: Path) -> Memory:
    try:
        return Memory(data_dir)
    except StoreBusyError as exc:
        raise BackendError(str(exc), "busy") from None
    except StoreError as exc:
        raise BackendError(str(exc)) from None
    except duckdb.Error as exc:
        raise BackendError(f"The memory store in {data_dir} could not be prepared: {first_line(exc)}") from None
    except OSError as exc:
        raise BackendError(f"Cannot use {data_dir} as the data directory: {exc.strerror or first_line(exc)}.") from None


def open_backend(data_dir: Path) -> Backend:
    """The service when one answers a ping within a second, else the store opened in this process."""
    client = ServiceClient(data_dir, timeout=PING_TIMEOUT)
    try:
        info = client.ping(timeout=PING_TIMEOUT)
    except (ServiceUnavailable, ServiceError):
        client.close()
        return LocalBackend(_open_memory(data_dir))
    return RemoteBackend(data_dir, client, info)


@contextmanager
def connect(data_dir: Path) -> Iterator[Backend]:
    """A backend for the length of one command; failures of the store come out as BackendError."""
    backend = open_backend(data_dir)
    try:
        yield backend
    except StoreError as exc:
        raise BackendError(str(exc)) from None
    except duckdb.Error as exc:
        raise BackendError(f"The memory store failed: {first_line(exc)}") from None
    except OSError as exc:
        raise BackendError(
            f"{exc.strerror or first_line(exc)}{f' ({exc.filename})' if exc.filename else ''}."
        ) from None
    finally:
        backend.close()
