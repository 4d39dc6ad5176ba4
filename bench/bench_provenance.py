"""Line provenance: does ``claude-memory blame`` name the call that wrote each line, before and after people change
the code? Prints JSON; asserts nothing.

    .venv/bin/python bench/bench_provenance.py [--seed 1] [--sessions 4] [--claude PATH] [--keep DIR] [--fixtures]

1. **Sessions.** The real Claude Code CLI (``--claude``, else ``.tools/claude-code``) runs ``claude -p`` against the
   project's fake Anthropic API (tests/support/fake_anthropic.py), scripted to build a small Python package over
   ``--sessions`` sessions of three prompts: files written, functions added, statements changed, a file rewritten
   whole, each edit preceded by a Read as Claude Code requires. Between sessions a person inserts lines. The truth
   of every line (which tool call produced it, or a person) is tracked beside the run, the way a line diff assigns
   it, and checked against the files Claude Code really wrote.
2. **Blame.** ``claude-memory import`` then ``claude-memory blame FILE --json`` (the real CLI) on every file.
3. **Drift.** Human-like changes with the truth carried along: re-spacing and re-indenting, a long line wrapped,
   a rename, inserted lines, a moved function, a deleted block; then blame again.

Scores count non-blank lines: precision = lines attributed to the right call / lines attributed to any call;
recall = lines attributed to the right call / lines a call wrote. With ``--fixtures``, the same on the fixture
transcripts' own edits (tests/fixtures and ../shared/fixtures), replayed onto files from the ``originalFile`` that
Claude Code records with each edit. Timing of blame at scale: ``--timing STORE`` blames a generated 2,000-line file
against a store (e.g. bench/out/store-100000-seed1-embedded, copied first) holding its edit records.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_anthropic import FakeAnthropic, Rule, text, tool  # noqa: E402

sys.path.insert(0, str(BENCH))

HUMAN = "human"
WORDS = (
    "order", "item", "price", "total", "cart", "basket", "user", "account", "invoice", "payment", "tax", "rate",
    "discount", "coupon", "stock", "shelf", "report", "line", "entry", "record", "batch", "queue", "task", "worker",
    "job", "result", "value", "score", "weight", "limit", "offset", "page", "size",
)  # fmt: skip
VERBS = (
    "compute", "load", "save", "apply", "merge", "split", "check", "build", "render", "parse", "format", "collect",
    "update", "count", "find",
)  # fmt: skip


# ---------------------------------------------------------------------- a file whose lines know who wrote them


@dataclass
class TrackedFile:
    lines: list[str] = field(default_factory=list)
    origin: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n" if self.lines else ""

    def replace_all(self, new_lines: list[str], who: str) -> None:
        """The file becomes ``new_lines``; lines a line diff sees as inserted or replaced are ``who``'s."""
        matcher = difflib.SequenceMatcher(None, self.lines, new_lines, autojunk=False)
        origin: list[str] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            origin.extend(self.origin[i1:i2] if tag == "equal" else [who] * (j2 - j1))
        self.lines, self.origin = list(new_lines), origin


def split_lines(value: str) -> list[str]:
    lines = value.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


# ---------------------------------------------------------------------- generated code


class Coder:
    """Deterministic, plausible Python: functions of 4-10 statements."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def name(self) -> str:
        while True:
            name = f"{self.rng.choice(VERBS)}_{self.rng.choice(WORDS)}"
            if self.rng.random() < 0.4:
                name += f"_{self.rng.choice(WORDS)}"
            if name not in self.used:
                self.used.add(name)
                return name

    def statement(self, args: list[str], var: str) -> list[str]:
        r, w = self.rng, self.rng.choice(WORDS)
        pick = r.randrange(7)
        if pick == 0:
            return [f"    {var} += {r.choice(args)}.get({w!r}, {r.randint(0, 99)})"]
        if pick == 1:
            return [f"    for {w} in {r.choice(args)}:", f"        {var} = {var} + len(str({w})) * {r.randint(2, 9)}"]
        if pick == 2:
            return [f"    if {var} > {r.randint(10, 999)}:", f"        return {var} - {r.randint(1, 9)}"]
        if pick == 3:
            return [f"    {w}_{r.choice(WORDS)} = [{var}, {r.choice(args)}, {r.randint(0, 9)}]"]
        if pick == 4:
            return [f'    log.debug("{r.choice(VERBS)} %s for %s", {var}, {r.choice(args)})']
        if pick == 5:
            return [f"    {var} = max({var}, {r.choice(args)}.{r.choice(WORDS)}_{r.choice(WORDS)}({r.randint(1, 5)}))"]
        return [f"    {var} = round({var} * {r.randint(2, 99)} / {r.randint(100, 999)}, {r.randint(1, 4)})"]

    def function(self, name: str | None = None) -> list[str]:
        r = self.rng
        name = name or self.name()
        args = r.sample(WORDS, r.randint(1, 3))
        var = f"{r.choice(WORDS)}_{r.choice(('sum', 'count', 'acc', 'best', 'seen'))}"
        doc = f'    """{name.replace("_", " ").capitalize()} of the {args[0]}s."""'
        body = [f"def {name}({', '.join(args)}):", doc, f"    {var} = {r.randint(0, 5)}"]
        for _ in range(r.randint(2, 6)):
            body += self.statement(args, var)
        return [*body, f"    return {var}"]


def functions_of(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line index ranges of the top-level functions (end exclusive, blank lines after not included)."""
    starts = [i for i, line in enumerate(lines) if line.startswith("def ")]
    out = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while end > start and not lines[end - 1].strip():
            end -= 1
        out.append((start, end))
    return out


# ---------------------------------------------------------------------- the scripted sessions


@dataclass
class Call:
    tool_id: str
    name: str
    args: dict[str, Any]


@dataclass
class Prompt:
    text: str
    calls: list[Call]


class Plan:
    """Sessions of prompts whose calls build the package; the tracked files follow every call."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.coder = Coder(self.rng)
        self.files: dict[str, TrackedFile] = {}
        self.ids = 0
        self.sessions: list[list[Prompt]] = []
        self.between: list[dict[str, str]] = []  # after each session: the files a person changed, as they became

    def _id(self) -> str:
        self.ids += 1
        return f"toolu_prov{self.ids:04d}"

    def _read(self, rel: str) -> Call:
        return Call(self._id(), "Read", {"file_path": str(self.root / rel)})

    def write_new(self, rel: str) -> list[Call]:
        lines = [
            f'"""The {rel.split("/")[-1][:-3]} module."""',
            "",
            "import logging",
            "",
            "log = logging.getLogger(__name__)",
        ]
        for _ in range(self.rng.randint(3, 5)):
            lines += ["", "", *self.coder.function()]
        call = Call(self._id(), "Write", {"file_path": str(self.root / rel), "content": "\n".join(lines) + "\n"})
        self.files[rel] = tracked = TrackedFile()
        tracked.replace_all(lines, call.tool_id)
        return [call]

    def _edit(self, rel: str, old: list[str], new: list[str]) -> Call:
        tracked = self.files[rel]
        old_text, new_text = "\n".join(old), "\n".join(new)
        assert tracked.text.count(old_text) == 1, "old_string must be unique"
        call = Call(
            self._id(), "Edit", {"file_path": str(self.root / rel), "old_string": old_text, "new_string": new_text}
        )
        tracked.replace_all(split_lines(tracked.text.replace(old_text, new_text, 1)), call.tool_id)
        return call

    def add_function(self, rel: str) -> list[Call]:
        lines = self.files[rel].lines
        start, end = self.rng.choice(functions_of(lines))
        old = lines[start:end]
        return [self._read(rel), self._edit(rel, old, [*old, "", "", *self.coder.function()])]

    def change_function(self, rel: str) -> list[Call]:
        lines = self.files[rel].lines
        start, end = self.rng.choice(functions_of(lines))
        old = lines[start:end]
        new = list(old)
        at = self.rng.randint(3, max(3, len(new) - 1))
        args = re.findall(r"\((.*)\)", new[0])[0].split(", ")
        var = new[2].split(" = ")[0].strip()
        new[at:at] = self.coder.statement(args, var)
        if self.rng.random() < 0.5 and len(new) > 5:
            del new[3]  # a statement replaced
            new[3:3] = self.coder.statement(args, var)
        return [self._read(rel), self._edit(rel, old, new)]

    def rewrite_file(self, rel: str) -> list[Call]:
        """Write over an existing file: one function replaced whole, one added."""
        lines = list(self.files[rel].lines)
        spans = functions_of(lines)
        start, end = self.rng.choice(spans)
        name = lines[start][4:].split("(")[0]
        lines[start:end] = self.coder.function(name)
        lines += ["", "", *self.coder.function()]
        call = Call(self._id(), "Write", {"file_path": str(self.root / rel), "content": "\n".join(lines) + "\n"})
        self.files[rel].replace_all(lines, call.tool_id)
        return [self._read(rel), call]

    def human_inserts(self, rel: str, count: int) -> None:
        tracked = self.files[rel]
        lines, origin = tracked.lines, tracked.origin
        for _ in range(count):
            spans = functions_of(lines)
            start, end = self.rng.choice(spans)
            at = self.rng.randint(start + 2, end)
            line = self.rng.choice([f"    # NOTE: {self.rng.choice(WORDS)} checked by hand ({self.rng.randint(1, 99)})",
                                    f"    assert {self.rng.choice(WORDS)} is not None"])  # fmt: skip
            lines.insert(at, line)
            origin.insert(at, HUMAN)

    def build(self, sessions: int) -> None:
        names = ["pkg/orders.py", "pkg/billing.py", "pkg/stock.py", "pkg/reports.py", "pkg/users.py"]
        for s in range(sessions):
            prompts: list[Prompt] = []
            for p in range(3):
                fresh = [n for n in names if n not in self.files]
                if not self.files or (fresh and self.rng.random() < 0.3):
                    rel = fresh[0]
                    calls, what = self.write_new(rel), f"create {rel}"
                else:
                    rel = self.rng.choice(sorted(self.files))
                    kind = self.rng.choices(["add", "change", "rewrite"], [5, 4, 1])[0]
                    calls = {"add": self.add_function, "change": self.change_function, "rewrite": self.rewrite_file}[
                        kind
                    ](rel)
                    if kind == "add" and self.rng.random() < 0.5:  # two edits in one turn
                        calls += self.change_function(rel)[1:]
                    what = f"{kind} in {rel}"
                prompts.append(Prompt(f"Session {s + 1} task {p + 1}: please {what}", calls))
            self.sessions.append(prompts)
            changed = [rel for rel in sorted(self.files) if self.rng.random() < 0.5]
            for rel in changed:
                self.human_inserts(rel, 2)
            self.between.append({rel: self.files[rel].text for rel in changed})

    def rules(self) -> list[Rule]:
        out = []
        for prompts in self.sessions:
            for prompt in prompts:
                replies = [
                    [text(f"Step {n + 1}: {c.name} {Path(c.args['file_path']).name}."),
                     {**tool(c.name, **c.args), "id": c.tool_id}]
                    for n, c in enumerate(prompt.calls)
                ]  # fmt: skip
                out.append(Rule(prompt.text, replies, done="Done: " + prompt.text.split(": ", 1)[1]))
        return out


# ---------------------------------------------------------------------- drift


def drift(tracked: TrackedFile, rng: random.Random) -> TrackedFile:
    """A person's changes, the truth carried along: re-spacing, re-indenting, a wrapped line, a rename, two lines
    rewritten (the person's from then on), inserted lines, a moved function, a deleted block."""
    lines, origin = list(tracked.lines), list(tracked.origin)
    # reformat: spaces around "=" and after ",", every fourth line
    for i, line in enumerate(lines):
        if i % 4 == 1 and " = " in line:
            lines[i] = line.replace(" = ", "=", 1)
        elif i % 4 == 3 and ", " in line:
            lines[i] = line.replace(", ", " , ")
    # re-indent one function by two more spaces
    spans = functions_of(lines)
    start, end = rng.choice(spans) if spans else (0, 0)
    for i in range(start + 1, end):
        if lines[i].strip():
            lines[i] = "  " + lines[i]
    # wrap the longest line at its first ", "
    longest = max(
        (i for i, line in enumerate(lines) if ", " in line and line.startswith("    ")),
        key=lambda i: len(lines[i]),
        default=None,
    )
    if longest is not None:
        head, tail = lines[longest].split(", ", 1)
        lines[longest : longest + 1] = [head + ",", "        " + tail]
        origin[longest : longest + 1] = [origin[longest]] * 2
    # rename a local variable everywhere
    names = sorted({m for line in lines for m in re.findall(r"\b([a-z]+_(?:sum|count|acc|best|seen))\b", line)})
    if names:
        old = rng.choice(names)
        pattern = re.compile(rf"\b{old}\b")
        lines = [pattern.sub(old + "_total", line) for line in lines]
    # lines a person rewrote (theirs now): a statement's right-hand side replaced
    rewritable = [i for i, line in enumerate(lines) if re.match(r"^ {4}\w+ ?= ?\S", line) and origin[i] != HUMAN]
    for i in rng.sample(rewritable, min(2, len(rewritable))):
        target = re.split(r" ?= ?", lines[i].strip(), maxsplit=1)[0]
        lines[i] = f"    {target} = settings.{rng.choice(WORDS)}_{rng.choice(WORDS)} or {rng.randint(100, 999)}"
        origin[i] = HUMAN
    # inserted lines
    for _ in range(3):
        at = rng.randint(1, len(lines))
        lines.insert(at, f"    # reviewed: {rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(100, 999)}")
        origin.insert(at, HUMAN)
    # move the first function to the end
    spans = functions_of(lines)
    if len(spans) > 2:
        start, end = spans[0]
        block, block_origin = lines[start:end], origin[start:end]
        del lines[start:end], origin[start:end]
        lines += ["", "", *block]
        origin += [HUMAN, HUMAN, *block_origin]
    # delete a block of three lines inside a function
    spans = [s for s in functions_of(lines) if s[1] - s[0] > 7]
    if spans:
        start, end = rng.choice(spans)
        at = rng.randint(start + 2, end - 4)
        del lines[at : at + 3], origin[at : at + 3]
    elif len(lines) > 12:  # not Python: any three lines
        at = rng.randint(2, len(lines) - 4)
        del lines[at : at + 3], origin[at : at + 3]
    return TrackedFile(lines, origin)


# ---------------------------------------------------------------------- scoring


def score(tracked: TrackedFile, blamed: dict[str, Any]) -> dict[str, int]:
    """True/false attributions over the non-blank lines."""
    tool_of = {e["id"]: e["tool_use_id"] for e in blamed["edits"]}
    predicted: dict[int, str | None] = {}
    for r in blamed["ranges"]:
        for n in range(r["start"], r["end"] + 1):
            predicted[n] = tool_of.get(r["edit"]) if r["edit"] is not None else None
    counts = {"claude_lines": 0, "attributed": 0, "right": 0, "human_lines": 0, "human_attributed": 0}
    for n, (line, truth) in enumerate(zip(tracked.lines, tracked.origin, strict=True), start=1):
        if not line.strip():
            continue
        guess = predicted.get(n)
        counts["claude_lines"] += truth != HUMAN
        counts["human_lines"] += truth == HUMAN
        counts["attributed"] += guess is not None
        counts["right"] += guess is not None and guess == truth
        counts["human_attributed"] += truth == HUMAN and guess is not None
    return counts


def figures(counts: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("claude_lines", "attributed", "right", "human_lines", "human_attributed")
    total = {k: sum(c[k] for c in counts) for k in keys} if counts else {}
    if not total:
        return {}
    return {
        **total,
        "precision": round(total["right"] / total["attributed"], 4) if total["attributed"] else None,
        "recall": round(total["right"] / total["claude_lines"], 4) if total["claude_lines"] else None,
    }


# ---------------------------------------------------------------------- running it


def cli(data: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "claude-memory"
    done = subprocess.run([str(exe), "--data-dir", str(data), *args], capture_output=True, text=True, timeout=600)
    if check and done.returncode not in (0, 4):
        raise SystemExit(f"claude-memory {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done


def run_sessions(claude: Path, scratch: Path, plan: Plan) -> None:
    home = scratch / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC"))}
    with FakeAnthropic(plan.rules()) as api:
        env |= api.env() | {"HOME": str(home)}
        for s, prompts in enumerate(plan.sessions):
            session = f"0a1e5c1d-0099-4000-8000-{s + 1:012d}"
            for n, prompt in enumerate(prompts):
                args = [str(claude), "-p", prompt.text, "--model", "claude-sonnet-4-5", "--output-format", "json",
                        "--tools", "Read,Edit,Write", "--allowedTools", "Read,Edit,Write",
                        "--system-prompt", "You are Claude Code.", "--system-prompt-snapshot", "off"]  # fmt: skip
                args += ["--resume", session] if n else ["--session-id", session]
                done = subprocess.run(args, cwd=plan.root, env=env, capture_output=True, text=True, timeout=300)
                if done.returncode != 0 or json.loads(done.stdout).get("is_error"):
                    raise SystemExit(f"{prompt.text}: claude failed: {done.stdout[-1000:]} {done.stderr[-1000:]}")
            for rel, body in plan.between[s].items():
                (plan.root / rel).write_text(body, encoding="utf-8")
    for rel, tracked in plan.files.items():
        on_disk = (plan.root / rel).read_text(encoding="utf-8")
        if on_disk != tracked.text:
            raise SystemExit(f"{rel}: the tracked truth and the file Claude Code wrote differ; the script is wrong.")


def blame_all(data: Path, root: Path, files: dict[str, TrackedFile]) -> tuple[list[dict[str, int]], list[float]]:
    counts, times = [], []
    for rel, tracked in sorted(files.items()):
        path = root / rel
        path.write_text(tracked.text, encoding="utf-8")
        started = time.perf_counter()
        done = cli(data, "blame", str(path), "--json")
        times.append(time.perf_counter() - started)
        counts.append(score(tracked, json.loads(done.stdout)))
    return counts, times


def generated(args: argparse.Namespace) -> dict[str, Any]:
    claude = Path(args.claude or ROOT / ".tools/claude-code/node_modules/.bin/claude")
    if not claude.exists():
        raise SystemExit(
            f"No Claude Code CLI at {claude}: npm install --prefix .tools/claude-code @anthropic-ai/claude-code@2.1.330"
        )
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-provenance-"))
    shutil.rmtree(scratch, ignore_errors=True)
    root = scratch / "home" / "work" / "pkgrepo"
    (root / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    plan = Plan(root, args.seed)
    plan.build(args.sessions)
    started = time.perf_counter()
    run_sessions(claude, scratch, plan)
    sessions_s = time.perf_counter() - started
    data = scratch / "data"
    cli(data, "import", "--claude-home", str(scratch / "home" / ".claude"), "--no-wait", "--json")
    before, times = blame_all(data, root, plan.files)
    rng = random.Random(args.seed + 2)
    drifted = {rel: drift(tracked, rng) for rel, tracked in plan.files.items()}
    after, times_after = blame_all(data, root, drifted)
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    calls = sum(len(p.calls) for s in plan.sessions for p in s)
    return {
        "sessions": args.sessions,
        "prompts": sum(len(s) for s in plan.sessions),
        "calls": calls,
        "files": len(plan.files),
        "lines": sum(len(t.lines) for t in plan.files.values()),
        "claude_code_runs_s": round(sessions_s, 1),
        "no_drift": figures(before),
        "drift": figures(after),
        "blame_cli_s": [round(t, 3) for t in times + times_after],
    }


def edit_calls(path: Path) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """A transcript's successful Edit/MultiEdit/Write calls: (time, tool_use_id, name and input, toolUseResult)."""
    inputs: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        message = obj.get("message") if isinstance(obj, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                inputs[block.get("id", "")] = (block.get("name", ""), block["input"])
            elif block.get("type") == "tool_result" and not block.get("is_error"):
                name, args = inputs.get(block.get("tool_use_id", ""), ("", {}))
                result = obj.get("toolUseResult")
                if name in ("Edit", "MultiEdit", "Write") and isinstance(result, dict):
                    out.append((str(obj.get("timestamp", "")), block["tool_use_id"], {"name": name, **args}, result))
    return out


def replay(calls: list[tuple[str, str, dict[str, Any], dict[str, Any]]], states: dict[str, TrackedFile]) -> int:
    """Follow editing calls (in time order) onto tracked files, starting from (and re-synchronising with) the
    ``originalFile`` Claude Code records with each; how many calls were followed."""
    followed = 0
    for _ts, tool_id, args, result in calls:
        name = args["name"]
        file = result.get("filePath") or args.get("file_path")
        original = result.get("originalFile")
        tracked = states.get(file)
        if isinstance(original, str):
            if tracked is None:
                tracked = states[file] = TrackedFile(split_lines(original), [HUMAN] * len(split_lines(original)))
            elif tracked.text != original:
                tracked.replace_all(split_lines(original), HUMAN)  # changed outside the calls seen
        elif result.get("type") != "create" and tracked is None:
            continue  # an edit of a file whose earlier text is unknown: cannot be replayed
        tracked = states.setdefault(file, TrackedFile())
        if name == "Write":
            new = str(args.get("content", ""))
        else:
            new = tracked.text
            for edit in args.get("edits", [args]) if name == "MultiEdit" else [args]:
                old_s, new_s = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
                new = new.replace(old_s, new_s) if edit.get("replace_all") else new.replace(old_s, new_s, 1)
        if not follow_patch(tracked, split_lines(new), result.get("structuredPatch"), tool_id):
            tracked.replace_all(split_lines(new), tool_id)
        followed += 1
    return followed


def follow_patch(tracked: TrackedFile, new_lines: list[str], patch: Any, who: str) -> bool:
    """The file becomes ``new_lines`` as Claude Code's structured patch says: its ``+`` lines are ``who``'s, its
    context lines keep their origin. False (nothing changed) when there is no patch or it does not fit."""
    if not isinstance(patch, list) or not patch:
        return False
    lines: list[str] = []
    origin: list[str] = []
    old = 0  # index into the old lines
    for hunk in patch:
        start = int(hunk.get("oldStart", 1)) - 1 if hunk.get("oldLines") else int(hunk.get("oldStart", 0))
        lines += tracked.lines[old:start]
        origin += tracked.origin[old:start]
        old = start
        for line in hunk.get("lines", []):
            if line.startswith("\\"):
                continue
            if line.startswith("+"):
                lines.append(line[1:])
                origin.append(who)
            elif line.startswith("-"):
                old += 1
            else:
                lines.append(tracked.lines[old] if old < len(tracked.lines) else line[1:])
                origin.append(tracked.origin[old] if old < len(tracked.origin) else HUMAN)
                old += 1
    lines += tracked.lines[old:]
    origin += tracked.origin[old:]
    if lines != new_lines:
        return False
    tracked.lines, tracked.origin = lines, origin
    return True


def fixtures(args: argparse.Namespace) -> dict[str, Any]:
    """The fixture transcripts' own edits, replayed, then blamed through the operation (the files are not on this
    machine: their text is passed as an editor's buffer would be)."""
    from claude_memory.client.transport import connect

    shared = ROOT.parent / "shared" / "fixtures"
    homes = [ROOT / "tests" / "fixtures" / "claude_home", shared / "claude_home"]
    loose = sorted((shared / "transcripts").glob("*.jsonl")) if (shared / "transcripts").is_dir() else []
    scratch = Path(tempfile.mkdtemp(prefix="bench-provenance-fixtures-"))
    extra = scratch / "claude" / "projects" / "-fixture-transcripts"
    extra.mkdir(parents=True)
    for path in loose:
        (extra / path.name).symlink_to(path.resolve())
    homes.append(scratch / "claude")
    data = scratch / "data"
    states: dict[str, TrackedFile] = {}
    transcripts = [p for home in homes if home.is_dir() for p in sorted((home / "projects").rglob("*.jsonl"))]
    for home in homes:
        if home.is_dir():
            cli(data, "import", "--claude-home", str(home), "--no-wait", "--json")
    calls = {c[1]: c for path in transcripts for c in edit_calls(path)}  # (a session may be in two trees)
    followed = replay(sorted(calls.values(), key=lambda c: c[0]), states)
    rng = random.Random(args.seed + 3)
    before, after = [], []
    transport = connect(data)
    try:
        for file, tracked in sorted(states.items()):
            before.append(score(tracked, transport.call("blame", {"path": file, "text": tracked.text})))
            drifted = drift(tracked, rng)
            after.append(score(drifted, transport.call("blame", {"path": file, "text": drifted.text})))
    finally:
        transport.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "transcripts": len(transcripts),
        "calls_replayed": followed,
        "files": len(states),
        "lines": sum(len(t.lines) for t in states.values()),
        "no_drift": figures(before),
        "drift": figures(after),
    }


def timing(store: Path, runs: int) -> dict[str, Any]:
    """Blame of a 2,000-line file at scale: a copy of ``store`` (opening it read-write migrates it and reads its
    editing calls again from their transcripts, timed), then the file with the most edit records, rebuilt as 2,000
    lines from its hunks (newest first) and lines of a person's; cold (new text each time: a new content hash) and
    warm (the same text again) through the operation, in this process."""
    from claude_memory.client.transport import connect
    from claude_memory.store.edits import records_for
    from common import percentile

    scratch = Path(tempfile.mkdtemp(prefix="bench-provenance-timing-"))
    data = scratch / "data"
    shutil.copytree(store, data)
    started = time.perf_counter()
    transport = connect(data)  # migrates, and backfills the edit records
    opened = time.perf_counter() - started
    try:
        memory = transport.engine.memory  # type: ignore[attr-defined]
        events = memory.con.execute("SELECT count(*) FROM events").fetchone()[0]
        hunks = memory.con.execute("SELECT count(*) FROM edit_hunks").fetchone()[0]
        file = memory.con.execute("SELECT file FROM edit_hunks GROUP BY 1 ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
        records = records_for(memory.con, file)
        rng = random.Random(7)
        lines: list[str] = []
        for record in records:
            for inserted, _start, _removed in record.hunks:
                lines += split_lines(inserted)
                lines += [
                    f"    human_{rng.randint(0, 10**6)} = {rng.randint(0, 999)}" for _ in range(rng.randint(0, 3))
                ]
        while len(lines) < 2000:
            lines.append(f"    filler_{len(lines)} = {rng.randint(0, 999)}")
        text = "\n".join(lines[:2000]) + "\n"
        cold, warm = [], []
        for n in range(runs):
            variant = text + f"# run {n}\n"
            started = time.perf_counter()
            found = transport.call("blame", {"path": file, "text": variant})
            cold.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            transport.call("blame", {"path": file, "text": variant})
            warm.append((time.perf_counter() - started) * 1000)
    finally:
        transport.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "events": events,
        "edit_hunks": hunks,
        "open_migrate_backfill_s": round(opened, 2),
        "file_edit_records": len(records),
        "file_lines": 2000,
        "claude_lines": found["claude_lines"],
        "cold_ms": {"p50": round(percentile(cold, 50), 1), "p95": round(percentile(cold, 95), 1)},
        "warm_ms": {"p50": round(percentile(warm, 50), 2), "p95": round(percentile(warm, 95), 2)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--claude", help="the claude CLI (default: .tools/claude-code)")
    parser.add_argument("--keep", help="work here and keep it (default: a temporary folder, removed)")
    parser.add_argument("--runs", type=int, default=1, help="generated runs (seeds seed, seed+1, ...)")
    parser.add_argument("--fixtures", action="store_true", help="also replay the fixture transcripts' own edits")
    parser.add_argument(
        "--timing", type=Path, help="a store to time blame on (copied; e.g. bench/out/store-100000-seed1)"
    )
    args = parser.parse_args()
    out: dict[str, Any] = {}
    if args.runs:
        runs = [generated(argparse.Namespace(**{**vars(args), "seed": args.seed + n})) for n in range(args.runs)]
        out["generated"] = {
            "runs": runs,
            "no_drift": figures([r["no_drift"] for r in runs]),
            "drift": figures([r["drift"] for r in runs]),
        }
    if args.fixtures:
        out["fixtures"] = fixtures(args)
    if args.timing:
        out["timing"] = timing(args.timing, 30)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
