"""docs/service-api.md's operations part is generated from the contract's registry and must not drift; every
operation is declared completely."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter

from claude_memory.service import reference
from claude_memory.service.contract import Params, Registry, declared, operation
from claude_memory.service.operations import FEATURES, registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "service-api.md"


def test_the_reference_is_generated_from_the_registry() -> None:
    current = DOC.read_text(encoding="utf-8")
    assert reference.render(current, registry()) == current, (
        "docs/service-api.md is stale: run `.venv/bin/python -m claude_memory.service.reference`"
    )


def test_every_operation_is_documented_once() -> None:
    documented = re.findall(r"^### `([a-z_]+)`$", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    assert documented == [op.name for op in registry()]
    assert len(documented) == len(set(documented)) >= 20


def test_a_change_to_a_model_makes_the_reference_stale() -> None:
    class Extra(Params):
        depth: int = 3

    @operation("extra_op", Extra, int)
    def extra(engine: object, p: Extra, progress: object) -> int:
        """A new operation."""
        return p.depth

    current = DOC.read_text(encoding="utf-8")
    grown = Registry([*registry(), *declared(type("M", (), {"extra": extra}))])
    assert reference.render(current, grown) != current
    assert "### `extra_op`" in reference.render(current, grown)


@pytest.mark.parametrize("op", list(registry()), ids=lambda op: op.name)
def test_each_operation_is_declared_completely(op: object) -> None:
    from claude_memory.service.contract import Operation

    assert isinstance(op, Operation)
    assert re.fullmatch(r"[a-z_]+", op.name)
    assert op.summary and op.summary[0].isupper(), f"{op.name} needs a docstring: its summary"
    assert issubclass(op.params, Params) and op.params.model_config.get("extra") == "forbid"
    TypeAdapter(op.result)  # a type pydantic can check answers against
    for info in op.params.model_fields.values():
        assert info.description, f"{op.name}: every parameter says what it means"


def test_operations_are_declared_once_across_the_feature_modules() -> None:
    names = [op.name for module in FEATURES for op in declared(module)]
    assert len(names) == len(set(names)) == len(registry())
    with pytest.raises(ValueError, match="declared twice"):
        Registry([*registry(), *registry()])


def test_result_models_are_models_or_containers_of_them() -> None:
    for op in registry():
        assert reference._models(op.result) or op.result in (int,), op.name
        for model in reference._models(op.result):
            assert issubclass(model, BaseModel)
