"""The privacy corpus (tests/support/privacy_corpus.py) planted in transcripts, imported through the real
importer: every credential masked wherever a session can hold it (prompt, answer, tool input, tool output,
a file path, the session's title, and across the 20,000-character clipping boundary of a tool output), no
12-character piece of one on disk (byte scan; the store is written uncompressed), every near-miss kept as it
was, and the masks counted per kind in the import report and in `stats`, never with their values."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from claude_memory.core.filters import EventFilters
from claude_memory.service.memory import Memory
from support.privacy_corpus import NEAR_MISSES, TRUE_CASES

CLIP = 20_000  # Settings.max_tool_output_chars
CWD = "/nonexistent/corpus"


def _entry(session: str, n: int, kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": f"{session}-{n}",
        "sessionId": session,
        "cwd": CWD,
        "timestamp": f"2026-05-01T10:00:{n:02d}.000Z",
        **extra,
    }


def _session(i: int, example: str, secret: str) -> list[dict[str, Any]]:
    """One session holding ``example`` in every place (a file path holds a bare token: a path cannot carry the
    name or header that makes a value a credential); ``canary<i>-<n>`` beside each proves the text is stored."""
    s = f"sess-{i:04d}"
    one_line = " ".join(example.split())
    in_path = secret if example == secret and "/" not in secret and "\n" not in secret else "plain"
    # a tool output in which the credential straddles the clipping boundary (the call's text starts with its
    # short command line)
    straddle = "x" * (CLIP - len(example) // 2 - 60) + f" canary{i}-7 " + example + " " + "y" * 300
    tool = {
        "type": "tool_use",
        "id": f"toolu_{i}a",
        "name": "Bash",
        "input": {"command": f"deploy --note 'canary{i}-3 {one_line}'", "description": f"canary{i}-4"},
    }
    read = {
        "type": "tool_use",
        "id": f"toolu_{i}b",
        "name": "Read",
        "input": {"file_path": f"/srv/canary{i}-5/{in_path}/.env"},
    }
    return [
        {"type": "summary", "summary": f"canary{i}-0 title {one_line}", "leafUuid": f"{s}-9"},
        _entry(s, 1, "user", message={"role": "user", "content": f"canary{i}-1 please use {example} for this"}),
        _entry(
            s,
            2,
            "assistant",
            message={
                "id": f"msg_{i}",
                "role": "assistant",
                "content": [{"type": "text", "text": f"canary{i}-2 I will use {example} then."}, tool],
            },
        ),
        _entry(
            s,
            3,
            "user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}a", "content": f"canary{i}-6 {example}"}],
            },
        ),
        _entry(
            s,
            6,
            "assistant",
            message={
                "id": f"msg_{i}d",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_{i}c", "name": "Bash", "input": {"command": "cat big.log"}}
                ],
            },
        ),
        _entry(
            s,
            7,
            "user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}c", "content": straddle}],
            },
        ),
        _entry(s, 4, "assistant", message={"id": f"msg_{i}b", "role": "assistant", "content": [read]}),
        _entry(
            s,
            5,
            "user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}b", "content": "KEY=1"}],
            },
        ),
        _entry(
            s,
            9,
            "assistant",
            message={
                "id": f"msg_{i}c",
                "role": "assistant",
                "content": [{"type": "text", "text": f"canary{i}-8 done"}],
            },
        ),
    ]


def _fragments(secret: str) -> list[str]:
    """Every 12-character piece of each line of the secret."""
    return [line[i : i + 12] for line in secret.splitlines() for i in range(max(1, len(line) - 11))]


class _Scan:
    """A byte scan of everything under a directory, fast for many short needles: every 12-byte window of
    every run of printable, non-blank ASCII (the x/y padding left out) is in a set; needles with other
    characters are looked for in the raw bytes."""

    def __init__(self, root: Path) -> None:
        self.raw = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
        runs = [m.group(0) for m in re.finditer(rb"[!-~]{12,}", self.raw) if m.group(0).strip(b"xy")]
        self.windows = {run[i : i + 12] for run in runs for i in range(len(run) - 11)}

    def __contains__(self, needle: str) -> bool:
        data = needle.encode()
        if len(data) == 12 and all(33 <= b <= 126 for b in data):
            return data in self.windows
        return data in self.raw


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    root = tmp_path_factory.mktemp("corpus")
    home, data = root / "claude", root / "data"
    folder = home / "projects" / "-nonexistent-corpus"
    folder.mkdir(parents=True)
    for i, (_, example, secret) in enumerate(TRUE_CASES):
        lines = _session(i, example, secret)
        (folder / f"sess-{i:04d}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    misses = [
        _entry("near-misses", n, "user", message={"role": "user", "content": text})
        for n, text in enumerate(NEAR_MISSES)
    ]
    (folder / "near-misses.jsonl").write_text("".join(json.dumps(e) + "\n" for e in misses))
    with Memory(data) as memory:
        memory.con.execute("SET force_compression = 'uncompressed'")  # else DuckDB's string compression hides text
        report = memory.import_history(home, settle_seconds=0).to_json()
        stats = memory.stats()
    return data, report, stats


def test_every_credential_is_masked_everywhere_it_is_planted(imported: tuple[Path, dict[str, Any], Any]) -> None:
    data, _, _ = imported
    scan = _Scan(data)
    blind = [f"canary{i}-{n}" for i in range(len(TRUE_CASES)) for n in range(9) if f"canary{i}-{n}" not in scan]
    assert not blind, f"the scan cannot see these planted places: {blind[:10]}"
    assert "SGVsbG8sIFdv" in scan  # a 12-character piece of a stored near-miss: the window set sees stored text
    kept = "\n".join(NEAR_MISSES)  # (a public Mapbox key is a near-miss sharing a secret key's first characters)
    leaks = [
        (kind, piece)
        for kind, _, secret in TRUE_CASES
        for piece in _fragments(secret)
        if piece in scan and piece not in kept
    ]
    assert not leaks, f"{len(leaks)} pieces of credentials reached disk, e.g. {leaks[:5]}"


def test_near_misses_are_stored_as_written(imported: tuple[Path, dict[str, Any], Any]) -> None:
    data, _, _ = imported
    with Memory(data) as memory:
        stored = {e.text for e in memory.history(EventFilters(session_id="near-misses"), 1000)}
    changed = [text for text in NEAR_MISSES if text.strip() not in stored]  # (a prompt is stored stripped)
    assert not changed, changed


def test_masks_are_counted_per_kind_and_never_with_their_values(
    imported: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    _, report, stats = imported
    by_kind = report["privacy"]["secrets_by_kind"]
    assert sum(by_kind.values()) == report["privacy"]["secrets_masked"]
    expected = {kind for kind, _, _ in TRUE_CASES}
    assert expected <= set(by_kind), expected - set(by_kind)
    assert set(stats["secrets_masked_by_kind"]) == set(by_kind)
    assert len(TRUE_CASES) >= 100
    shown = json.dumps(report) + json.dumps(stats)
    assert not [kind for kind, _, secret in TRUE_CASES if secret[:12] in shown]
