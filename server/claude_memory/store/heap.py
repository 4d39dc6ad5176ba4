"""Handing freed memory back to the system after a burst of temporary allocations.

glibc keeps the heap a process has freed, per thread arena, for reuse; after a load or a batch of
embeddings that is hundreds of megabytes the process no longer uses but still holds (ONNX Runtime's
threads and Arrow's allocator leave the most). Measured: 300 chunks through the embedding model left the
process ~320 MB above the model's own size until the heap was trimmed (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import ctypes

import pyarrow as pa


def release_freed_memory() -> None:
    """Give freed heap back to the system: Arrow's unused pool, then glibc's arenas (a no-op without glibc).
    A few milliseconds; call it after bulk work, not on a query's path."""
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim this way
        ctypes.CDLL("libc.so.6").malloc_trim(0)
