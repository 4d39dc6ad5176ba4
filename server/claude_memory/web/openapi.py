"""The HTTP API's OpenAPI 3.1 schema, generated from the engine contract (the operations :func:`api.published`
serves, their parameter and result models), served at ``/api/v1/openapi.json`` and kept in
``docs/openapi.json`` so a change to the API shows in review (a test fails when the file is stale):

    python -m claude_memory.web.openapi          # rewrite docs/openapi.json
    python -m claude_memory.web.openapi --check  # exit 1 if it is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, TypeAdapter

from claude_memory import __version__
from claude_memory.service.contract import Operation, Registry
from claude_memory.web.api import PREFIX, methods, published

DOC: Final = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"
REF: Final = "#/components/schemas/{model}"

ERROR: Final = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "bad_request, not_found, busy, unavailable, store, ..."},
                "message": {"type": "string", "description": "One plain sentence."},
            },
        }
    },
}


ERRORS: Final = {
    "400": "A parameter is wrong.",
    "401": "No token, or a wrong one.",
    "403": "Another site's request, or a change without the CSRF token.",
    "404": "No such memory, session or task.",
    "503": "The memory service is busy or not answering.",
}


class _Schemas:
    """The components' schemas, each model once (a second, different model of the same name is an error)."""

    def __init__(self) -> None:
        self.found: dict[str, Any] = {"Error": ERROR}

    def add(self, name: str, body: dict[str, Any]) -> None:
        if self.found.setdefault(name, body) != body:
            raise ValueError(f"Two different models are named {name!r}; the OpenAPI schema needs distinct names.")

    def ref(self, annotation: Any) -> dict[str, Any]:
        """A reference to the model (or the schema of a type such as ``list[Model]``), its models kept once."""
        schema = TypeAdapter(annotation).json_schema(ref_template=REF)
        for name, body in schema.pop("$defs", {}).items():
            self.add(name, body)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            self.add(annotation.__name__, schema)
            return {"$ref": REF.format(model=annotation.__name__)}
        return schema


def _operation(op: Operation[Any], method: str, schemas: _Schemas) -> dict[str, Any]:
    params = schemas.ref(op.params)
    result = schemas.ref(op.result)
    out: dict[str, Any] = {
        "operationId": op.name if method == "POST" else f"{op.name}_get",
        "summary": op.summary,
        "tags": ["changes the store" if op.writes else "reads"],
    }
    if method == "GET":
        model = schemas.found[op.params.__name__]
        out["parameters"] = [
            {"name": name, "in": "query", "required": name in model.get("required", ()), "schema": field}
            for name, field in model.get("properties", {}).items()
        ]
    else:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": params}}}
    out["responses"] = {
        "200": {"description": "The operation's result.", "content": {"application/json": {"schema": result}}},
        **{status: {"$ref": f"#/components/responses/{status}"} for status in ERRORS},
    }
    return out


def schema(ops: Registry) -> dict[str, Any]:
    schemas = _Schemas()
    paths: dict[str, Any] = {}
    for op in published(ops):
        paths[f"{PREFIX}/{op.name}"] = {m.lower(): _operation(op, m, schemas) for m in methods(op)}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "claude-memory",
            "version": __version__,
            "description": "The memory's operations over HTTP on the loopback address (docs/web.md).",
        },
        "servers": [{"url": "http://127.0.0.1:37777"}],
        "components": {
            "schemas": dict(sorted(schemas.found.items())),
            "responses": {
                status: {
                    "description": meaning,
                    "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}},
                }
                for status, meaning in ERRORS.items()
            },
            "securitySchemes": {
                "token": {"type": "http", "scheme": "bearer", "description": "The data directory's web-token."},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "claude_memory_web"},
            },
        },
        "security": [{"token": []}, {"cookie": []}],
        "paths": paths,
    }


def text(ops: Registry) -> str:
    return json.dumps(schema(ops), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    from claude_memory.service.operations import registry
    from claude_memory.service.reference import write_or_check

    return write_or_check(DOC, text(registry()), "claude_memory.web.openapi", argv)


if __name__ == "__main__":
    sys.exit(main())
