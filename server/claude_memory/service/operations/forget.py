"""Forgetting for good: by citation, session, project or date (``forget``), with a dry run that counts."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory.core.filters import ForgetSelector
from claude_memory.service.contract import Engine, NotFound, Params, Result, operation
from claude_memory.service.operations.common import project_arg

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class ForgetParams(Params):
    refs: list[str] = Field(default_factory=list, max_length=10_000, description="Citations or event ids.")
    session: str | None = Field(default=None, description="A whole session.")
    project: str | None = Field(default=None, description="A whole project (a path).")
    before: datetime | None = Field(default=None, description="Everything before this time (ISO).")
    dry_run: bool = Field(default=False, description="Only count what would be forgotten.")


class Forgotten(Result):
    matching: int
    forgotten: int


@operation("forget", ForgetParams, Forgotten, writes=True)
def forget(engine: Engine, p: ForgetParams, progress: Progress) -> dict[str, Any]:
    """Remove memories from the events, the keyword index and the vectors (criteria combine with AND);
    ``dry_run`` only counts. An unknown citation is a ``not_found`` error naming it (``ref``)."""
    memory = engine.memory
    ids: list[int] = []
    for ref in p.refs:
        event = memory.resolve(ref)
        if event is None:
            raise NotFound(f"No memory {ref} (it may have been forgotten already).", ref=ref)
        ids.append(event.id)
    selector = ForgetSelector(
        event_ids=tuple(ids), session_id=p.session, project=project_arg(p.project), before=p.before
    )
    if selector.is_empty():
        raise ValueError("Say what to forget: refs, session, project or before.")
    if p.dry_run:
        return {"matching": memory.count_matching(selector), "forgotten": 0}
    count = memory.forget(selector)
    return {"matching": count, "forgotten": count}
