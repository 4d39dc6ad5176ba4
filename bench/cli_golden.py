"""Golden outputs of the ``claude-memory`` CLI: record every command's output on the fixture history, then
compare two recordings (one of the code before a refactor, one after).

    # record (the code under --src runs, through PYTHONPATH, with the checkout's .venv interpreter)
    .venv/bin/python bench/cli_golden.py --src /work/golden-base/server --out /work/golden/base
    .venv/bin/python bench/cli_golden.py --src server --out /work/golden/new
    # compare: a unified diff per differing file, exit 1 if any differ
    .venv/bin/python bench/cli_golden.py --compare /work/golden/base /work/golden/new
    # --raw also keeps each output unmasked (<NNN>-<slug>.raw, never compared); after a change of MASKS,
    # --renormalise DIR rewrites such a recording's .txt files from them
    .venv/bin/python bench/cli_golden.py --renormalise /work/golden/new

Standard library only. Each recording works on a temporary copy of the fixture Claude home (every file's
mtime set to one fixed instant, so that the importer's settle rules, which look at the time since a
transcript last changed, see the same thing on every run) and a fresh data directory per pass:

- ``inproc``: no memory service runs, every command opens the store itself (plus the ``--help`` pages);
- ``service``: a ``serve --no-watch --claude-home`` started first (it then owns the store and every
  command, ``import`` included, goes to it), ``stop`` at the end, then ``serve --detach`` and ``stop`` once
  more (why not ``serve --detach`` first: see service_pass).

Store-changing commands (``forget``) come last in each pass. Citations, session ids, event ids and
projects are taken from the JSON the earlier commands print, not written here.

One file per command: ``<out>/<pass>/<NNN>-<slug>.txt`` with the argv, the exit code, stdout and stderr,
normalised: the temporary paths become ``<TMP>``, ``<HOME>`` (the Claude home), ``<DATA>`` (the data
directory) and ``<CHECKOUT>`` (the parent of --src), and only values that differ between two runs of
the same code are masked (see MASKS).
"""

from __future__ import annotations

import argparse
import calendar
import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CLAUDE_MEMORY_SHARED", CHECKOUT.parent / "shared"))
FIXTURE_HOME = SHARED / "fixtures" / "claude_home"
MODEL = SHARED / "models" / "all-MiniLM-L6-v2-onnx"
DEFAULT_SRC = CHECKOUT / "server"
DEFAULT_PYTHON = CHECKOUT / ".venv" / "bin" / "python"

# Every copied transcript gets this mtime: after the fixtures' last event (2026-11-22T05:57Z), and more
# than 24 hours in the past, so that every transcript is settled and every unanswered tool call closed,
# whenever the recording runs (with the fixtures' own mtimes the outcome would depend on the clock).
FIXED_MTIME = calendar.timegm((2026, 11, 23, 0, 0, 0))

# A citation no store hands out (citations are "mem:" and six letters or digits; checked against the store).
MISSING_REF = "mem:000000"

# Each scan of a --no-watch service starts this long after the last (ServiceOptions.scan_interval).
SERVICE_SCAN_INTERVAL = 30.0

# Values that differ between two runs of the same code, and only those: (what, pattern, replacement, the
# passes it applies to). `--raw` keeps each output unmasked beside it, to check what a mask hides.
ALL = ("inproc", "service")
MASKS: list[tuple[str, re.Pattern[str], str, tuple[str, ...]]] = [
    # Durations: the import's wall time and each search's.
    (
        "import seconds (text)",
        re.compile(r"(transcript files \(\d+ unchanged\) in )\d+(?:\.\d+)? s\."),
        r"\1<S> s.",
        ALL,
    ),
    ("import seconds (json)", re.compile(r'("seconds": )-?\d+(?:\.\d+)?(?:e-?\d+)?'), r'\1"<S>"', ALL),
    ("search took_ms", re.compile(r'("took_ms": )-?\d+(?:\.\d+)?(?:e-?\d+)?'), r'\1"<MS>"', ALL),
    # The memory service process: its pid, start time, uptime, memory and request counter (the CLI's
    # import polls the service's status every 0.5-2 s while it waits for the embedding, and this script
    # polls it until nothing is left to embed: how many requests that takes depends on the machine).
    ("pid (text)", re.compile(r"\bpid \d+"), "pid <PID>", ALL),
    ("pid (json)", re.compile(r'("pid": )\d+'), r'\1"<PID>"', ALL),
    ("service started_at", re.compile(r'("started_at": )"[^"]*"'), r'\1"<STARTED>"', ALL),
    ("service uptime (json)", re.compile(r'("uptime_seconds": )\d+(?:\.\d+)?'), r'\1"<UPTIME>"', ALL),
    ("service uptime (text)", re.compile(r"\bup \d+ (?:d|h|min|s)(?: \d+ (?:h|min|s))?([;)])"), r"up <UPTIME>\1", ALL),
    ("service peak_rss_mb", re.compile(r'("peak_rss_mb": )\d+'), r'\1"<RSS>"', ALL),
    ("service requests", re.compile(r'("requests": )\d+'), r'\1"<N>"', ALL),
    # The store file's size while a service owns it: the service writes in the background (its periodic
    # scan and embedding check), so the DuckDB file grows by a block or not depending on when (seen after
    # forget: 8400896 or 8663040 bytes on four runs of the same code). Deterministic in-process: not masked.
    # How many events the service embedded while the CLI's import waited: the service starts embedding as
    # soon as the import's last part is done, one batch of 64 (quiet) or 8 (a request came within the last
    # second) before it answers the CLI's first look at its queue, or none if the look comes first (seen:
    # 597 = 661 - 64 on four runs, 653 = 661 - 8 on a fifth). Zero (--no-wait, nothing new) is kept.
    (
        "embedded during import (service)",
        re.compile(r"(Embedded for semantic search: )[1-9]\d*\."),
        r"\1<N>.",
        ("service",),
    ),
    ("store size (json)", re.compile(r'("store_bytes": )\d+'), r'\1"<BYTES>"', ("service",)),
    ("store size (text)", re.compile(r"\(\d+(?:\.\d+)? MB, schema"), "(<SIZE> MB, schema", ("service",)),
]


def normalise(text: str, paths: list[tuple[str, str]], where: str, *, mask: bool = True) -> str:
    """Temporary paths to placeholders, then (``mask``) the masks of pass ``where``."""
    for real, placeholder in paths:
        text = text.replace(real, placeholder)
    for _, pattern, replacement, passes in MASKS if mask else ():
        if where in passes:
            text = pattern.sub(replacement, text)
    return text


def slugify(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:60]


# ---------------------------------------------------------------------- running


@dataclass
class Result:
    argv: list[str]
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except ValueError:
            raise SystemExit(
                f"cli_golden: `claude-memory {' '.join(self.argv)}` (exit {self.code}) did not print JSON:\n"
                f"{self.stdout[:2000]}\n{self.stderr[:2000]}"
            ) from None


class Pass:
    """One pass: a data directory, a Claude home, and the numbered record of each command."""

    def __init__(
        self, name: str, root: Path, src: Path, python: Path, model: bool, out: Path | None, raw: bool = False
    ) -> None:
        self.name = name
        self.raw = raw
        self.root = root
        self.src = src
        self.python = python
        self.data = root / f"data-{name}"
        self.home = root / f"claude-home-{name}"
        self.out = out / name if out is not None else None
        self.count = 0
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "PYTHON"))}
        env.update(
            PYTHONPATH=str(src),
            CLAUDE_MEMORY_HOME=str(self.data),
            HOME=str(root / "user-home"),  # doctor, install and uninstall read ~/.claude: not the real one
            COLUMNS="200",
            TZ="UTC",
            LC_ALL="C.UTF-8",
            LANG="C.UTF-8",
            PYTHONIOENCODING="utf-8",
        )
        env.pop("NO_COLOR", None)
        env.pop("FORCE_COLOR", None)
        if model:
            env["CLAUDE_MEMORY_MODEL_PATH"] = str(MODEL)
        self.env = env
        # Longest first: the data directory and the home lie inside the temporary root.
        self.paths = sorted(
            [
                (str(self.data), "<DATA>"),
                (str(self.home), "<HOME>"),
                (str(root), "<TMP>"),
                (str(src.parent), "<CHECKOUT>"),
            ],
            key=lambda p: -len(p[0]),
        )

    def run(
        self, label: str | None, *args: str, stdin: str | None = None, timeout: float = 1800.0, ok: bool = False
    ) -> Result:
        """Run ``claude-memory ARGS``; recorded as the next file unless ``label`` is None. ``ok``: fail the
        recording unless the command exits 0 (for the commands whose output later ones depend on)."""
        argv = list(args)
        proc = subprocess.run(
            [str(self.python), "-m", "claude_memory", *argv],
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=self.env,
            cwd=self.root,
            timeout=timeout,
            check=False,
        )
        result = Result(argv, proc.returncode, proc.stdout, proc.stderr)
        if ok and result.code != 0:
            raise SystemExit(
                f"cli_golden: `claude-memory {' '.join(argv)}` failed (exit {result.code}):\n{result.stderr[-3000:]}"
            )
        if label is not None:
            self.count += 1
            if self.out is not None:
                self._write(f"{self.count:03d}-{slugify(label)}.txt", result, stdin)
            print(f"  {self.name} {self.count:03d} {label}: exit {result.code}", flush=True)
        return result

    def _write(self, filename: str, r: Result, stdin: str | None) -> None:
        assert self.out is not None
        parts = [f"$ claude-memory {' '.join(_quote(a) for a in r.argv)}\n"]
        if stdin:
            parts.append(f"## stdin\n{_section(stdin)}")
        parts.append(f"## exit {r.code}\n## stdout\n{_section(r.stdout)}## stderr\n{_section(r.stderr)}")
        (self.out / filename).write_text(normalise("".join(parts), self.paths, self.name), encoding="utf-8")
        if self.raw:  # the same without the masks (paths replaced): to see what the masks hide
            (self.out / filename).with_suffix(".raw").write_text(
                normalise("".join(parts), self.paths, self.name, mask=False), encoding="utf-8"
            )

    def status(self) -> dict[str, Any]:
        data: dict[str, Any] = self.run(None, "status", "--json", ok=True).json()
        return data


def _section(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n## (no newline at the end)\n"


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


def copy_home(dest: Path) -> None:
    """The fixture Claude home (transcripts only matter) with every mtime fixed."""
    shutil.copytree(FIXTURE_HOME, dest, dirs_exist_ok=True)
    for path in sorted(dest.rglob("*")):
        os.utime(path, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)


# ---------------------------------------------------------------------- the invocations


@dataclass
class Picks:
    """What later commands act on, read from earlier JSON output."""

    sessions: list[dict[str, Any]]
    cites: list[str]
    event_id: str
    session_recent: str
    session_big: str
    session_small: str
    project_big: str
    project_odd: str  # a project path with a space, if there is one


def pick(p: Pass) -> Picks:
    rows = p.run(None, "sessions", "--json", "--limit", "1000", ok=True).json()["sessions"]
    if len(rows) < 3:
        raise SystemExit(f"cli_golden: expected several sessions after the import, got {len(rows)}")
    big = max(rows, key=lambda r: r["events"])  # first of the largest, in the listed order
    small = min(reversed(rows), key=lambda r: r["events"])  # last of the smallest
    projects = list(dict.fromkeys(r["project"] for r in rows if r["project"]))
    odd = next((proj for proj in projects if " " in proj), projects[-1])
    hits = p.run(None, "search", "streaming", "--mode", "keyword", "--limit", "6", "--json", ok=True).json()
    cites = [h["citation"] for h in hits["results"] if h["citation"]]
    if len(cites) < 5:
        raise SystemExit(f"cli_golden: expected 5 keyword hits for 'streaming', got {len(cites)}")
    recent = rows[0]["session_id"]
    events = p.run(None, "history", "--session", recent, "--json", ok=True).json()["events"]
    return Picks(
        rows, cites, str(events[-1]["id"]), recent, big["session_id"], small["session_id"], big["project"], odd
    )


def help_pages(p: Pass) -> None:
    p.run("help", "--help")
    p.run("no-args")
    p.run("version", "--version")
    commands = ["import", "status", "reindex", "search", "show", "timeline", "history", "sessions", "stats"]
    commands += ["forget", "serve", "stop", "mcp", "lsp", "install", "uninstall", "doctor"]
    for command in commands:
        p.run(f"help-{command}", command, "--help")


def before_import(p: Pass) -> None:
    p.run("status-empty-store", "status")
    p.run("stats-empty-store-json", "stats", "--json")
    p.run("search-empty-store", "search", "streaming")
    p.run("sessions-empty-store", "sessions")
    p.run("history-empty-store-json", "history", "--json")


def imports(p: Pass, empty_home: Path) -> None:
    home = str(p.home)
    p.run("import", "import", "--claude-home", home, ok=True)
    p.run("import-again-json", "import", "--claude-home", home, "--json", ok=True)
    p.run("import-missing-home", "import", "--claude-home", str(p.root / "no-such-home"))
    p.run("import-unknown-project", "import", "--claude-home", home, "--project", "/no/such/project")
    p.run("import-other-home", "import", "--claude-home", str(empty_home), "--json")


def queries(p: Pass, k: Picks, batch: Path) -> None:
    home = str(p.home)
    p.run("status", "status")
    p.run("status-json", "status", "--json")
    p.run("stats", "stats")
    p.run("stats-json", "stats", "--json")
    p.run("sessions", "sessions")
    p.run("sessions-json", "sessions", "--json")
    p.run("sessions-project-limit", "sessions", "--project", k.project_big, "--limit", "2")
    p.run("sessions-project-odd-json", "sessions", "--project", k.project_odd, "--json")
    p.run("import-project-no-wait", "import", "--claude-home", home, "--project", k.project_odd, "--no-wait")

    p.run("search-hybrid", "search", "streaming")
    p.run("search-hybrid-json", "search", "streaming", "--json")
    p.run("search-keyword", "search", "streaming", "--mode", "keyword")
    p.run("search-keyword-json", "search", "streaming", "--mode", "keyword", "--json")
    p.run("search-semantic", "search", "the build is broken", "--mode", "semantic")
    p.run("search-semantic-json", "search", "the build is broken", "--mode", "semantic", "--json")
    p.run("search-hybrid-explicit-json", "search", "pull request", "--mode", "hybrid", "--limit", "4", "--json")
    p.run("search-type", "search", "test", "--type", "tool_use", "--limit", "3")
    p.run("search-types-json", "search", "test", "--type", "user_prompt", "--type", "agent_response", "--limit",
          "5", "--json")  # fmt: skip
    p.run("search-project-json", "search", "error", "--project", k.project_big, "--limit", "3", "--json")
    p.run("search-project-odd", "search", "project", "--project", k.project_odd, "--limit", "3")
    p.run("search-since", "search", "commit", "--since", "2026-01-01", "--limit", "5")
    p.run("search-since-until-json", "search", "commit", "--since", "2026-02-10T22:00", "--until", "2026-11-01",
          "--limit", "5", "--json")  # fmt: skip
    p.run("search-session-limit", "search", "fix", "--session", k.session_big, "--limit", "2")
    p.run("search-limit-1-json", "search", "streaming", "--limit", "1", "--json")
    p.run("search-smart", "search", "streaming fix", "--smart")
    p.run("search-smart-json", "search", "streaming fix", "--smart", "--json")
    p.run("search-budget", "search", "streaming fix", "--budget", "300")
    p.run("search-budget-json", "search", "streaming fix", "--budget", "300", "--json")
    p.run("search-budget-0-json", "search", "streaming", "--budget", "0", "--json")
    p.run("search-batch-file", "search", "--batch", str(batch))
    p.run("search-batch-stdin-keyword", "search", "--batch", "-", "--mode", "keyword", stdin=batch.read_text())
    p.run("search-batch-budget", "search", "--batch", str(batch), "--budget", "200")
    p.run("search-no-hits-keyword", "search", "xyzzyplugh frobnicatorium", "--mode", "keyword")
    p.run("search-no-hits-keyword-json", "search", "xyzzyplugh frobnicatorium", "--mode", "keyword", "--json")
    p.run("search-no-hits-hybrid", "search", "xyzzyplugh frobnicatorium")
    p.run("search-no-hits-smart", "search", "xyzzyplugh frobnicatorium", "--mode", "keyword", "--smart")
    p.run("search-unknown-type", "search", "streaming", "--type", "bogus")
    p.run("search-unknown-mode", "search", "streaming", "--mode", "bogus")
    p.run("search-bad-option", "search", "streaming", "--bogus-option")
    p.run("search-no-query", "search")
    p.run("search-bad-since", "search", "streaming", "--since", "yesterday")
    p.run("search-limit-0", "search", "streaming", "--limit", "0")
    p.run("search-batch-missing-file", "search", "--batch", str(p.root / "no-such-queries.jsonl"))

    a, b = k.cites[0], k.cites[1]
    p.run("show", "show", a)
    p.run("show-json", "show", a, "--json")
    p.run("show-context-0-json", "show", b, "--context", "0", "--json")
    p.run("show-event-id", "show", k.event_id)
    p.run("show-unknown", "show", MISSING_REF)
    p.run("show-unknown-json", "show", MISSING_REF, "--json")
    p.run("timeline", "timeline", a, b)
    p.run("timeline-window-json", "timeline", a, b, "--before", "1", "--after", "1", "--json")
    p.run("timeline-one-unknown", "timeline", a, MISSING_REF, "--before", "1", "--after", "0")
    p.run("timeline-unknown", "timeline", MISSING_REF)
    p.run("timeline-bad-window", "timeline", a, "--before", "51")

    p.run("history", "history")
    p.run("history-json", "history", "--json", "--limit", "5")
    p.run("history-session", "history", "--session", k.session_recent)
    p.run("history-session-json", "history", "--session", k.session_recent, "--json")
    p.run("history-project-type", "history", "--project", k.project_big, "--type", "tool_use", "--limit", "5")
    p.run("history-since-until-json", "history", "--since", "2026-11-22", "--until", "2026-11-22T05:55", "--json")
    p.run("history-unknown-type", "history", "--type", "bogus")
    p.run("history-limit-0", "history", "--limit", "0")

    p.run("reindex", "reindex")
    p.run("reindex-json", "reindex", "--json")
    p.run("status-after-reindex-json", "status", "--json")

    no_claude = str(p.root / "no-claude" / "claude")
    p.run("doctor", "doctor", "--claude-bin", no_claude)
    p.run("doctor-json", "doctor", "--claude-bin", no_claude, "--json")
    p.run("install-without-claude", "install", "--claude-bin", no_claude)
    p.run("uninstall-without-claude", "uninstall", "--claude-bin", no_claude)
    p.run("unknown-command", "frobnicate")


def forgets(p: Pass, k: Picks) -> None:
    x, y = k.cites[2], k.cites[3]
    p.run("forget-nothing-said", "forget")
    p.run("forget-no-terminal", "forget", x)
    p.run("forget-session-no-terminal-json", "forget", "--session", k.session_small, "--json")
    p.run("forget-unknown-yes", "forget", MISSING_REF, "--yes")
    p.run("forget-before-nothing-json", "forget", "--before", "2000-01-01", "--yes", "--json")
    p.run("forget-bad-date", "forget", "--before", "someday", "--yes")
    p.run("forget-citation-yes", "forget", x, "--yes")
    p.run("show-forgotten", "show", x)
    p.run("forget-citation-yes-json", "forget", y, "-y", "--json")
    p.run("forget-session-yes", "forget", "--session", k.session_small, "--yes")
    p.run("forget-project-before-json", "forget", "--project", k.project_odd, "--before", "2026-11-22T05:53",
          "--yes", "--json")  # fmt: skip
    p.run("stats-after-forget", "stats")
    p.run("stats-after-forget-json", "stats", "--json")
    p.run("search-after-forget-json", "search", "streaming", "--mode", "keyword", "--limit", "6", "--json")
    p.run("sessions-after-forget-json", "sessions", "--json")
    p.run("status-after-forget-json", "status", "--json")


def write_batch(path: Path, project: str) -> None:
    lines = [
        {"query": "streaming"},
        {"query": "fix", "project": project, "limit": 2},
        None,
        {"query": ""},
        "this is not json",
        {"query": "test", "limit": 3, "extra": 1},
        {"query": "pull request", "limit": 1},
    ]
    text = "".join("\n" if x is None else (x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------- the passes


def inproc_pass(p: Pass, empty_home: Path) -> None:
    copy_home(p.home)
    help_pages(p)
    before_import(p)
    imports(p, empty_home)
    run_after_import(p)


def run_after_import(p: Pass) -> None:
    k = pick(p)
    if any(c == MISSING_REF for c in k.cites) or p.run(None, "show", MISSING_REF).code != 4:
        raise SystemExit(f"cli_golden: {MISSING_REF} names a stored memory; pick another missing citation")
    batch = p.root / f"queries-{p.name}.jsonl"
    write_batch(batch, k.project_big)
    queries(p, k, batch)
    forgets(p, k)


def service_pass(p: Pass, empty_home: Path, timeout: float) -> None:
    """Through a --no-watch service. Its Claude home is empty when it starts (its first scan finds nothing)
    and filled just after one of its periodic scans, then ``import`` asks the service for the import: the
    report is the service's, with real numbers, and no scan gets in between.

    The service is started here in the foreground (``serve --no-watch --claude-home``, in the background of
    this script), not with ``serve --detach``: ``serve --detach`` starts the service with the flags and then
    calls ``ensure_running``, which, if that child does not answer yet, starts a second one without them;
    whichever takes the lock first serves, so the flags are lost now and then (seen on the baseline). The
    recorded ``serve --detach`` runs find a service running, or start one without flags at the end."""
    (p.home / "projects").mkdir(parents=True)
    log = (p.root / f"service-{p.name}.log").open("wb")
    service = subprocess.Popen(
        [str(p.python), "-m", "claude_memory", "serve", "--no-watch", "--quiet", "--claude-home", str(p.home)],
        env=p.env, cwd=p.root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    log.close()
    try:
        # It opens its socket and logs "serving" just before its first scan; the scans follow every
        # SERVICE_SCAN_INTERVAL. (Failing both signs, the time the status first shows it is the anchor.)
        socket, service_log = p.data / "service.sock", p.data / "logs" / "service.log"
        deadline = time.monotonic() + 60
        while service.poll() is None and time.monotonic() < deadline:
            if socket.exists() or (service_log.exists() and "serving" in service_log.read_text(errors="replace")):
                break
            time.sleep(0.05)
        ready = time.monotonic()
        deadline = time.monotonic() + 120
        while p.status()["service"] is None:
            if service.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"cli_golden: the service did not start; see {p.root}/service-{p.name}.log")
            time.sleep(0.5)
            ready = time.monotonic()
        p.run("serve-detach-running", "serve", "--detach", "--no-watch", "--claude-home", str(p.home))
        before_import(p)
        # Fill the home right after a periodic scan, so that the import's parts run before the next one.
        since_scan = (time.monotonic() - ready) % SERVICE_SCAN_INTERVAL
        if since_scan > 3.0:
            time.sleep(SERVICE_SCAN_INTERVAL - since_scan + 0.5)
        copy_home(p.home)
        imports(p, empty_home)
        state = p.status()
        ingested = (state["service"] or {}).get("events_ingested")
        if ingested:
            raise SystemExit(
                f"cli_golden: the service's periodic scan ingested {ingested} events before the import did "
                "(the machine is too slow for the 30 s window); run the recording again"
            )
        deadline = time.monotonic() + timeout
        while state["available"] and state["pending"]:  # the import waited for the embedding; make sure
            if time.monotonic() > deadline:
                raise SystemExit(f"cli_golden: {state['pending']} events still waiting to be embedded")
            time.sleep(1.0)
            state = p.status()
        run_after_import(p)
        p.run("stop", "stop")
        service.wait(60)
        p.run("stop-not-running", "stop")
        p.run("status-after-stop", "status")
        p.run("serve-detach-start", "serve", "--detach")
        p.run("stop-detached", "stop")
    finally:
        stop_service(p)
        if service.poll() is None:
            print(f"cli_golden: the service (pid {service.pid}) is still running; killing it", file=sys.stderr)
            service.kill()
            service.wait(30)


def stop_service(p: Pass) -> None:
    """Leave no service of this pass behind (the one ``serve --detach`` starts is not our child): ``stop``,
    then SIGKILL for the pid in the lock file if it is still a service of this data directory."""
    lock = p.data / "service.lock"
    if not lock.exists():
        return
    subprocess.run(
        [str(p.python), "-m", "claude_memory", "stop", "--timeout", "30"],
        env=p.env, cwd=p.root, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    try:
        pid = int(lock.read_text().strip() or 0)
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace") if pid else ""
    except (OSError, ValueError):
        return
    if "claude_memory" in cmdline and str(p.data) in cmdline:  # still ours (not a reused pid)
        print(f"cli_golden: the service (pid {pid}) is still running; killing it", file=sys.stderr)
        os.kill(pid, 9)


def record(args: argparse.Namespace) -> int:
    src = Path(args.src).resolve()
    python = Path(args.python)
    out = Path(args.out).resolve() if args.out else None
    if not (src / "claude_memory" / "__init__.py").is_file():
        raise SystemExit(f"cli_golden: {src} holds no claude_memory package")
    if not FIXTURE_HOME.is_dir():
        raise SystemExit(f"cli_golden: no fixtures at {FIXTURE_HOME}")
    if not args.no_model and not MODEL.is_dir():
        raise SystemExit(f"cli_golden: no embedding model at {MODEL} (or use --no-model)")
    if out is not None and out.exists() and any(out.iterdir()):
        raise SystemExit(f"cli_golden: {out} is not empty")
    passes = [name for name in ("inproc", "service") if name in args.passes.split(",")]
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="cli-golden-"))
    try:
        (root / "user-home").mkdir()
        empty_home = root / "other-claude-home"
        (empty_home / "projects").mkdir(parents=True)
        for name in passes:
            p = Pass(name, root, src, python, not args.no_model, out, args.raw)
            if p.out is not None:
                p.out.mkdir(parents=True)
            where = subprocess.run(
                [str(python), "-c", "import claude_memory; print(claude_memory.__file__)"],
                env=p.env, capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            if not Path(where).resolve().is_relative_to(src):
                raise SystemExit(f"cli_golden: claude_memory imports from {where}, not from {src}")
            print(f"pass {name}: claude_memory from {where}; temporary files in {root}", flush=True)
            pass_started = time.monotonic()
            if name == "inproc":
                inproc_pass(p, empty_home)
            else:
                service_pass(p, empty_home, args.timeout)
            print(f"pass {name}: {p.count} invocations in {time.monotonic() - pass_started:.0f} s", flush=True)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"recorded in {time.monotonic() - started:.0f} s" + (f" to {out}" if out else ""))
    return 0


# ---------------------------------------------------------------------- comparing


def compare(a: Path, b: Path, show: Callable[[str], None] = print) -> int:
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*.txt")}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*.txt")}
    if not files_a and not files_b:
        raise SystemExit(f"cli_golden: no recordings (*.txt) in {a} or {b}")
    same = differ = 0
    for rel in sorted(files_a | files_b):
        text_a = (a / rel).read_text(encoding="utf-8") if rel in files_a else ""
        text_b = (b / rel).read_text(encoding="utf-8") if rel in files_b else ""
        if rel in files_a and rel in files_b and text_a == text_b:
            same += 1
            continue
        differ += 1
        name_a = f"{a.name}/{rel}" if rel in files_a else "/dev/null"
        name_b = f"{b.name}/{rel}" if rel in files_b else "/dev/null"
        diff = difflib.unified_diff(text_a.splitlines(True), text_b.splitlines(True), name_a, name_b)
        show("".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff))
    show(f"{same} files identical" + (f", {differ} differ" if differ else ""))
    return 1 if differ else 0


def renormalise(out: Path) -> int:
    """Rewrite each recording's .txt from its .raw (recorded with --raw) with the masks as they are now."""
    raws = sorted(out.glob("*/*.raw"))
    if not raws:
        raise SystemExit(f"cli_golden: no .raw files in {out} (record with --raw)")
    for raw in raws:
        text = normalise(raw.read_text(encoding="utf-8"), [], raw.parent.name)
        raw.with_suffix(".txt").write_text(text, encoding="utf-8")
    print(f"{len(raws)} files renormalised in {out}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", default=str(DEFAULT_SRC), help="the directory holding claude_memory (PYTHONPATH)")
    parser.add_argument("--python", default=str(DEFAULT_PYTHON if DEFAULT_PYTHON.exists() else sys.executable))
    parser.add_argument("--out", help="record into this (new or empty) directory")
    parser.add_argument("--renormalise", metavar="DIR", help="rewrite a --raw recording's .txt files with the masks")
    parser.add_argument("--compare", nargs=2, metavar=("DIR_A", "DIR_B"), help="diff two recordings")
    parser.add_argument("--no-model", action="store_true", help="keyword search only (no embedding model)")
    parser.add_argument("--passes", default="inproc,service", help="which passes to run (default: both)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--raw", action="store_true", help="also write each output unmasked (.raw, not compared)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the service's embedding")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the finally blocks stop the service
    if args.renormalise:
        return renormalise(Path(args.renormalise))
    if args.compare:
        a, b = (Path(d) for d in args.compare)
        for d in (a, b):
            if not d.is_dir():
                raise SystemExit(f"cli_golden: {d} is not a directory")
        return compare(a, b)
    return record(args)


if __name__ == "__main__":
    sys.exit(main())
