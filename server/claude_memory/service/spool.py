"""Draining the hook spool: captures the hooks appended (``claude_memory.client.spool_append``).

A drain moves the spool file aside under the spool lock (so no hook is writing into it), then applies
the batch line by line and deletes it only after every line is applied. A service killed half-way finds
the batch at its next start and applies it again; captures are idempotent, so nothing is stored twice.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from claude_memory.core.paths import RuntimePaths
from claude_memory.service.capture import HookPayload

log = logging.getLogger("claude_memory.service")
BATCH_GLOB = "batch-*.jsonl"


@dataclass
class DrainReport:
    applied: int = 0
    rejected: int = 0  # lines that are not a capture: logged with the reason, then dropped
    batches: int = 0
    notes: list[str] = field(default_factory=list)


def spool_state(paths: RuntimePaths) -> dict[str, int]:
    """Hook captures waiting to be applied: bytes in the spool file, and batches set aside."""
    spool = paths.spool
    waiting = sum(1 for _ in paths.spool_dir.glob(BATCH_GLOB)) if paths.spool_dir.is_dir() else 0
    return {"bytes": spool.stat().st_size if spool.exists() else 0, "batches_waiting": waiting}


def take_batches(paths: RuntimePaths) -> list[Path]:
    """Move the current spool aside as a new batch; return every batch waiting, oldest first."""
    spool_dir = paths.spool_dir
    if not spool_dir.is_dir():
        return []
    if paths.spool.exists() and paths.spool.stat().st_size > 0:
        fd = os.open(paths.spool_lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if paths.spool.exists() and paths.spool.stat().st_size > 0:
                paths.spool.rename(spool_dir / f"batch-{time.time_ns():020d}.jsonl")
        finally:
            os.close(fd)
    return sorted(spool_dir.glob(BATCH_GLOB))


def read_batch(path: Path) -> Iterator[tuple[int, HookPayload | None, str | None]]:
    """(line number, capture, why it was rejected) for each non-empty line."""
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):
                # A hook killed mid-write: the line is incomplete, and its hook exited without success.
                yield line_no, None, "the line is incomplete (its hook was killed while writing it)"
                continue
            try:
                record: Any = json.loads(raw)
                payload = HookPayload.model_validate(record.get("payload") if isinstance(record, dict) else None)
            except (ValueError, ValidationError) as exc:
                yield line_no, None, f"not a hook capture ({str(exc).splitlines()[0]})"
                continue
            yield line_no, payload, None


def drain(paths: RuntimePaths, apply: Callable[[HookPayload], Any]) -> DrainReport:
    """Apply every waiting capture with ``apply``. A malformed line, or one whose capture fails, is logged
    and dropped: its transcript is read again by the periodic scan, so nothing is lost, and one bad line
    never holds up the spool. A batch is deleted only after all its lines were handled."""
    report = DrainReport()
    for batch in take_batches(paths):
        for line_no, payload, problem in read_batch(batch):
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
