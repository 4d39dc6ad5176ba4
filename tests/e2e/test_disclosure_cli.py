"""``timeline`` and ``search --smart`` / ``--budget`` through the real command, on the real fixture tree
(tests/fixtures)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support import own_fixtures as fx

Cli = Callable[..., subprocess.CompletedProcess[str]]
SMALL = fx.GREETING  # prompt, answer, Bash call, answer


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path, cli: Cli) -> Path:
    data = tmp_path_factory.mktemp("disclosure-cli") / "data"
    report = as_json(cli(data, "import", "--claude-home", str(fixtures_home), "--json", "--settle-seconds", "0"))
    assert report["events"]["new"] > 80
    return data


def _session(cli: Cli, data: Path) -> list[dict[str, Any]]:
    """The small session's events, oldest first."""
    events = as_json(cli(data, "history", "--session", SMALL, "--json"))["events"]
    assert len(events) == 4
    return list(reversed(events))


def test_timeline_shows_the_events_around_a_memory(imported: Path, cli: Cli) -> None:
    events = _session(cli, imported)
    target = events[1]["citation"]
    out = as_json(cli(imported, "timeline", target, "--before", "1", "--after", "1", "--json"))
    (window,) = out["windows"]
    assert window["session_id"] == SMALL
    assert [e["citation"] for e in window["events"]] == [e["citation"] for e in events[:3]]
    assert [e["is_target"] for e in window["events"]] == [False, True, False]
    assert out["targets"] == [target] and out["missing"] == [] and out["tokens"] > 0
    human = cli(imported, "timeline", target, "--before", "1", "--after", "1")
    assert human.returncode == 0
    lines = human.stdout.splitlines()
    assert lines[0].startswith(f"Session {SMALL}") and len(lines) == 4
    assert lines[2].startswith(f"▶ [{target}]") and lines[1].startswith(f"  [{events[0]['citation']}]")


def test_timeline_merges_overlapping_windows_and_reports_unknown_refs(imported: Path, cli: Cli) -> None:
    events = _session(cli, imported)
    first, last = events[0]["citation"], events[3]["citation"]
    run = cli(imported, "timeline", last, first, "mem:zzzzzz", "--before", "2", "--after", "2", "--json")
    assert run.returncode == 0 and "Warning: no memory mem:zzzzzz" in run.stderr
    out = json.loads(run.stdout)
    (window,) = out["windows"]  # 0-2 and 1-3 overlap: one window, each event once
    assert [e["citation"] for e in window["events"]] == [e["citation"] for e in events]
    assert sorted(out["targets"]) == sorted([first, last]) and out["missing"] == ["mem:zzzzzz"]

    nothing = cli(imported, "timeline", "mem:zzzzzz")
    assert nothing.returncode == 4 and nothing.stderr.startswith("Error: No memory mem:zzzzzz")
    assert "Traceback" not in nothing.stderr and len(nothing.stderr.strip().splitlines()) == 1
    bad = cli(imported, "timeline", first, "--before", "-1")
    assert bad.returncode == 2
    missing_ref = cli(imported, "timeline")
    assert missing_ref.returncode == 2


def test_smart_search_keeps_to_its_budget(imported: Path, cli: Cli) -> None:
    plain = as_json(cli(imported, "search", fx.TOPIC, "--limit", "6", "--json"))
    assert set(plain) == {"results", "meta"} and all("layer" not in r for r in plain["results"])
    ranked = [r["citation"] for r in plain["results"]]
    for budget in (0, 60, 250, 2000):
        out = as_json(cli(imported, "search", fx.TOPIC, "--limit", "6", "--budget", str(budget), "--json"))
        meta = out["meta"]
        assert meta["budget"] == budget and meta["tokens"] <= budget
        shown = [r["citation"] for r in out["results"]]
        assert shown == ranked[: len(shown)] and meta["omitted"] == len(ranked) - len(shown)
        assert sum(meta["expanded"].values()) == len(shown)
        for result in out["results"]:
            assert len(result["summary"]) <= 100
            if result["confidence"] == "none":
                assert result["layer"] == "index" and "details" not in result
            if result["layer"] == "details":
                assert result["confidence"] == "high" and result["details"]["text"]
        if budget == 0:
            assert out["results"] == [] and meta["omitted"] == len(ranked)

    default = as_json(cli(imported, "search", fx.TOPIC, "--smart", "--json"))
    assert default["meta"]["budget"] == 2000 and default["results"]
    human = cli(imported, "search", fx.TOPIC, "--smart", "--limit", "3")
    assert human.returncode == 0
    lines = human.stdout.splitlines()
    assert lines[0].startswith(f"#1 [{ranked[0]}]")
    assert lines[-1].startswith("~") and "of 2000 tokens" in lines[-1]
    tiny = cli(imported, "search", fx.TOPIC, "--budget", "5")
    assert tiny.returncode == 0 and "more did not fit" in tiny.stdout
    none = cli(imported, "search", "zzqxv wqxyzj", "--smart")
    assert none.returncode == 0 and "No memories match." in none.stdout


def test_batch_smart_search(imported: Path, tmp_path: Path, cli: Cli) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_text(f'{{"query": "{fx.ECHO_WORD}", "limit": 2}}\n{{"query": "{fx.TOPIC}"}}\n')
    run = cli(imported, "search", "--batch", str(batch), "--budget", "120")
    assert run.returncode == 0, run.stderr
    first, second = (json.loads(line) for line in run.stdout.splitlines())
    assert first["meta"]["line"] == 1 and second["meta"]["line"] == 2
    assert len(first["results"]) <= 2
    for out in (first, second):
        assert out["meta"]["budget"] == 120 and out["meta"]["tokens"] <= 120
        assert all("layer" in r for r in out["results"])
