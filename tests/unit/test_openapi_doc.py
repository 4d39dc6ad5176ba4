"""docs/openapi.json is generated from the contract (python -m claude_memory.web.openapi): stale is a failure."""

from __future__ import annotations

import json
from typing import Any

from claude_memory.service.operations import registry
from claude_memory.web import api, openapi


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


def test_the_checked_in_schema_is_current() -> None:
    assert openapi.DOC.read_text(encoding="utf-8") == openapi.text(registry()), (
        "docs/openapi.json is stale: run python -m claude_memory.web.openapi"
    )
    assert openapi.main(["--check"]) == 0


def test_every_published_operation_has_a_path_and_every_reference_resolves() -> None:
    doc = json.loads(openapi.text(registry()))
    assert doc["openapi"].startswith("3.1")
    for op in api.published(registry()):
        item = doc["paths"][f"/api/v1/{op.name}"]
        assert set(item) == {m.lower() for m in api.methods(op)}
        assert item["post"]["summary"] == op.summary
    for ref in refs(doc):
        section, name = ref.removeprefix("#/components/").split("/")
        assert name in doc["components"][section], ref
