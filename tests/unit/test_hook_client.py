"""The hook client: standard library only, fast to import, and never in Claude Code's way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest

from claude_memory.core.locations import MAX_SOCKET_PATH
from claude_memory.core.paths import RuntimePaths, default_data_dir
from claude_memory.service.lock import holder_pid

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "claude-memory-hook"


@pytest.fixture(autouse=True)
def _no_service_left(tmp_path: Path) -> Iterator[None]:
    """A hook that finds no service starts one: stop it, so no process outlives the test."""
    yield
    data = tmp_path / "data"
    env = {**os.environ, "CLAUDE_MEMORY_HOME": str(data)}
    pattern = f"--data-dir {data} serve"
    deadline = time.monotonic() + 60
    while subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True).returncode == 0:  # one is starting
        if holder_pid(RuntimePaths(data).lock) is not None:
            subprocess.run([sys.executable, "-m", "claude_memory", "stop"], env=env, capture_output=True, timeout=60)
        assert time.monotonic() < deadline, "a memory service outlived the test"
        time.sleep(0.1)
    assert holder_pid(RuntimePaths(data).lock) is None


def _run(data: Path, event: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    env |= {"CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}
    return subprocess.run([str(HOOK), event], input=stdin, env=env, capture_output=True, timeout=60)


def test_the_hook_client_imports_nothing_but_the_standard_library() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import claude_memory.hooks.client; "
        "print(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'__main__'}))"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code, str(REPO / "server")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.replace("'", '"')) == ["claude_memory"]


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"hook_event_name": 3}'])
def test_a_broken_payload_exits_0_quietly_and_is_logged(tmp_path: Path, stdin: bytes) -> None:
    done = _run(tmp_path / "data", "UserPromptSubmit", stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "UserPromptSubmit:" in (tmp_path / "data" / "logs" / "hooks.log").read_text(encoding="utf-8")


def test_a_capture_is_spooled_even_when_no_service_can_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    payload = {"hook_event_name": "Stop", "session_id": "s1", "transcript_path": "/t/s1.jsonl",
               "last_assistant_message": "the deploy key is hunter2"}  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    env |= {"CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_PYTHON": "/nonexistent/python", "PATH": "/usr/bin:/bin"}
    # The launcher itself cannot run: Claude Code sees a non-zero exit, which it treats as non-blocking.
    broken = subprocess.run([str(HOOK), "Stop"], input=json.dumps(payload).encode(), env=env, capture_output=True)
    assert broken.returncode != 2  # 2 would block Claude Code
    done = _run(data, "Stop", json.dumps(payload).encode())
    assert (done.returncode, done.stdout) == (0, b"")
    lines = [line for line in RuntimePaths(data).spool.read_text(encoding="utf-8").splitlines() if line]
    # Which transcript to read, never the content: the service reads it through the privacy filter.
    assert [json.loads(line)["payload"] for line in lines] == [
        {"hook_event_name": "Stop", "session_id": "s1", "transcript_path": "/t/s1.jsonl"}
    ]
    assert "hunter2" not in RuntimePaths(data).spool.read_text(encoding="utf-8")


def test_a_pre_edit_hook_without_a_service_is_silent_and_starts_nothing(tmp_path: Path) -> None:
    """PreToolUse (registered for edits) is a note worth little against a delay before every edit: with no
    service it prints nothing, spools nothing and starts no service; the capture hooks do that."""
    data = tmp_path / "data"
    payload = {"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Edit", "tool_use_id": "toolu_1",
               "tool_input": {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"}}  # fmt: skip
    started = time.monotonic()
    done = _run(data, "PreToolUse", json.dumps(payload).encode())
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert time.monotonic() - started < 5
    assert not RuntimePaths(data).spool.exists() and holder_pid(RuntimePaths(data).lock) is None
    assert subprocess.run(["pgrep", "-f", "--", f"--data-dir {data} serve"], capture_output=True).returncode != 0


def test_data_dir_rule_matches_platformdirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CLAUDE_MEMORY_HOME", raising=False)
    for xdg in (None, str(tmp_path / "xdg")):
        if xdg is None:
            monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_DATA_HOME", xdg)
        assert default_data_dir() == Path(platformdirs.user_data_dir("claude-memory", appauthor=False))
    monkeypatch.setenv("CLAUDE_MEMORY_HOME", str(tmp_path / "mine"))
    assert default_data_dir() == tmp_path / "mine"


def test_a_socket_path_too_long_for_unix_goes_to_a_per_user_temp_directory(tmp_path: Path) -> None:
    short = RuntimePaths(tmp_path)
    assert short.socket == tmp_path / "service.sock"
    deep = RuntimePaths(tmp_path / ("d" * 120))
    assert len(str(deep.socket)) <= MAX_SOCKET_PATH and deep.socket.parent.name == f"claude-memory-{os.getuid()}"
    assert RuntimePaths(tmp_path / ("d" * 120)).socket == deep.socket  # stable
    assert RuntimePaths(tmp_path / ("e" * 120)).socket != deep.socket


def test_the_hook_clients_request_is_what_the_service_takes() -> None:
    from claude_memory import wire
    from claude_memory.service.operations import registry

    line = wire.hook_request("UserPromptSubmit", b'{"prompt": "hi", "session_id": "s"}')
    request = json.loads(line)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert (request["id"], request["v"], request["method"]) == (1, wire.PROTOCOL_VERSION, "hook")
    op = registry().get("hook")
    assert op is not None and op.service_only
    sent = op.params.model_validate(request["params"]).payload
    assert wire.parse_payload(sent) == {"prompt": "hi", "session_id": "s"}


@pytest.mark.parametrize(
    "payload",
    [
        b'{}},"method":"shutdown","params":{},"x":{"y":{}',  # closes the payload early to splice a method in
        b'{"prompt": "a \\"quoted\\" \\\\ back\\\\slash", "session_id": "s"}',
        b'{"prompt": "\xc3\xa9t\xc3\xa9 \xf0\x9f\x99\x82 \\u0000", "session_id": "s"}',
        b'{"a": "\\"}, \\"method\\": \\"shutdown"}',
    ],
)
def test_a_hook_payload_is_carried_as_data_and_cannot_change_the_request(payload: bytes) -> None:
    from claude_memory import wire

    request = json.loads(wire.hook_request("Stop", payload))
    assert set(request) == {"id", "v", "method", "params"} and request["method"] == "hook"
    assert set(request["params"]) == {"event", "payload"}
    assert request["params"]["payload"] == payload.decode()  # exactly the text the hook read


def test_the_service_parses_a_hook_payload_within_depth_and_size_limits() -> None:
    from claude_memory import wire

    deep = "{" + '"a":{' * 100_000 + "}" * 100_001
    for text, reason in [
        (deep, "nested deeper than"),
        ("[" * 100_000, "nested deeper than"),
        ('{}},"method":"shutdown","params":{},"x":{"y":{}', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ("x" * (wire.MAX_PAYLOAD + 1), "over 32 MB"),
    ]:
        with pytest.raises(ValueError, match=reason):
            wire.parse_payload(text)
    nested = "{" + '"a":{' * (wire.MAX_PAYLOAD_DEPTH - 1) + "}" * wire.MAX_PAYLOAD_DEPTH
    assert wire.parse_payload(nested)["a"] is not None
    # brackets inside strings are text, not nesting
    assert wire.parse_payload('{"p": "' + "[{" * 1000 + '\\" ]"}') == {"p": "[{" * 1000 + '" ]'}


def test_a_temp_socket_directory_of_another_user_or_open_to_others_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from claude_memory.core.paths import socket_dir, socket_dirs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first, second, third = (Path(p) for p in socket_dirs()[:3])
    assert socket_dir() == (first, [])  # not there yet: the service creates it, private
    first.mkdir(mode=0o700)
    assert socket_dir() == (first, [])
    first.chmod(0o755)  # others may enter: refused
    assert socket_dir() == (second, [str(first)])
    second.mkdir(mode=0o700)
    if os.getuid() == 0:  # only root can give a directory to another user
        os.chown(second, 65534, 65534)
        assert socket_dir() == (third, [str(first), str(second)])
    assert RuntimePaths(tmp_path / ("d" * 120)).socket.parent == socket_dir()[0]
