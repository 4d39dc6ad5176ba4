"""How often the privacy filter masks something in real transcripts that hold no credentials: masks per
10,000 events, by kind, on the project's own fixtures, ../shared's fixtures, and the LoCoMo and LongMemEval
dev splits; and every masked span with its context, so each one can be explained (a real credential planted
in a fixture, or a false positive to fix).

    .venv/bin/python bench/privacy_false_positives.py [--show 40]

Events are parsed from the transcripts as the importer parses them and filtered as it filters them (text and
metadata), without a store. Prints JSON.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

from claude_memory.core.lines import iter_lines  # noqa: E402
from claude_memory.core.privacy import PrivacyFilter, PrivacyReport  # noqa: E402
from claude_memory.core.transcript import TranscriptParser  # noqa: E402
from claude_memory.service.discovery import discover  # noqa: E402

SHARED = REPO.parent / "shared"


def masked_spans(before: str, after: str, context: int = 30) -> list[str]:
    """Each replaced piece of ``before``, with ``context`` characters either side."""
    found = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for op, i1, i2, _, _ in matcher.get_opcodes():
        if op in ("replace", "delete"):
            left = before[max(0, i1 - context) : i1]
            right = before[i2 : i2 + context]
            found.append(f"{left}«{before[i1:i2]}»{right}".replace("\n", "⏎"))
    return found


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def measure(home: Path, show: int) -> dict[str, Any]:
    privacy = PrivacyFilter()
    events = 0
    kinds: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for f in discover(home).files:
        parser = TranscriptParser(str(f.path), session_hint=f.session_id, agent_id=f.agent_id)
        with f.path.open("rb") as fh:
            parsed = [e for raw in iter_lines(fh, start_offset=0, start_line=1, max_line_bytes=16 << 20)
                      for e in parser.feed(raw)]  # fmt: skip
        parsed += parser.finish(close_tool_calls=True)
        for event in parsed:
            events += 1
            for text in [event.text, *strings(event.metadata)]:
                report = PrivacyReport()
                filtered = privacy.filter_value(text, report)
                if not report.secrets_masked:
                    continue
                kinds.update(report.kinds)
                if len(examples) < show:
                    examples.append({"kinds": dict(report.kinds), "source": f"{f.path.name}:{event.source.line_start}",
                                     "spans": masked_spans(text, str(filtered))})  # fmt: skip
    total = sum(kinds.values())
    return {
        "events": events,
        "masks": total,
        "masks_per_10k_events": round(total * 10_000 / events, 2) if events else None,
        "by_kind": dict(kinds.most_common()),
        "examples": examples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=40, help="masked spans to print per data set")
    args = parser.parse_args()
    sets: dict[str, Path] = {"own fixtures": REPO / "tests" / "fixtures" / "claude_home"}
    if (SHARED / "fixtures" / "claude_home").is_dir():
        sets["shared fixtures"] = SHARED / "fixtures" / "claude_home"
    if (SHARED / "bench" / "locomo" / "dev" / "claude_home").is_dir():
        sets["LoCoMo dev"] = SHARED / "bench" / "locomo" / "dev" / "claude_home"
    with tempfile.TemporaryDirectory() as tmp:
        lme = SHARED / "bench" / "longmemeval"
        if (lme / "longmemeval_s_dev.json.gz").exists():
            split = lme / "longmemeval_s_dev.json.gz"
            subprocess.run([sys.executable, str(lme / "longmemeval_to_claude.py"), str(split), tmp], check=True,
                           capture_output=True)  # fmt: skip
            sets["LongMemEval dev"] = Path(tmp) / "claude_home"
        print(json.dumps({name: measure(home, args.show) for name, home in sets.items()}, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
