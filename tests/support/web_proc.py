"""The dashboard as real processes for the tests: a Claude home imported into a data directory, the memory service
watching that home, and ``claude-memory web`` on a free loopback port in front of it."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from claude_memory.client.connection import ServiceClient
from support import service_proc
from support.waiting import wait_for


@dataclass
class Dashboard:
    data: Path
    home: Path
    base: str  # http://127.0.0.1:PORT
    login_url: str  # the sign-in address the command printed (it works once)
    token: str  # <data>/web-token
    imported: dict[str, Any]  # the import report (import --json)
    proc: subprocess.Popen[str]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def client(self, **kwargs: Any) -> httpx.Client:
        """An HTTP client with the token (Authorization: Bearer)."""
        headers = {"Authorization": f"Bearer {self.token}"} | kwargs.pop("headers", {})
        return httpx.Client(base_url=self.base, headers=headers, timeout=60, **kwargs)

    def sign_in_url(self) -> str:
        """A new one-time sign-in address, asked of the running dashboard with the token."""
        with self.client() as client:
            answer = client.post("/signin")
        assert answer.status_code == 200, answer.text
        return str(answer.json()["url"])

    def api(self, name: str, **params: Any) -> Any:
        with self.client() as client:
            answer = client.get(f"/api/v1/{name}", params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()


def cli(data: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claude_memory", *args], env=service_proc.env(data, home),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@contextmanager
def dashboard(data: Path, home: Path) -> Iterator[Dashboard]:
    """``home`` imported into ``data``, the service and the dashboard running; both stopped after."""
    report = cli(data, home, "import", "--claude-home", str(home), "--json")
    assert report.returncode == 0, report.stderr
    service = service_proc.serve(data, home)
    web: subprocess.Popen[str] | None = None
    try:
        with ServiceClient(data, timeout=30) as client:
            wait_for(client.ping, "the memory service")
        web = subprocess.Popen(
            [sys.executable, "-m", "claude_memory", "web", "--port", "0", "--no-start"],
            env=service_proc.env(data, home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert web.stdout is not None
        line = web.stdout.readline()
        assert "/login?code=" in line, f"no address printed: {line!r} {web.stderr.read() if web.poll() else ''}"
        login_url = line.rsplit(" ", 1)[1].strip()
        base = login_url.split("/login")[0]
        token = (data / "web-token").read_text().strip()
        yield Dashboard(data, home, base, login_url, token, json.loads(report.stdout), web)
    finally:
        if web is not None:
            web.terminate()
            web.wait(20)
        service_proc.stop(data)
        service.wait(30)


def append_prompt(transcript: Path, *texts: str) -> list[str]:
    """Append user prompts to a Claude Code transcript in one write, each shaped like its last user line (same
    session, cwd, version), as Claude Code would write them live; returns the new lines' uuids."""
    lines = [json.loads(raw) for raw in transcript.read_text(encoding="utf-8").splitlines() if raw.strip()]
    template = next(
        line for line in reversed(lines)
        if line.get("type") == "user" and not line.get("isMeta") and not line.get("isCompactSummary")
        and "toolUseResult" not in line and not line.get("isSidechain")
    )  # fmt: skip
    parent = next(line for line in reversed(lines) if line.get("uuid"))["uuid"]
    written, uuids = [], []
    for text in texts:
        uuids.append(str(uuid.uuid4()))
        written.append(json.dumps(template | {
            "uuid": uuids[-1],
            "parentUuid": parent,
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "message": {"role": "user", "content": text},
        }))  # fmt: skip
        parent = uuids[-1]
    with transcript.open("a", encoding="utf-8") as out:
        out.write("".join(line + "\n" for line in written))
    return uuids
