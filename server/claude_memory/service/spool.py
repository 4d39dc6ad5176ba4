"""Draining the hook spool: captures the hooks appended (the spool's line format, its writer and its reader
are in :mod:`claude_memory.wire`).

A drain moves the spool file aside under the spool lock (so no hook is writing into it), then applies
the batch line by line and deletes it only after every line is applied. A service killed half-way finds
the batch at its next start and applies it again; captures are idempotent, so nothing is stored twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from claude_memory import wire
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.capture import HookPayload

log = logging.getLogger("claude_memory.service")


@dataclass
class DrainReport:
    applied: int = 0
    rejected: int = 0  # lines that are not a capture: logged with the reason, then dropped
    batches: int = 0
    notes: list[str] = field(default_factory=list)


def drain(paths: RuntimePaths, apply: Callable[[HookPayload], Any]) -> DrainReport:
    """Apply every waiting capture with ``apply``. A malformed line, or one whose capture fails, is logged
    and dropped: its transcript is read again by the periodic scan, so nothing is lost, and one bad line
    never holds up the spool. A batch is deleted only after all its lines were handled."""
    report = DrainReport()
    for batch in wire.take_batches(paths):
        for line_no, fields, problem in wire.read_batch(batch):
            payload: HookPayload | None = None
            if fields is not None:
                try:
                    payload = HookPayload.model_validate(fields)
                except ValidationError as exc:
                    problem = f"not a hook capture ({str(exc).splitlines()[0]})"
            if payload is None:
                report.rejected += 1
                log.warning("Spool %s line %d dropped: %s.", batch.name, line_no, problem)
                continue
            try:
                apply(payload)
            except Exception:  # the scan reads the transcript again later; never wedge the spool on one line
                log.exception("Spool %s line %d could not be applied; the transcript scan will catch up.",
                              batch.name, line_no)  # fmt: skip
                report.rejected += 1
                continue
            report.applied += 1
        batch.unlink()
        report.batches += 1
    return report
