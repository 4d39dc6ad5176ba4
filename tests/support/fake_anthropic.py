"""A small fake of the Anthropic Messages API for running the real Claude Code CLI offline.

Written for this project's tests and fixture generator (standard library only). It listens on the
loopback interface, answers ``POST /v1/messages`` (streamed as server-sent events when the request asks
for it, else one JSON message, with a ``request-id`` header) and ``POST /v1/messages/count_tokens``, and
keeps every request so a test can check what the model would have seen.

Replies follow a script of ``Rule``s. A *turn* starts with a prompt: the last user message that carries
text besides Claude Code's ``<system-reminder>`` sections (hook context, environment) and no tool result.
Each request Claude Code sends in that turn is a *step*: step 0 answers the prompt, step 1 the first tool
result, and so on. The first rule whose ``prompt`` occurs in the turn's prompt (and whose ``needs_tool``,
if any, is offered) gives the reply for the step, ``replies[step]``; past the last reply the turn ends
with the rule's ``done`` text. A rule's ``input_tokens`` is reported as its replies' usage (a large number
makes Claude Code compact on its own). Requests no rule answers get built-in replies: a ``<summary>`` for
Claude Code's compaction request, a title for its side requests, and otherwise a text that repeats the
prompt.

Use it in-process (the ``fake_anthropic`` fixture in tests/conftest.py does this)::

    with FakeAnthropic([Rule("DEPLOY", [[text("On it."), tool("Bash", command="make deploy")]])]) as api:
        env = {**os.environ, **api.env(), "HOME": scratch_home}  # then run `claude -p ...` with env
        ...
        api.bodies()  # every /v1/messages request body, in arrival order

or as a process (``python tests/support/fake_anthropic.py --port-file PORT --script rules.json``), where
the script is ``{"rules": [{"prompt": ..., "needs_tool": ..., "replies": [[block, ...], ...]}]}``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import signal
import sys
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Block = dict[str, Any]

SUMMARY = (
    "<summary>\n"
    "1. Primary Request and Intent: the user worked through the scripted tasks of this session.\n"
    "2. Key Technical Concepts: shell commands, reading and editing files.\n"
    "3. Files and Code Sections: the files named in the tool calls above.\n"
    "4. Errors and fixes: none left open.\n"
    "5. Pending Tasks: none.\n"
    "6. Current Work: the last request was answered.\n"
    "</summary>"
)
REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
COMPACT_ASK = "Respond with TEXT ONLY"  # in the request that asks for a compaction summary (2.1.330)
CONTINUED = "This session is being continued from a previous conversation"  # the summary, as the next prompt
USAGE = {"input_tokens": 120, "output_tokens": 24, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def text(value: str) -> Block:
    """A text block of a reply."""
    return {"type": "text", "text": value}


def thinking(value: str) -> Block:
    """A thinking block of a reply (the signature is filled in)."""
    return {"type": "thinking", "thinking": value}


def tool(name: str, **arguments: Any) -> Block:
    """A tool_use block of a reply (the id is filled in)."""
    return {"type": "tool_use", "name": name, "input": arguments}


@dataclass
class Rule:
    """Replies for the turns whose prompt contains ``prompt``: ``replies[n]`` answers step n."""

    prompt: str
    replies: list[list[Block]]
    needs_tool: str | None = None
    done: str = "Done."  # the turn's last text, once the replies run out
    input_tokens: int | None = None  # reported as the replies' usage: a large number makes Claude Code compact

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Rule:
        return cls(
            obj["prompt"], obj.get("replies", []), obj.get("needs_tool"), obj.get("done", "Done."),
            obj.get("input_tokens"),
        )  # fmt: skip


@dataclass
class Request:
    """One request as received: path, headers of interest and the JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    reply: list[Block] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: dict(USAGE))

    @property
    def is_messages(self) -> bool:
        return self.path.startswith("/v1/messages") and "count_tokens" not in self.path


def _blocks(message: dict[str, Any]) -> list[Block]:
    content = message.get("content")
    if isinstance(content, str):
        return [text(content)]
    return [b for b in content or [] if isinstance(b, dict)]


def _texts(blocks: Iterable[Block]) -> str:
    return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def spoken(blocks: Iterable[Block]) -> str:
    """The text of a message without Claude Code's <system-reminder> sections (hook context, environment)."""
    return REMINDER.sub("", _texts(blocks)).strip()


def turn_of(body: dict[str, Any]) -> tuple[str, int]:
    """The text of the turn's prompt (the last user message with text besides system reminders and without a
    tool result) and the step: how many assistant messages came after it."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        blocks = _blocks(message)
        if any(b.get("type") == "tool_result" for b in blocks):
            continue
        prompt = spoken(blocks)
        if not prompt:
            continue
        step = sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")
        return prompt, step
    return "", 0


def tools_offered(body: dict[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return _texts(b for b in system or [] if isinstance(b, dict))


class Script:
    """Chooses the reply to a request body."""

    def __init__(self, rules: Sequence[Rule] = ()) -> None:
        self.rules = list(rules)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def _tool_id(self) -> str:
        with self._lock:
            return f"toolu_fake{next(self._ids):04d}"

    def _filled(self, blocks: list[Block]) -> list[Block]:
        out = []
        for block in blocks:
            block = json.loads(json.dumps(block))
            if block["type"] == "tool_use":
                block.setdefault("id", self._tool_id())
                block.setdefault("input", {})
            elif block["type"] == "thinking":
                block.setdefault("signature", "ZmFrZS1zaWduYXR1cmU=")
            out.append(block)
        return out

    def reply(self, body: dict[str, Any]) -> tuple[list[Block], dict[str, int]]:
        """The reply's content blocks and its usage."""
        content, rule = self._reply(body)
        usage = dict(USAGE)
        if rule is not None and rule.input_tokens is not None:
            usage["input_tokens"] = rule.input_tokens
        return content, usage

    def _reply(self, body: dict[str, Any]) -> tuple[list[Block], Rule | None]:
        prompt, step = turn_of(body)
        offered = tools_offered(body)
        last = _blocks((body.get("messages") or [{}])[-1])
        asked = _texts(last)
        if COMPACT_ASK in asked:
            return [text(SUMMARY)], None
        for rule in self.rules:
            if rule.prompt not in prompt or (rule.needs_tool and rule.needs_tool not in offered):
                continue
            if step < len(rule.replies):
                return self._filled(rule.replies[step]), rule
            return [text(rule.done)], rule
        if not offered and ("summary" in asked.lower() or "summar" in _system_text(body).lower()):
            return [text(SUMMARY)], None  # a compaction request without tools
        if not offered:
            return [text("Fake session title")], None  # side requests (titles, topics)
        if any(b.get("type") == "tool_result" for b in last):
            return [text("Done.")], None
        if prompt.startswith("<task-notification>"):
            return [text("The background task has finished.")], None
        if prompt.startswith(CONTINUED):
            return [text("Picking up where the summary left off.")], None  # after an automatic compaction
        return [text("You said: " + " ".join(prompt.split())[:200])], None


class FakeAnthropic:
    """The fake API on 127.0.0.1 (a free port unless given), served from a background thread."""

    def __init__(
        self, rules: Sequence[Rule] = (), *, port: int = 0, request_ids: bool = True, deterministic_ids: bool = False
    ) -> None:
        self.script = Script(rules)
        self.request_ids = request_ids
        self._numbers = itertools.count(1) if deterministic_ids else None
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """What Claude Code needs to talk to this fake instead of the real API."""
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def bodies(self) -> list[dict[str, Any]]:
        """The bodies of the /v1/messages requests received so far."""
        with self._lock:
            return [r.body for r in self.requests if r.is_messages]

    def saw(self, needle: str) -> bool:
        """Whether any request carried ``needle`` anywhere in its body."""
        return any(needle in json.dumps(body, ensure_ascii=False) for body in self.bodies())

    def new_id(self, prefix: str) -> str:
        """An id for a message or request: numbered (the generator's runs repeat them) or random."""
        if self._numbers is not None:
            with self._lock:
                return f"{prefix}{next(self._numbers):020d}"
        return prefix + uuid.uuid4().hex[:20]

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)


def _handler(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _json(self, status: int, obj: object, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(size) or b"{}")
            except ValueError:
                body = {}
            keep = ("anthropic-version", "anthropic-beta", "user-agent", "x-app")
            headers = {k.lower(): v for k, v in self.headers.items() if k.lower() in keep}
            request = Request(self.path, headers, body if isinstance(body, dict) else {})
            if "count_tokens" in self.path:
                api._record(request)
                return self._json(200, {"input_tokens": 1000})
            if not request.is_messages:
                api._record(request)
                return self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})
            content, usage = api.script.reply(request.body)
            request.reply, request.usage = content, usage
            api._record(request)
            stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
            message_id = api.new_id("msg_fake_")
            extra = {"request-id": api.new_id("req_fake_")} if api.request_ids else {}
            model = str(request.body.get("model") or "claude-fake")
            if not request.body.get("stream"):
                message = {"id": message_id, "type": "message", "role": "assistant", "model": model,
                           "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}  # fmt: skip
                return self._json(200, message, extra)
            self.send_response(200)
            for key, value in {**extra, "content-type": "text/event-stream", "cache-control": "no-cache"}.items():
                self.send_header(key, value)
            self.send_header("connection", "close")
            self.end_headers()
            self._stream(message_id, model, content, stop, usage)
            self.close_connection = True

        def _event(self, name: str, data: dict[str, Any]) -> None:
            self.wfile.write(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode())

        def _stream(self, message_id: str, model: str, content: list[Block], stop: str, usage: dict[str, int]) -> None:
            start = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
                     "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}  # fmt: skip
            self._event("message_start", {"message": start})
            for index, block in enumerate(content):
                kind = block["type"]
                if kind == "text":
                    opening: Block = {"type": "text", "text": ""}
                    deltas = [{"type": "text_delta", "text": block["text"]}]
                elif kind == "thinking":
                    opening = {"type": "thinking", "thinking": "", "signature": ""}
                    deltas = [
                        {"type": "thinking_delta", "thinking": block["thinking"]},
                        {"type": "signature_delta", "signature": block["signature"]},
                    ]
                else:
                    opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                    deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
                self._event("content_block_start", {"index": index, "content_block": opening})
                for delta in deltas:
                    self._event("content_block_delta", {"index": index, "delta": delta})
                self._event("content_block_stop", {"index": index})
            delta = {"stop_reason": stop, "stop_sequence": None}
            self._event("message_delta", {"delta": delta, "usage": {"output_tokens": usage["output_tokens"]}})
            self._event("message_stop", {})
            self.wfile.flush()

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the fake Anthropic API on 127.0.0.1 until SIGTERM.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--script", type=Path, help='JSON: {"rules": [{"prompt", "replies", "needs_tool"}]}')
    parser.add_argument("--record", type=Path, help="append each request (path and body) as a JSON line")
    args = parser.parse_args(argv)
    rules = [Rule.from_json(r) for r in json.loads(args.script.read_text())["rules"]] if args.script else []
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with FakeAnthropic(rules, port=args.port) as api:
        if args.port_file:
            args.port_file.write_text(str(api.port))
        print(f"fake Anthropic API on {api.url}", flush=True)
        seen = 0
        while True:
            stopping = stop.wait(0.2)
            if args.record:
                with api._lock:
                    new, seen = api.requests[seen:], len(api.requests)
                with args.record.open("a", encoding="utf-8") as fh:
                    fh.writelines(json.dumps({"path": r.path, "body": r.body, "reply": r.reply}) + "\n" for r in new)
            if stopping:
                return 0


if __name__ == "__main__":
    sys.exit(main())
