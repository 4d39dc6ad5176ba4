"""Every operation of the engine contract (:mod:`claude_memory.service.contract`), one module per feature.

To add an operation: declare its params and result models and its function with ``@operation`` in the
feature's module here (or a new module, listed in :data:`FEATURES`), using engine methods; then add
presentation to a face only where the face shows it its own way (a CLI command, an MCP tool). The service,
the in-process transport and the generated reference pick it up from :func:`registry`.
"""

from __future__ import annotations

from claude_memory.service.contract import Registry, declared
from claude_memory.service.operations import (
    browse,
    disclosure,
    files,
    forget,
    hooks,
    learning,
    lifecycle,
    model,
    provenance,
    search,
    tasks,
)

FEATURES = (search, disclosure, browse, files, provenance, tasks, learning, forget, lifecycle, model, hooks)


def registry() -> Registry:
    return Registry(op for module in FEATURES for op in declared(module))
