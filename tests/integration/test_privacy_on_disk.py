"""Planted credentials and <private> blocks never reach any byte under the data directory.

The store is written uncompressed for this test (DuckDB otherwise compresses strings, which would make
a raw byte scan blind), and canary strings planted beside every secret prove the scan sees stored text.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from claude_memory.service.memory import Memory
from support import own_fixtures

Cli = Callable[..., subprocess.CompletedProcess[str]]

SECRETS = {
    "anthropic": "sk-ant-api03-"
    + "Zq7Xv2Lm9Pw4Rt6Yu8Io1Ka3Sd5Fg7Hj9Kl2Zx4Cv6Bn8Mq1We3Rt5Yu7Io9Pa2Sd4Fg6Hj8Kl1Zx3Cv5Bn7Mq9-AbCdEf",
    "openai": "sk-proj-" + "T3BlbkFJq8Wz5Xc2Vb7Nm4Lk9Jh6Gf3Ds1Aq8Wz5Xc2Vb7Nm4Lk9Jh6Gf3Ds1Aq8Wz5Xc2Vb7Nm",
    "github": "ghp_" + "R8tY2uI9oP4aS6dF1gH3jK5lZ7xC0vB2nM4q",
    "aws_key_id": "AKIAZ7Q2XJ5M4N8P3R6T",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQUOKKA1EY",
    "slack": "xoxb-" + "2048736451-9876543210123-AbCdEfGhIjKlMnOpQrStUvWx",
    "google": "AIza" + "SyD4x9Kq2Lm7Np3Rs8Tv1Wx6Yz0Ab5Cd4Ef",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ6ZWJyYS11c2VyIiwiaWF0IjoxNzAwMDAwMDAwfQ."
    "Xk9vQm2Lp7Rt4Wz8Yc1Nd6Hf3Jg5Ks0Ma2Qb7Uc9Ve",
    "url_password": "Tr0ub4dor-and-Zebra3",
    "env_password": "correct-horse-battery-staple-9Q",
    "bearer": "abc123def456ghi789jkl012mno345pqr678",
    "pem_body": "MIIEowIBAAKCAQEAzebraquokkaPRIVATEKEYBODYq8Wz5Xc2Vb7Nm4Lk9Jh6Gf3Ds1",
    "private_block": "my home address is 42 Zebra Quokka Lane",
    "private_bracket": "the vault combination is 31-41-59",
}
PEM = "\n".join(
    ["-----BEGIN RSA PRIVATE KEY-----", SECRETS["pem_body"], SECRETS["pem_body"][::-1], "-----END RSA PRIVATE KEY-----"]
)
CANARY = "canaryvisible"  # planted next to each secret; must be found, proving the scan can see text


def _line(obj: dict[str, object]) -> str:
    return json.dumps(obj) + "\n"


def _base(uuid: str, kind: str, **extra: object) -> dict[str, object]:
    return {
        "type": kind,
        "uuid": uuid,
        "sessionId": "sess-1",
        "timestamp": "2026-05-01T10:00:00.000Z",
        "cwd": "/nonexistent/secretproj",
        **extra,
    }


def write_home(home: Path) -> None:
    folder = home / "projects" / "-nonexistent-secretproj"
    (folder / "sess-1" / "subagents").mkdir(parents=True)
    s = SECRETS
    long_output = "x" * 19_990 + f" token={s['bearer']} " + "y" * 500  # the secret straddles the 20,000 cut
    lines = [
        {"type": "summary", "summary": f"title {CANARY}1 with {s['github']}", "leafUuid": "x"},
        _base(
            "u1",
            "user",
            message={
                "role": "user",
                "content": (
                    f"{CANARY}2 deploy with ANTHROPIC_API_KEY={s['anthropic']} and "
                    f"<private>{s['private_block']}</private> then postgres://app:{s['url_password']}@db.internal:5432/app"
                ),
            },
        ),
        _base(
            "a1",
            "assistant",
            message={
                "id": "msg_1",
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"{CANARY}3 I will use the key {s['openai']} and the JWT {s['jwt']}."}
                ],
            },
        ),
        _base(
            "a2",
            "assistant",
            message={
                "id": "msg_1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {
                            "command": f"export DB_PASSWORD={s['env_password']} && "
                            f"aws configure set aws_secret_access_key {s['aws_secret']} # {CANARY}4 "
                            + "z" * 290
                            + f" AWS_ACCESS_KEY_ID={s['aws_key_id']}",
                            "description": f"configure {CANARY}5",
                        },
                    }
                ],
            },
        ),
        _base(
            "r1",
            "user",
            message={
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": f"{CANARY}6 SLACK={s['slack']}\nGOOGLE_KEY={s['google']}\n{PEM}\n{long_output}",
                    }
                ],
            },
            toolUseResult={"stdout": f"{CANARY}7 Authorization: Bearer {s['bearer']}", "stderr": ""},
        ),
        _base(
            "u2",
            "user",
            message={
                "role": "user",
                "content": (f"{CANARY}8 [private]{s['private_bracket']}[/private] is bracket-tagged"),
            },
        ),
    ]
    (folder / "sess-1.jsonl").write_text(
        "".join(_line(x) for x in lines) + '{"type":"user","message":{"content":"' + s["github"] + "\n"  # malformed
    )
    agent = folder / "sess-1" / "subagents" / "agent-abc.jsonl"
    agent.write_text(
        _line(
            _base(
                "s1",
                "user",
                isSidechain=True,
                agentId="abc",
                message={"role": "user", "content": f"{CANARY}9 use token {s['github']} to push"},
            )
        )
    )
    agent.with_suffix(".meta.json").write_text(
        json.dumps({"agentType": "general", "description": f"push with {s['github']}"})
    )


def fragments(secret: str) -> list[str]:
    """The secret and every 12-character window of it: a partial leak is a leak."""
    return [secret] + [secret[i : i + 12] for i in range(0, max(1, len(secret) - 11), 4)]


def test_no_planted_secret_or_private_text_reaches_disk(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"privacy": {"private_formats": ["xml", "bracket"]}}))
    with Memory(data) as memory:
        memory.con.execute("SET force_compression = 'uncompressed'")
        report = memory.import_history(home, settle_seconds=0)
        assert report.events_new >= 5 and report.privacy.secrets_masked >= 12
        assert report.privacy.private_sections == 2
        assert sum(report.lines_skipped.values()) == 1  # the malformed line, reported without its content
        report_text = json.dumps(report.to_json())
    raw = b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file())
    for i in (1, 2, 3, 4, 5, 6, 8, 9):  # 7 sits in toolUseResult.stdout, which is not stored at all
        assert f"{CANARY}{i}".encode() in raw, f"canary {i} not visible: the scan would be blind"
    for name, secret in SECRETS.items():
        for piece in fragments(secret):
            assert piece.encode() not in raw, f"{name} leaked to disk: {piece!r}"
            assert piece not in report_text, f"{name} leaked into the import report"


def test_secrets_typed_in_a_real_session_never_reach_disk(fixtures_home: Path, tmp_path: Path) -> None:
    """The same over what Claude Code itself wrote (tests/fixtures): the credentials and <private> sections typed
    in prompts are also in the answer that repeats them, in api-request-blob and queue lines, in the hook
    payloads' prompt and in last-prompt lines; none of it may be stored."""
    data = tmp_path / "data"
    session = fixtures_home / "projects" / "-home-dev-shop" / f"{own_fixtures.SECRETS}.jsonl"
    written = session.read_text(encoding="utf-8")
    for planted in (*own_fixtures.SECRETS_IN_PROMPTS, *own_fixtures.PRIVATE_IN_PROMPTS):
        assert written.count(planted) > 2, planted  # in the prompt line and Claude Code's copies of it
    with Memory(data) as memory:
        memory.con.execute("SET force_compression = 'uncompressed'")
        report = memory.import_history(fixtures_home, settle_seconds=0)
        # the three typed credentials and the answer repeating one; the .env.example it wrote holds placeholders
        assert report.privacy.secrets_masked >= 4 and report.privacy.private_sections == 3
        stored = [
            str(r[0])
            for r in memory.con.execute(
                "SELECT text FROM events WHERE session_id = ?", [own_fixtures.SECRETS]
            ).fetchall()
        ]
    raw = b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file())
    assert b"db.internal:5432/shop" in raw and b"only for today" in raw  # the text around them is stored
    assert sum("[REDACTED]" in t for t in stored) >= 3 and sum("[PRIVATE]" in t for t in stored) >= 3
    for secret in (*own_fixtures.SECRETS_IN_PROMPTS, *own_fixtures.PRIVATE_IN_PROMPTS):
        for piece in fragments(secret):
            assert piece.encode() not in raw, f"leaked to disk: {piece!r}"


def test_cli_output_and_errors_do_not_echo_secrets(tmp_path: Path, cli: Cli) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"privacy": {"private_formats": ["xml", "bracket"]}}))
    runs = [
        cli(data, *args)
        for args in (
            ["import", "--claude-home", str(home), "--settle-seconds", "0"],
            ["search", "deploy key token", "--json"],
            ["history", "--json"],
            ["sessions", "--json"],
        )
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
        for name, secret in SECRETS.items():
            assert secret not in run.stdout + run.stderr, name
    assert "[REDACTED]" in runs[2].stdout and "[PRIVATE]" in runs[2].stdout
