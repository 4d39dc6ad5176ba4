"""The prompt hook's context on the project's own fixture history, with the real model: silent on prompts no
memory answers (bench/data/irrelevant_prompts.jsonl and irrelevant_first_person.jsonl, written for the benchmark),
and still there for a question about what an earlier session did."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_memory.service.capture import HookPayload
from claude_memory.service.memory import Memory
from claude_memory.service.recall import ContextParams, Recaller
from support import own_fixtures as fx

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def irrelevant() -> list[dict[str, str]]:
    return [
        json.loads(line)
        for name in ("irrelevant_prompts.jsonl", "irrelevant_first_person.jsonl")
        for line in (DATA / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


@pytest.fixture()
def recaller(tmp_path: Path, model_dir: Path) -> Iterator[Recaller]:
    with Memory(tmp_path / "data") as memory:
        memory.plan_import(fx.CLAUDE_HOME, None, settle_seconds=0).run()
        assert memory.embed_pending() > 0
        yield Recaller(memory)


def context(recaller: Recaller, prompt: str, cwd: str) -> dict[str, object]:
    payload = {"session_id": "asking", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    return recaller.context(ContextParams(payload=HookPayload.model_validate(payload)))


def test_prompts_no_memory_answers_get_nothing_and_questions_still_get_their_memories(recaller: Recaller) -> None:
    prompts = irrelevant()
    assert len(prompts) >= 150
    loud = []
    for i, row in enumerate(prompts):
        answer = context(recaller, row["prompt"], fx.PROJECTS[i % len(fx.PROJECTS)])
        if answer["additional_context"]:
            loud.append(row["prompt"])
        else:
            assert str(answer["reason"]).endswith(".") and answer["citations"] == []
    assert len(loud) <= 0.05 * len(prompts), loud

    answer = context(recaller, "When did we add apply_discount to the cart?", fx.SHOP)
    text = str(answer["additional_context"])
    assert "apply_discount" in text and answer["citations"], answer.get("reason")
    assert len(text) <= 1_500
    assert context(recaller, "ok do it", fx.SHOP)["reason"] == (
        "The prompt names no topic to recall (an acknowledgement, a greeting or a go-ahead)."
    )


def test_without_a_model_the_same_prompts_get_nothing_and_the_question_its_memories(tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.plan_import(fx.CLAUDE_HOME, None, settle_seconds=0).run()
        assert not memory.embedder.available
        recaller = Recaller(memory)
        prompts = irrelevant()
        loud = [
            row["prompt"]
            for i, row in enumerate(prompts)
            if context(recaller, row["prompt"], fx.PROJECTS[i % len(fx.PROJECTS)])["additional_context"]
        ]
        assert len(loud) <= 0.05 * len(prompts), loud
        answer = context(recaller, "When did we add apply_discount to the cart?", fx.SHOP)
        assert "apply_discount" in str(answer["additional_context"]), answer.get("reason")
