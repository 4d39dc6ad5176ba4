"""Deterministic generator of realistic Claude Code transcript trees (benchmarks and kill tests).

``generate(dest, n_events, seed)`` writes ``dest/projects/<encoded-cwd>/<session-uuid>.jsonl`` files (plus
``<session-uuid>/subagents/agent-<id>.jsonl`` and ``.meta.json`` for subagents) shaped like Claude Code
2.1.x transcripts, and returns a :class:`CorpusTruth` counted while writing (independently of any parser).

Everything is derived from ``random.Random(seed)`` with a built-in vocabulary (stdlib only, no network, no
dependency on fixtures), so the same ``seed`` and ``n_events`` produce byte-identical trees.

What an importer sees (all of it deliberate):

* ``user`` lines with *string* content are human prompts, except ``isMeta`` lines (``<local-command-caveat>``,
  ``<system-reminder>`` hook context), ``isCompactSummary`` lines, ``<task-notification>`` prompts and
  ``[Request interrupted by user]`` (mostly written as a list with one text block, sometimes as a string).
* one API message = several ``assistant`` lines (thinking?, text?, tool_use*) sharing ``message.id`` and
  ``requestId``; some messages have no text block (thinking/tool_use only) and are not "responses".
* every ``tool_use`` gets one ``tool_result`` user line later in the same file (after all tool_use lines of
  its message); ``toolUseResult`` is a dict per tool, a string for errors, a list for MCP tools.
* prompt/response text is duplicated in noise the importer must ignore: ``last-prompt.lastPrompt``,
  ``queue-operation.content``, ``progress`` ``agent_progress`` copies of subagent messages (including their
  tool_use blocks), ``attachment`` ``hook_success.stdout`` / ``hook_additional_context.rendered``.
* subagents: ``<session>/subagents/agent-<id>.jsonl`` (every line ``isSidechain: true`` + ``agentId``, the
  parent's ``sessionId``; first line = the prompt) + ``agent-<id>.meta.json``; the parent holds an ``Agent``
  (async launch, later a ``<task-notification>`` prompt) or ``Task`` (synchronous, list-of-text result) call.
* compaction: ``system``/``compact_boundary`` (``parentUuid: null``, ``logicalParentUuid``) followed by the
  ``isCompactSummary`` user line.
* timestamps fall in the 90 days before 2023-11-13, i.e. before the default mtime (1.7e9 = 2023-11-14).

CLI::

    python bench/corpus.py DEST --events N [--seed S] [--projects P] [--no-mtime]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import sys
import time
import uuid
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["CorpusTruth", "encode_cwd", "generate", "main"]

T = TypeVar("T")
JSON = dict[str, Any]

_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_ENCODE_RE = re.compile(r"[^A-Za-z0-9]")
_SLOT_RE = re.compile(r"\{(\w+)\}")

# Sessions start somewhere in the 90 days before this instant, so the default mtime (1.7e9) is after them.
_EPOCH_END_MS = 1_699_900_000_000
_SPREAD_MS = 90 * 86_400_000


@dataclass
class CorpusTruth:
    """What the generator wrote, counted independently of any parser."""

    files: int = 0  # .jsonl files written (main + subagent)
    sessions: int = 0  # main sessions
    user_prompts: int = 0  # human prompt lines (plain string content, not meta/injected/tool results)
    agent_responses: int = 0  # assistant API messages (distinct message.id) with at least one text block
    tool_uses: int = 0  # tool_use blocks (each gets exactly one tool_result later in the same file)
    compactions: int = 0  # compact_boundary lines (each followed by exactly one isCompactSummary user line)
    subagent_prompts: int = 0  # first user line of each subagent file

    def events(self) -> int:
        return self.user_prompts + self.agent_responses + self.tool_uses + 2 * self.compactions + self.subagent_prompts


def encode_cwd(cwd: str) -> str:
    """Claude Code's project-folder name: every char outside [A-Za-z0-9] becomes '-'."""
    return _ENCODE_RE.sub("-", cwd)


def _w(text: str) -> list[str]:
    return text.split()


# ---------------------------------------------------------------------------------------------------------
# Built-in vocabulary. Lists are ordered roughly by how common the term is; pickers apply Zipf weights.
# ---------------------------------------------------------------------------------------------------------

_NOUNS = _w("""
request response cache session token user config test query handler error file service client server
schema model index table field column record event message queue worker job task pipeline build module
package dependency version endpoint route router controller middleware component hook state store payload
timeout retry connection pool transaction migration database logger metric trace span parser validator
serializer adapter provider factory registry plugin context fixture mock snapshot assertion coverage branch
commit diff patch release workflow container image deployment secret credential certificate key signature
hash checksum permission role policy scope tenant account profile subscription invoice payment order cart
checkout product inventory shipment address notification email webhook callback integration encoder decoder
tokenizer lexer compiler runtime allocator iterator generator coroutine future promise thread mutex lock
semaphore watcher observer emitter loader resolver builder injector stub benchmark regression crash panic
exception stacktrace conflict tag changelog runner matrix path directory symlink filesystem blob bucket
upload download stream chunk range embedding vector similarity ranking score filter facet aggregation
histogram shard replica partition leader follower heartbeat lease quorum ledger wallet balance entry posting
statement cursor offset batch checkpoint journal counter gauge alert dashboard probe healthcheck readiness
liveness volume nonce salt organization team invitation refund listener subscriber publisher broker topic
channel socket buffer backoff deadline limit quota throttle breaker fallback page selector reducer action
template view layout form input button modal tooltip sidebar navbar theme stylesheet asset bundle chunk
manifest lockfile flag option argument parameter setting environment variable constant enum struct trait
interface class method function closure lambda decorator annotation macro generic type alias union tuple
array slice map set list dict string integer float boolean timestamp duration interval timezone locale
currency amount price discount coupon rating review comment thread reply mention attachment thumbnail
avatar upload preview draft revision audit trail outbox inbox digest summary report export import backup
restore archive retention quota sandbox preview staging production cluster node pod namespace ingress
gateway proxy balancer firewall dns certificate bastion runner agent daemon cronjob scheduler
""")

_VERBS = _w("""
add fix update remove refactor rename move extract inline split merge validate parse serialize cache
retry log handle wrap unwrap check test debug trace profile optimize simplify clean document migrate
upgrade downgrade pin bump revert rollback deploy build compile lint format bundle minify compress encrypt
decrypt sign verify hash index query filter sort paginate batch stream buffer flush sync fetch load store
persist save delete archive restore export import render hydrate mount unmount subscribe publish emit
dispatch schedule enqueue dequeue throttle debounce memoize normalize sanitize escape encode decode
authenticate authorize invalidate expire refresh rotate revoke provision configure initialize bootstrap
register resolve inject mock stub patch instrument benchmark reproduce investigate isolate
""")

_ADJS = _w("""
new old stale broken flaky slow fast empty missing duplicate invalid expired cached async sync nested
optional required default custom internal external public private legacy deprecated experimental
unused redundant inconsistent concurrent parallel sequential idempotent transient persistent partial
incremental lazy eager strict lenient verbose minimal raw normalized encoded signed unsigned nullable
readonly mutable immutable generic typed untyped global local remote pending active inactive primary
secondary temporary permanent recursive circular orphaned dangling truncated corrupted malformed oversized
""")

_DOUBLED = {"pin", "log", "wrap", "unwrap", "stub", "emit", "split", "set", "plan", "ship", "drop", "map"}
_IRREGULAR_PAST = {"build": "built", "split": "split", "rebuild": "rebuilt", "set": "set"}


def _ing(v: str) -> str:
    if v in _DOUBLED:
        return v + v[-1] + "ing"
    if v.endswith("e") and not v.endswith("ee"):
        return v[:-1] + "ing"
    return v + "ing"


def _ed(v: str) -> str:
    if v in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[v]
    if v in _DOUBLED:
        return v + v[-1] + "ed"
    if v.endswith("e"):
        return v + "d"
    if v.endswith("y") and v[-2:-1] not in "aeiou":
        return v[:-1] + "ied"
    return v + "ed"


def _s(v: str) -> str:
    if v.endswith(("s", "sh", "ch", "x", "z")):
        return v + "es"
    if v.endswith("y") and v[-2:-1] not in "aeiou":
        return v[:-1] + "ies"
    return v + "s"


_ING = {v: _ing(v) for v in _VERBS}
_ED = {v: _ed(v) for v in _VERBS}
_S = {v: _s(v) for v in _VERBS}
_PLURAL = {n: _s(n) for n in _NOUNS} | {"index": "indexes", "matrix": "matrices", "alias": "aliases"}

_GERUNDS = _w("""
floating dancing skipping jumping singing humming whistling drifting glowing sparkling wandering
roaming spinning tumbling soaring gliding rolling bouncing swimming sleeping dreaming
""")

_SLUG_ADJ = _w("""
radiant sunny starry humble quiet brave gentle clever witty lucky mellow vivid cosmic fuzzy snappy
silent swift golden silver crimson velvet rustic misty stormy breezy
""")

_SLUG_NOUN = _w("""
music squid whale umbrella otter falcon meadow river canyon lantern pebble comet nebula maple cedar
harbor beacon glacier thunder willow badger heron koala panda
""")

_GENERIC_LIBS = _w("""
docker postgres redis nginx kubernetes terraform github-actions sentry datadog grafana prometheus
opentelemetry kafka rabbitmq elasticsearch sqlite s3 cloudflare vault helm minio clickhouse
""")

_USERS = ["dev", "marco", "alice", "jchen", "sam", "priya", "tkowalski", "nora", "build", "ops"]
_ORGS = ["acme", "northwind", "globex", "initech", "umbrella-labs", "hooli", "stark-ind", "wayne-ent"]
_PROJECT_NAMES = _w("""
payments-api spotter ledger inventory-svc acme-web billing-core search-indexer auth-gateway notify
data-pipeline admin-console mobile-backend feature-flags metrics-collector doc-site chat-service
order-router pricing-engine media-transcoder crm-sync shipping-quotes fraud-detector report-builder
""")

_MODELS = [
    "claude-opus-4-6",
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-5-20251101",
    "claude-haiku-4-5-20251001",
]
_VERSIONS = ["2.1.12", "2.1.39", "2.1.42", "2.1.77", "2.1.118", "2.1.203", "2.1.330"]
_PERMISSION_MODES = ["default", "acceptEdits", "bypassPermissions", "plan"]
_HTTP = [
    "200 OK",
    "201 Created",
    "204 No Content",
    "400 Bad Request",
    "401 Unauthorized",
    "403 Forbidden",
    "404 Not Found",
    "409 Conflict",
    "422 Unprocessable Entity",
    "500 Internal Server Error",
    "502 Bad Gateway",
    "503 Service Unavailable",
]

# Per-language profiles: file extensions, directories, libraries, commands, code and error templates.
_LANGS: dict[str, dict[str, list[str]]] = {
    "python": {
        "ext": ["py"],
        "dirs": [
            "src/{pkg}",
            "src/{pkg}/api",
            "src/{pkg}/core",
            "src/{pkg}/services",
            "src/{pkg}/models",
            "src/{pkg}/db",
            "src/{pkg}/utils",
            "tests",
            "tests/unit",
            "tests/integration",
            "scripts",
            "migrations/versions",
        ],
        "extra": [
            "pyproject.toml",
            "README.md",
            "Makefile",
            ".github/workflows/ci.yml",
            "alembic.ini",
            "docker-compose.yml",
            ".env.example",
            "uv.lock",
        ],
        "libs": _w("""fastapi pydantic sqlalchemy alembic httpx pytest numpy pandas django celery boto3
                click typer
                rich structlog uvicorn duckdb polars pyarrow hypothesis mypy ruff attrs orjson tenacity jinja2
                aiohttp asyncpg psycopg starlette gunicorn pytest-asyncio freezegun respx"""),
        "test": [
            "pytest -x -q",
            "pytest {testfile} -q",
            "pytest {testfile} -k {snake} -x",
            "python -m pytest --lf -q",
            "pytest -q -m 'not slow'",
            "tox -e py311",
        ],
        "build": [
            "ruff check .",
            "ruff format --check .",
            "mypy --strict src",
            "uv sync",
            "pip install -e '.[dev]'",
            "alembic upgrade head",
            "python -m {pkg}.cli --help",
            "make lint",
        ],
        "code": [
            "def {snake}({snake}: {Type}, {snake}: int = {num}) -> {Type}:",
            "    return {snake}({snake}, {snake}={snake})",
            "from {lib}.{snake} import {Type}",
            "import {lib}",
            "class {Type}({Type}):",
            "    {snake}: {Type} | None = None",
            '    {snake} = self.{snake}.get("{snake}")',
            "    if not {snake}:",
            '        raise {Type}Error(f"{noun} {snake} is {adj}")',
            "    for {snake} in self.{snake}:",
            "        {snake}.append({snake})",
            '    logger.info("{verb} {noun}", {snake}={snake})',
            "# {Clause}",
            '    """{Clause}."""',
            '@pytest.mark.parametrize("{snake}", [{num}, {num}])',
            "def test_{snake}({snake}: {Type}) -> None:",
            "    assert {snake}.{snake} == {num}",
            "    async with self.{snake}() as {snake}:",
            "        await {snake}.{snake}({snake})",
            "    {SNAKE} = {num}",
            "",
            "",
        ],
        "err": [
            "KeyError: '{snake}'",
            "AttributeError: '{Type}' object has no attribute '{snake}'",
            "TypeError: {snake}() got an unexpected keyword argument '{snake}'",
            "ModuleNotFoundError: No module named '{lib}'",
            "ValueError: invalid literal for int() with base 10: '{word}'",
            "ImportError: cannot import name '{Type}' from '{lib}'",
            'sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint "{snake}_pkey"',
            "pydantic_core.ValidationError: 1 validation error for {Type}",
            "AssertionError: assert {num} == {num}",
            "RecursionError: maximum recursion depth exceeded while calling a Python object",
            "TimeoutError: {noun} {snake} did not respond within {num}s",
            "FileNotFoundError: [Errno 2] No such file or directory: '{file}'",
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
            "UnboundLocalError: cannot access local variable '{snake}' where it is not associated with a value",
            "ZeroDivisionError: division by zero",
            "duckdb.CatalogException: Catalog Error: Table with name {snake} does not exist!",
            "RuntimeError: Event loop is closed",
        ],
        "testout": [
            "{testfile}::test_{snake} PASSED",
            "{testfile}::test_{snake} PASSED",
            "{testfile}::test_{snake} FAILED",
            "{testfile} ....{dots} [ {pct}%]",
            "E       {Err}",
            "E       assert {num} == {num}",
            "    def test_{snake}({snake}):",
            "FAILED {testfile}::test_{snake} - {Err}",
            "==================== {num} passed, {num} warnings in {dur} ====================",
        ],
    },
    "typescript": {
        "ext": ["ts", "tsx"],
        "dirs": [
            "src",
            "src/components",
            "src/hooks",
            "src/lib",
            "src/api",
            "src/pages",
            "src/store",
            "app/routes",
            "packages/{pkg}/src",
            "test",
            "e2e",
        ],
        "extra": [
            "package.json",
            "tsconfig.json",
            "vite.config.ts",
            "biome.json",
            ".eslintrc.cjs",
            "README.md",
            "pnpm-lock.yaml",
            "playwright.config.ts",
        ],
        "libs": _w("""react next vite vitest jest zod prisma trpc express fastify tanstack-query redux zustand
                tailwindcss eslint prettier playwright axios date-fns lodash drizzle-orm socket.io webpack
                esbuild turbo msw storybook"""),
        "test": [
            "npm test",
            "pnpm vitest run {testfile}",
            "npx vitest run -t {camel}",
            "npx playwright test",
            "pnpm test -- --coverage",
            "npx jest {testfile}",
        ],
        "build": [
            "npm run build",
            "npx tsc --noEmit",
            "pnpm lint",
            "pnpm install",
            "npm run typecheck",
            "npx biome check --write .",
            "pnpm dev",
        ],
        "code": [
            "export function {camel}({camel}: {Type}): {Type} {",
            "  return {camel}.{camel}({camel});",
            "import { {Type} } from '{lib}';",
            "import type { {Type} } from './{camel}';",
            "export const {camel} = async ({camel}: {Type}) => {",
            "  const {camel} = await {camel}.{camel}({num});",
            "  if (!{camel}) throw new Error('{noun} {camel} is {adj}');",
            "  {camel}.forEach(({camel}) => {camel}.push({camel}));",
            "export interface {Type} {",
            "  {camel}?: {Type};",
            "  {camel}: string;",
            "}",
            "// {Clause}",
            "  const [{camel}, set{Type}] = useState<{Type} | null>(null);",
            "  useEffect(() => {",
            "describe('{Type}', () => {",
            "  it('{verb}s the {noun} when {clause}', async () => {",
            "    expect({camel}).toEqual({num});",
            "",
        ],
        "err": [
            "TypeError: Cannot read properties of undefined (reading '{camel}')",
            "ReferenceError: {camel} is not defined",
            "error TS2339: Property '{camel}' does not exist on type '{Type}'.",
            "error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.",
            "Error: Cannot find module '{lib}' or its corresponding type declarations.",
            "Error: Hydration failed because the initial UI does not match what was rendered on the server.",
            'Warning: Each child in a list should have a unique "key" prop.',
            "AssertionError: expected {num} to equal {num}",
            "Error: connect ECONNREFUSED 127.0.0.1:{port}",
            "SyntaxError: Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON",
            "PrismaClientKnownRequestError: Unique constraint failed on the fields: (`{camel}`)",
            "ZodError: invalid_type at path {camel}: expected string, received undefined",
        ],
        "testout": [
            " \u2713 {testfile} ({num} tests) {num}ms",
            " \u2713 {testfile} ({num} tests) {num}ms",
            " \u00d7 {Type} > {verb}s the {noun} when {clause}",
            "   \u2192 {Err}",
            " Test Files  {num} passed ({num})",
            "      Tests  {num} passed | {num} skipped ({num})",
            "   Duration  {dur} (transform {num}ms, setup {num}ms, collect {num}ms, tests {num}ms)",
        ],
    },
    "go": {
        "ext": ["go"],
        "dirs": ["cmd/{pkg}", "internal/{snake}", "internal/{snake}", "pkg/{snake}", "api", "internal/store"],
        "extra": ["go.mod", "go.sum", "Makefile", "Dockerfile", "README.md", ".golangci.yml"],
        "libs": _w("""gin echo chi cobra viper zap logrus gorm sqlx pgx grpc protobuf testify gomock
                prometheus
                otel errgroup wire ent fx"""),
        "test": [
            "go test ./...",
            "go test ./internal/... -run Test{Type} -v",
            "go test -race ./...",
            "go test -count=1 ./pkg/...",
        ],
        "build": ["go build ./...", "go vet ./...", "golangci-lint run", "go mod tidy", "make generate"],
        "code": [
            "func {Type}({camel} {Type}, {camel} int) ({Type}, error) {",
            "\treturn {camel}.{Type}({camel})",
            "\tif err != nil {",
            '\t\treturn nil, fmt.Errorf("{verb} {noun}: %w", err)',
            "type {Type} struct {",
            '\t{Type} {Type} `json:"{snake}"`',
            "}",
            "// {Type} {clause}.",
            "\tfor _, {camel} := range {camel}.{Type} {",
            "\tctx, cancel := context.WithTimeout(ctx, {num}*time.Second)",
            "\tdefer cancel()",
            "func Test{Type}(t *testing.T) {",
            "\trequire.Equal(t, {num}, {camel})",
            "",
        ],
        "err": [
            "panic: runtime error: invalid memory address or nil pointer dereference",
            "panic: runtime error: index out of range [{num}] with length {num}",
            "{file}:{num}:{num}: undefined: {Type}",
            "{file}:{num}:{num}: cannot use {camel} (variable of type string) as int value in argument",
            "--- FAIL: Test{Type} ({dur})",
            "fatal error: concurrent map writes",
            "context deadline exceeded",
            "dial tcp 127.0.0.1:{port}: connect: connection refused",
        ],
        "testout": [
            "ok  \t{module}/internal/{snake}\t0.{num}s",
            "ok  \t{module}/pkg/{snake}\t(cached)",
            "=== RUN   Test{Type}",
            "--- PASS: Test{Type} (0.00s)",
            "--- FAIL: Test{Type} ({dur})",
            "    {snake}_test.go:{num}: {Err}",
            "FAIL\t{module}/internal/{snake}\t{dur}",
        ],
    },
    "rust": {
        "ext": ["rs"],
        "dirs": ["src", "src/bin", "crates/{snake}/src", "crates/{snake}/src", "tests", "benches"],
        "extra": ["Cargo.toml", "Cargo.lock", "README.md", "rust-toolchain.toml", "clippy.toml"],
        "libs": _w("""tokio serde serde_json anyhow thiserror clap axum hyper reqwest sqlx tracing rayon
                criterion
                proptest itertools bytes futures dashmap parking_lot"""),
        "test": [
            "cargo test",
            "cargo test {snake} -- --nocapture",
            "cargo nextest run",
            "cargo test --workspace",
        ],
        "build": [
            "cargo build --release",
            "cargo clippy -- -D warnings",
            "cargo fmt --check",
            "cargo bench",
            "cargo check --all-targets",
        ],
        "code": [
            "pub fn {snake}(&self, {snake}: &{Type}) -> Result<{Type}, {Type}Error> {",
            "    let {snake} = self.{snake}.get(&{snake}).ok_or({Type}Error::Missing)?;",
            "use {lib}::{Type};",
            "#[derive(Debug, Clone, Serialize, Deserialize)]",
            "pub struct {Type} {",
            "    pub {snake}: Option<{Type}>,",
            "}",
            "impl {Type} for {Type} {",
            "/// {Clause}.",
            "    for {snake} in {snake}.iter() {",
            "#[tokio::test]",
            "async fn {snake}() {",
            "    assert_eq!({snake}.len(), {num});",
            "",
        ],
        "err": [
            "error[E0382]: borrow of moved value: `{snake}`",
            "error[E0502]: cannot borrow `{snake}` as mutable because it is also borrowed as immutable",
            "error[E0308]: mismatched types: expected `{Type}`, found `Option<{Type}>`",
            "error[E0425]: cannot find value `{snake}` in this scope",
            "thread 'main' panicked at {file}:{num}:{num}: called `Option::unwrap()` on a `None` value",
            "error: could not compile `{lib}` (lib) due to {num} previous errors",
            "warning: unused variable: `{snake}`",
        ],
        "testout": [
            "test {snake}::tests::{snake} ... ok",
            "test {snake}::tests::{snake} ... ok",
            "test {snake}::tests::{snake} ... FAILED",
            "   Compiling {lib} v{ver}",
            "    Finished `test` profile [unoptimized + debuginfo] target(s) in {dur}",
            "test result: ok. {num} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
        ],
    },
    "elixir": {
        "ext": ["ex", "exs"],
        "dirs": [
            "lib/{pkg}",
            "lib/{pkg}/services",
            "lib/{pkg}_web/live",
            "lib/{pkg}_web/controllers",
            "lib/{pkg}_web/components",
            "test/{pkg}",
            "test/{pkg}_web/live",
            "priv/repo/migrations",
        ],
        "extra": [
            "mix.exs",
            "mix.lock",
            "config/config.exs",
            "config/runtime.exs",
            "README.md",
            ".credo.exs",
        ],
        "libs": _w("""phoenix ecto ash oban jason plug tesla finch credo dialyxir live_view absinthe broadway
                telemetry swoosh req nimble_options"""),
        "test": ["mix test", "mix test {testfile}", "mix test --failed", "mix test --only {snake}"],
        "build": [
            "mix compile --warnings-as-errors",
            "mix format --check-formatted",
            "mix credo --strict",
            "mix ecto.migrate",
            "mix dialyzer",
            "mix deps.get",
        ],
        "code": [
            "  def {snake}(%{Type}{} = {snake}, {snake}) do",
            "    {snake}",
            "    |> {Type}.{snake}({snake})",
            "    |> Repo.all()",
            "  end",
            "defmodule {Type}.{Type} do",
            "  alias {Type}.{Type}",
            '  @moduledoc """',
            "  {Clause}.",
            "  defp {snake}({snake}), do: {:ok, {snake}}",
            "    case {snake}({snake}) do",
            "      {:error, reason} -> {:error, reason}",
            '  test "{verb}s the {noun} when {clause}", %{conn: conn} do',
            "    assert {snake} == {num}",
            "",
        ],
        "err": [
            "** (UndefinedFunctionError) function {Type}.{snake}/{num} is undefined or private",
            "** (FunctionClauseError) no function clause matching in {Type}.{snake}/{num}",
            "** (KeyError) key :{snake} not found",
            "** (Ecto.NoResultsError) expected at least one result but got none in query",
            'warning: variable "{snake}" is unused (if the variable is not meant to be used, prefix it)',
            "** (CompileError) {file}:{num}: undefined function {snake}/{num}",
            "** (DBConnection.ConnectionError) connection not available and request was dropped from queue",
        ],
        "testout": [
            ".......",
            "..........",
            "  1) test {verb}s the {noun} ({Type}Test)",
            "     {testfile}:{num}",
            "     {Err}",
            "Finished in {dur} (0.{num}s async, 0.{num}s sync)",
            "{num} tests, 0 failures",
        ],
    },
    "java": {
        "ext": ["java", "kt"],
        "dirs": [
            "src/main/java/com/{org}/{pkg}",
            "src/main/java/com/{org}/{pkg}/service",
            "src/main/java/com/{org}/{pkg}/web",
            "src/main/kotlin/com/{org}/{pkg}",
            "src/test/java/com/{org}/{pkg}",
            "src/main/resources",
        ],
        "extra": [
            "build.gradle.kts",
            "settings.gradle.kts",
            "gradle.properties",
            "README.md",
            "src/main/resources/application.yml",
        ],
        "libs": _w("""spring-boot hibernate junit mockito jackson lombok gradle kotlinx-coroutines ktor flyway
                micrometer resilience4j testcontainers assertj slf4j"""),
        "test": ["./gradlew test", "./gradlew test --tests '*{Type}Test'", "mvn -q test", "./gradlew check"],
        "build": [
            "./gradlew build",
            "./gradlew bootRun",
            "mvn -q package -DskipTests",
            "./gradlew spotlessApply",
        ],
        "code": [
            "public class {Type} implements {Type} {",
            "    private final {Type} {camel};",
            "    public {Type} {camel}({Type} {camel}) {",
            "        return {camel}.{camel}({camel});",
            "import com.{org}.{pkg}.{Type};",
            "    @Override",
            "    @Transactional(readOnly = true)",
            '        if ({camel} == null) throw new IllegalStateException("{noun} is {adj}");',
            "    // {Clause}",
            "    @Test",
            "    void {camel}() {",
            "        assertThat({camel}).isEqualTo({num});",
            "}",
            "",
        ],
        "err": [
            'java.lang.NullPointerException: Cannot invoke "{Type}.{camel}()" because "{camel}" is null',
            "UnsatisfiedDependencyException: Error creating bean with name '{camel}'",
            "java.lang.IllegalStateException: {noun} {camel} is {adj}",
            "Execution failed for task ':app:compileKotlin'.",
            "org.opentest4j.AssertionFailedError: expected: <{num}> but was: <{num}>",
            "java.util.ConcurrentModificationException",
        ],
        "testout": [
            "> Task :app:test",
            "{Type}Test > {camel}() PASSED",
            "{Type}Test > {camel}() PASSED",
            "{Type}Test > {camel}() FAILED",
            "    {Err}",
            "BUILD SUCCESSFUL in {dur}",
            "{num} tests completed, {num} failed",
        ],
    },
    "ruby": {
        "ext": ["rb"],
        "dirs": [
            "app/models",
            "app/controllers",
            "app/jobs",
            "app/services",
            "lib/{pkg}",
            "spec/models",
            "spec/requests",
            "db/migrate",
            "config/initializers",
        ],
        "extra": [
            "Gemfile",
            "Gemfile.lock",
            "config/routes.rb",
            "config/database.yml",
            "README.md",
            ".rubocop.yml",
        ],
        "libs": _w("""rails rspec sidekiq devise pundit puma rubocop activerecord factory_bot faraday
                dry-rb rack hotwire turbo"""),
        "test": [
            "bundle exec rspec",
            "bundle exec rspec {testfile}",
            "bin/rails test",
            "bundle exec rspec --only-failures",
        ],
        "build": [
            "bin/rails db:migrate",
            "bundle exec rubocop -a",
            "bundle install",
            "bin/rails assets:precompile",
        ],
        "code": [
            "  def {snake}({snake}, {snake}: nil)",
            "    {snake}.{snake}({snake})",
            "  end",
            "class {Type} < ApplicationRecord",
            "  has_many :{snake}, dependent: :destroy",
            "  validates :{snake}, presence: true",
            "  # {Clause}",
            '    raise {Type}Error, "{noun} is {adj}" if {snake}.nil?',
            '  it "{verb}s the {noun}" do',
            "    expect({snake}).to eq({num})",
            "",
        ],
        "err": [
            "NoMethodError: undefined method `{snake}' for nil:NilClass",
            "ActiveRecord::RecordNotFound: Couldn't find {Type} with 'id'={num}",
            "NameError: uninitialized constant {Type}",
            "ActiveRecord::PendingMigrationError: Migrations are pending.",
            "Failure/Error: expect({snake}).to eq({num})",
        ],
        "testout": [
            "..........F....",
            "{Type} {verb}s the {noun}",
            "  1) {Type} {verb}s the {noun} when {clause}",
            "     {Err}",
            "Finished in {dur} (files took 1.{num} seconds to load)",
            "{num} examples, 0 failures",
        ],
    },
}

_GENERIC_ERRS = [
    "npm ERR! code ERESOLVE unable to resolve dependency tree",
    "fatal: not a git repository (or any of the parent directories): .git",
    "error: failed to push some refs to 'git@github.com:{org}/{project}.git'",
    "CONFLICT (content): Merge conflict in {file}",
    'ERROR: relation "{snake}" does not exist',
    "docker: Error response from daemon: driver failed programming external connectivity: port is already allocated.",
    "Permission denied (publickey).",
    "curl: (7) Failed to connect to localhost port {port}: Connection refused",
    "make: *** [Makefile:{num}: {word}] Error 1",
    "bash: {word}: command not found",
    "x509: certificate signed by unknown authority",
    "HTTP 429 Too Many Requests from {lib} while {verb}ing {noun}",
    "OOMKilled: container {project}-{word} exceeded memory limit",
]

_COMMANDS = [
    "git status",
    "git diff --stat",
    "git log --oneline -n {num}",
    "git diff {file}",
    'git add {file} && git commit -m "{Verb} {adj} {noun}"',
    "git checkout -b {branch}",
    "git push -u origin {branch}",
    "git stash list",
    "rg -n '{ident}' {dir}",
    'grep -rn "{snake}" {dir}',
    "ls -la {dir}",
    "find {dir} -name '*{snake}*'",
    "wc -l {file}",
    "head -n {num} {file}",
    "docker compose up -d {lib}",
    "curl -s localhost:{port}/api/{snake} | jq .",
    "make {word}",
    "cat {file}",
    "env | grep {SNAKE}",
    "du -sh {dir}",
    "ps aux | grep {project}",
    "kubectl logs deploy/{project} --tail={num}",
]

_GIT_OUT = [
    "On branch {branch}",
    "Changes not staged for commit:",
    "\tmodified:   {file}",
    "\tmodified:   {file}",
    "Untracked files:",
    "\t{file}",
    " {file} | {num} ++++---",
    " {num} files changed, {num} insertions(+), {num} deletions(-)",
    "{sha} {Verb} {noun} {noun} in {snake}",
    "{sha} Fix {adj} {noun} when {clause}",
    "{sha} Merge pull request #{num} from {org}/{branch}",
    "[{branch} {sha}] {Verb} {adj} {noun}",
    "Switched to a new branch '{branch}'",
]

_LOG_OUT = [
    "{ts} INFO  [{snake}] {verb}ed {num} {noun}s in {num}ms",
    "{ts} INFO  {Type}: {noun} {snake} ready on :{port}",
    "{ts} WARN  {Type}: {noun} {noun} exceeded {num}ms (limit {num}ms)",
    "{ts} ERROR {Err}",
    "{ts} DEBUG {lib}.{snake}: {noun}={num} {noun}={word}",
    "  at {Type}.{camel} ({file}:{num}:{num})",
    "warning: {noun} `{snake}` is never used",
    "{Err}",
]

_PROMPTS = [
    "Can you {verb} the {noun} {noun} in {file}?",
    "The tests in {testfile} are failing with `{Err}`. Can you take a look?",
    "Please add a {adj} {noun} to `{ident}` so that the {noun} is {verb}ed when the {noun} is {adj}.",
    "Why is `{ident}` so slow when the {noun} has more than {num} {noun}s?",
    "Refactor {file} to use {lib} instead of calling {lib} directly.",
    "run {cmd} and fix whatever breaks",
    "ok now {verb} the {noun} in `{ident}` too",
    "looks good, commit this with a message about the {noun} {noun}",
    "I'm seeing `{Err}` in production after the last deploy. It started around the time we merged {branch}.",
    "Write tests for `{ident}` covering the {adj} {noun} case and the {adj} {noun} case.",
    "What does `{ident}` in {file} actually do? I'm trying to understand how the {noun} flows into the {noun}.",
    "Let's implement the {noun} {noun} described in {file}. Start with the {noun} and keep it {adj}.",
    "Bump {lib} to {ver} and check that nothing else breaks.",
    "Rename `{ident}` to `{ident}` everywhere, including the tests and docs.",
    "The {noun} endpoint returns {http} when the {noun} is missing, it should return {http}.",
    "Remove the {adj} {noun} from {file}, we don't need it anymore.",
    "Can we cache the result of `{ident}`? It gets called {num} times per request.",
    "Add logging around the {noun} {noun} so we can debug the {adj} {noun} issue.",
    "yes go ahead with that plan",
    "hmm that didn't work, `{cmd}` still prints `{Err}`",
    "Can you explain the difference between `{ident}` and `{ident}`?",
    "Please review {file} and {file} for {adj} {noun} handling before I open the PR.",
    "We need to support {adj} {noun}s in the {noun} {noun}. Where would that fit best?",
    "The CI job on {branch} is red: {Err}",
    "Move `{ident}` out of {file} into its own module under {dir}.",
    "Make the {noun} {noun} configurable via an environment variable, default {num}.",
    "Is there a way to {verb} the {noun} without breaking the {noun} {noun}?",
    "Update the README with the new {noun} {noun} and an example using {lib}.",
    "The {noun} {noun} is {adj} after a restart, can you find out why?",
    "Let's add a migration that adds a `{snake}` column to the {noun} table.",
    "I think `{ident}` has a race condition when two {noun}s {verb} the same {noun} concurrently.",
    "Use the {noun} from {file} instead of building a new one in `{ident}`.",
    "Check whether {lib} {ver} fixes the {adj} {noun} bug we worked around in {file}.",
    "Great, now do the same for the {noun} {noun}.",
]

_PROMPT_EXTRA = [
    "Also make sure {clause}.",
    "Don't touch {file}.",
    "Keep the change small.",
    "We use {lib} for {noun}s here.",
    "The {noun} is owned by another team so be careful with the {noun} API.",
    "Run {cmd} when you're done.",
    "Context: {clause}, and {clause}.",
    "I'd rather not add a new dependency for this.",
    "The relevant code is probably in {dir}.",
    "Last time we tried this the {noun} {noun} broke.",
    "Ping me before changing anything in the {noun} {noun}.",
]

_RESPONSES = [
    "I'll start by reading `{file}` to understand how `{ident}` handles the {noun}.",
    "Let me check the {noun} {noun} first.",
    "The issue is in `{ident}`: it {verb}s the {noun} before the {noun} is {adj}, so the {noun} ends up {adj}.",
    "I've updated `{file}` to {verb} the {noun} through `{ident}` instead of calling {lib} directly.",
    "All {num} tests pass now.",
    "Found it. `{ident}` is called with the wrong {noun}, which is where `{Err}` comes from.",
    "Next I'll run `{cmd}` to make sure nothing else regressed.",
    "There are two options: {verb} the {noun} in `{ident}`, or move the {noun} into {lib}. "
    "I'd go with the first because {clause}.",
    "The {noun} {noun} in {file} is {adj}; I removed it and adjusted the callers.",
    "`{ident}` now returns early when the {noun} is {adj}, which avoids the {adj} {noun}.",
    "I added a regression test in {testfile} that reproduces the {adj} {noun}.",
    "This works, but note that {clause}.",
    "The {noun} is {verb}ed in `{ident}` and then again in `{ident}`, which explains the duplicate {noun}s.",
    "I couldn't reproduce `{Err}` locally; it probably depends on the {noun} {noun} in {lib}.",
    "Done. The change is limited to {file} and {file}.",
    "Looking at the {noun} flow: `{ident}` reads the {noun}, `{ident}` {verb}s it, and {file} persists it.",
    "{lib} already provides a {noun} {noun}, so we don't need the custom `{ident}`.",
    "I kept the public API unchanged; only the internal {noun} handling moved.",
    "The failing case was a {adj} {noun} with {num} {noun}s, which the old code didn't expect.",
    "Let me search for other usages of `{ident}` before renaming it.",
]

_RESPONSE_BLOCKS = [
    "Here's a summary of the changes:\n\n- `{file}`: {verb} the {noun} {noun}\n- `{file}`: added `{ident}`\n"
    "- `{testfile}`: covers the {adj} {noun} case",
    "```{fence}\n{code}\n{code}\n{code}\n```",
    "**Root cause:** {clause}.\n\n**Fix:** {verb} the {noun} in `{ident}` before {verb}ing the {noun}.",
    "| {Noun} | Before | After |\n|---|---|---|\n| {noun} | {num}ms | {num}ms |\n| {noun} | {num} | {num} |",
    "1. {Verb} the {noun} in `{ident}`\n2. {Verb} the {adj} {noun}\n3. Run `{cmd}`",
]

_THINKING = [
    "The user wants me to {verb} the {noun}. Let me look at {file} first.",
    "Hmm, the {noun} might be {adj} because {clause}.",
    "I need to check whether `{ident}` is called from {file}.",
    "If I {verb} the {noun} here, the {noun} {noun} in {lib} would still see the {adj} value.",
    "The error `{Err}` suggests {clause}.",
    "Let me think about the ordering: {clause}, then {clause}.",
    "Maybe the simplest fix is to {verb} the {noun} in `{ident}`.",
]

_CLAUSES = [
    "the {noun} is {adj}",
    "`{ident}` returns a {adj} {noun}",
    "we {verb} the {noun} twice",
    "the {lib} {noun} is never {verb}ed",
    "the {noun} {noun} holds a lock while {verb}ing the {noun}",
    "the {noun} is read before the {noun} is written",
    "{file} still imports the {adj} {noun}",
    "the {noun} {noun} times out after {num}ms",
    "nothing {verb}s the {noun} when the {noun} is {adj}",
    "the {noun} cache key ignores the {noun}",
]

_SUBAGENT_PROMPTS = [
    "Very thorough exploration. I need to understand how the {noun} {noun} works:\n\n"
    "1. How `{ident}` {verb}s the {noun}\n2. Where `{ident}` is called from\n3. What {lib} is used for\n\n"
    "Key files to read:\n- {file}\n- {file}\n- {file}\n\nReport the relevant functions with line numbers.",
    "Find every place that {verb}s the {noun} {noun} and list the file, function and whether it handles the "
    "{adj} {noun} case. Start in {dir}.",
    "Review the diff on {branch} for {adj} {noun} handling, {noun} leaks and missing tests. Be specific.",
    "Research how {lib} handles {adj} {noun}s and whether {lib} {ver} changed it. Summarize in 10 bullets.",
]

_SUMMARY_INTRO = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\nAnalysis:\n"
)

_MEMORY_CONTEXT = [
    "Relevant memories from earlier sessions: {clause}; `{ident}` in {file} was {verb}ed to fix the {adj} {noun}.",
    "Previously in this project: the {noun} {noun} uses {lib}, and {clause}.",
]

_HOOK_CONTEXT = [
    "PostToolUse:Edit hook additional context: [LINT]\n{file}:{num}:{num} {Err}",
    "PostToolUse:Write hook additional context: [FORMAT] reformatted {file}",
    "PostToolUse:Edit hook additional context: [COMPILE ERROR]\n{Err}",
]

_CAVEAT = (
    "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request, "
    "and its output goes straight to the user. It's recorded here as context for later messages."
    "</local-command-caveat>"
)

_AGENT_TYPES = ["general-purpose", "Explore", "Plan", "code-reviewer"]

_TOOL_WEIGHTS: list[tuple[str, float]] = [
    ("Bash", 30.0),
    ("Read", 26.0),
    ("Edit", 15.0),
    ("Grep", 8.0),
    ("Glob", 5.0),
    ("Write", 5.0),
    ("TodoWrite", 5.0),
    ("WebFetch", 2.0),
    ("WebSearch", 1.5),
    ("mcp", 2.5),
]
_SUB_TOOL_WEIGHTS: list[tuple[str, float]] = [("Read", 40.0), ("Grep", 25.0), ("Glob", 15.0), ("Bash", 20.0)]

_MCP_TOOLS = [
    "mcp__github__get_issue",
    "mcp__github__list_pull_requests",
    "mcp__linear__search_issues",
    "mcp__postgres__query",
    "mcp__sentry__get_issue_details",
    "mcp__plugin_cc-memory_memory__search",
]

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_HEX = "0123456789abcdef"


class _Z(Generic[T]):
    """Zipf-weighted picker (weight of rank r is 1/(r+1)**s)."""

    __slots__ = ("cw", "items", "total")

    def __init__(self, items: Sequence[T], s: float = 1.0) -> None:
        self.items: list[T] = list(items)
        acc = 0.0
        cw: list[float] = []
        for r in range(len(self.items)):
            acc += 1.0 / (r + 1) ** s
            cw.append(acc)
        self.cw = cw
        self.total = acc

    def pick(self, rnd: Callable[[], float]) -> T:
        i = bisect_right(self.cw, rnd() * self.total)
        return self.items[i if i < len(self.items) else -1]


class _Tpl:
    """A template pre-split into literals and slot names (unknown ``{names}`` stay literal)."""

    __slots__ = ("lits", "slots")

    def __init__(self, text: str, known: frozenset[str]) -> None:
        lits: list[str] = []
        slots: list[str] = []
        pos = 0
        buf = ""
        for m in _SLOT_RE.finditer(text):
            name = m.group(1)
            if name not in known:
                continue
            if m.start() < pos:  # inside a suffix consumed below
                continue
            buf += text[pos : m.start()]
            lits.append(buf)
            buf = ""
            end = m.end()
            if name in ("verb", "Verb"):  # "{verb}ing" / "{verb}ed" / "{verb}s" -> inflected slot
                for suffix in ("ing", "ed", "s"):
                    if text.startswith(suffix, end) and not text[end + len(suffix) : end + len(suffix) + 1].isalpha():
                        name = f"{name}_{suffix}"
                        end += len(suffix)
                        break
            elif name in ("noun", "Noun") and text.startswith("s", end) and not text[end + 1 : end + 2].isalpha():
                name = f"{name}_s"
                end += 1
            slots.append(name)
            pos = end
        lits.append(buf + text[pos:])
        self.lits = tuple(lits)
        self.slots = tuple(slots)


_KNOWN_SLOTS = frozenset(
    _w("""noun Noun verb Verb adj word snake camel Type SNAKE ident file testfile path dir lib cmd Err err num
    pct dots port ver dur sha ts branch http org project pkg module clause Clause code fence
    verb_ing verb_ed verb_s Verb_ing Verb_ed Verb_s noun_s Noun_s""")
)


def _tpls(texts: Sequence[str], s: float = 0.8) -> _Z[_Tpl]:
    return _Z([_Tpl(t, _KNOWN_SLOTS) for t in texts], s)


@dataclass
class _Vocab:
    nouns: _Z[str]
    verbs: _Z[str]
    adjs: _Z[str]
    words: _Z[str]
    prompts: _Z[_Tpl]
    prompt_extra: _Z[_Tpl]
    responses: _Z[_Tpl]
    response_blocks: _Z[_Tpl]
    thinking: _Z[_Tpl]
    clauses: _Z[_Tpl]
    subagent_prompts: _Z[_Tpl]
    memory_context: _Z[_Tpl]
    hook_context: _Z[_Tpl]
    generic_errs: list[_Tpl]
    git_out: _Z[_Tpl]
    commands: _Z[_Tpl]
    log_out: _Z[_Tpl]
    lang_code: dict[str, _Z[_Tpl]]
    lang_err: dict[str, list[_Tpl]]
    lang_test: dict[str, _Z[_Tpl]]


@lru_cache(maxsize=1)
def _vocab() -> _Vocab:
    words = _NOUNS + _VERBS + _ADJS
    # interleave so the Zipf head mixes parts of speech
    mixed = [w for trio in zip(_NOUNS, _VERBS * 4, _ADJS * 4, strict=False) for w in trio]
    order: list[str] = []
    seen: set[str] = set()
    for w in mixed + words:
        if w not in seen:
            seen.add(w)
            order.append(w)
    return _Vocab(
        nouns=_Z(_NOUNS, 1.0),
        verbs=_Z(_VERBS, 0.9),
        adjs=_Z(_ADJS, 0.9),
        words=_Z(order, 1.0),
        prompts=_tpls(_PROMPTS, 0.7),
        prompt_extra=_tpls(_PROMPT_EXTRA),
        responses=_tpls(_RESPONSES, 0.7),
        response_blocks=_tpls(_RESPONSE_BLOCKS),
        thinking=_tpls(_THINKING),
        clauses=_tpls(_CLAUSES),
        subagent_prompts=_tpls(_SUBAGENT_PROMPTS),
        memory_context=_tpls(_MEMORY_CONTEXT),
        hook_context=_tpls(_HOOK_CONTEXT),
        generic_errs=[_Tpl(t, _KNOWN_SLOTS) for t in _GENERIC_ERRS],
        git_out=_tpls(_GIT_OUT, 0.5),
        commands=_tpls(_COMMANDS, 0.6),
        log_out=_tpls(_LOG_OUT, 0.5),
        lang_code={k: _tpls(v["code"], 0.4) for k, v in _LANGS.items()},
        lang_err={k: [_Tpl(t, _KNOWN_SLOTS) for t in v["err"]] for k, v in _LANGS.items()},
        lang_test={k: _tpls(v["testout"], 0.5) for k, v in _LANGS.items()},
    )


def _snake_to_camel(s: str) -> str:
    head, *rest = s.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _snake_to_pascal(s: str) -> str:
    return "".join(p.capitalize() for p in s.split("_"))


@dataclass
class _Project:
    cwd: str
    name: str
    lang: str
    pkg: str
    org: str
    module: str
    snakes: list[str]
    camels: list[str]
    pascals: list[str]
    ident_z: _Z[int]
    files: _Z[str]
    testfiles: _Z[str]
    dirs: _Z[str]
    libs: _Z[str]
    branches: _Z[str]
    test_cmds: list[_Tpl]
    build_cmds: list[_Tpl]
    errs: _Z[_Tpl]
    code: _Z[_Tpl]
    testout: _Z[_Tpl]
    fence: str


def _make_project(rng: random.Random, used: set[str]) -> _Project:
    v = _vocab()
    rnd = rng.random
    lang = rng.choice(list(_LANGS))
    prof = _LANGS[lang]
    while True:
        name = rng.choice(_PROJECT_NAMES)
        user = rng.choice(_USERS)
        org = rng.choice(_ORGS)
        form = rng.randrange(6)
        if form == 0:
            cwd = f"/home/{user}/projects/{name}"
        elif form == 1:
            cwd = f"/home/{user}/src/github.com/{org}/{name}"
        elif form == 2:
            cwd = f"/Users/{user}/Documents/GitHub/{name}/.worktrees/{v.nouns.pick(rnd)}-{v.verbs.pick(rnd)}"
        elif form == 3:
            cwd = f"/home/{user}/work/{name.replace('-', ' ').title()}_v{rng.randint(1, 4)}.{rng.randint(0, 9)}"
        elif form == 4:
            cwd = f"/home/{user}/projects/{name}-worktrees/{name}-{rng.choice(_HEX)}{rng.choice(_HEX)}x"
        else:
            cwd = f"/srv/{org}/{name}"
        if encode_cwd(cwd) not in used:
            used.add(encode_cwd(cwd))
            break
    pkg = name.replace("-", "_")
    # identifiers: 2-3 Zipf-picked parts -> hundreds of distinct names per project
    n_idents = rng.randint(250, 450)
    snakes: list[str] = []
    seen: set[str] = set()
    while len(snakes) < n_idents:
        k = 2 if rnd() < 0.65 else 3
        parts = []
        for j in range(k):
            z = v.verbs if (j == 0 and rnd() < 0.4) else (v.adjs if rnd() < 0.2 else v.nouns)
            parts.append(z.pick(rnd))
        s = "_".join(parts)
        if s not in seen:
            seen.add(s)
            snakes.append(s)
    camels = [_snake_to_camel(s) for s in snakes]
    pascals = [_snake_to_pascal(s) for s in snakes]
    # files
    dirs = [d.replace("{pkg}", pkg).replace("{org}", org) for d in prof["dirs"]]
    dirs = [re.sub(r"\{snake\}", lambda _m: rng.choice(snakes), d) for d in dirs]
    files: list[str] = []
    testfiles: list[str] = []
    for _ in range(rng.randint(40, 150)):
        d = rng.choice(dirs)
        ext = rng.choice(prof["ext"])
        ident = rng.choice(snakes)
        if ext in ("tsx", "java", "kt"):
            base = _snake_to_pascal(ident)
        elif ext == "ts":
            base = _snake_to_camel(ident)
        else:
            base = ident
        is_test = "test" in d or "spec" in d or d in ("e2e",)
        if is_test:
            base = {
                "python": f"test_{base}",
                "go": f"{base}_test",
                "rust": base,
                "elixir": f"{base}_test",
                "ruby": f"{base}_spec",
                "java": f"{base}Test",
                "typescript": f"{base}.test",
            }[lang]
        path = f"{d}/{base}.{ext}"
        files.append(path)
        if is_test:
            testfiles.append(path)
    files.extend(prof["extra"])
    rng.shuffle(files)
    if not testfiles:
        testfiles.append(f"{dirs[-1]}/test_{snakes[0]}.{prof['ext'][0]}")
    libs = rng.sample(prof["libs"], k=min(len(prof["libs"]), rng.randint(8, 14)))
    libs += rng.sample(_GENERIC_LIBS, k=4)
    branches = ["main"] + [
        f"{rng.choice(['feature', 'fix', 'chore', 'refactor'])}/{v.nouns.pick(rnd)}-{v.verbs.pick(rnd)}"
        for _ in range(rng.randint(4, 12))
    ]
    test_cmds = [_Tpl(c.replace("{pkg}", pkg), _KNOWN_SLOTS) for c in prof["test"]]
    build_cmds = [_Tpl(c.replace("{pkg}", pkg), _KNOWN_SLOTS) for c in prof["build"]]
    errs = list(v.lang_err[lang]) + list(v.generic_errs)
    return _Project(
        cwd=cwd,
        name=name,
        lang=lang,
        pkg=pkg,
        org=org,
        module=f"github.com/{org}/{name}",
        snakes=snakes,
        camels=camels,
        pascals=pascals,
        ident_z=_Z(range(len(snakes)), 1.05),
        files=_Z(files, 1.0),
        testfiles=_Z(testfiles, 0.9),
        dirs=_Z(dirs, 0.8),
        libs=_Z(libs, 0.9),
        branches=_Z(branches, 1.2),
        test_cmds=test_cmds,
        build_cmds=build_cmds,
        errs=_Z(errs, 0.7),
        code=v.lang_code[lang],
        testout=v.lang_test[lang],
        fence={"typescript": "ts", "elixir": "elixir", "java": "java"}.get(lang, lang),
    )


# ---------------------------------------------------------------------------------------------------------
# Text rendering
# ---------------------------------------------------------------------------------------------------------


class _Text:
    """Slot filling for one project; all randomness comes from the shared rng."""

    def __init__(self, rng: random.Random, proj: _Project) -> None:
        self.rng = rng
        self.rnd = rng.random
        self.p = proj
        self.v = _vocab()
        self.branch = "main"
        self.ts_base = 0
        rnd = self.rnd
        v = self.v
        p = proj
        ri = rng.randint

        def ident_i() -> int:
            return p.ident_z.pick(rnd)

        style = {
            "python": p.snakes,
            "rust": p.snakes,
            "elixir": p.snakes,
            "ruby": p.snakes,
            "typescript": p.camels,
            "java": p.camels,
            "go": p.pascals,
        }[p.lang]
        self.fill: dict[str, Callable[[], str]] = {
            "noun": lambda: v.nouns.pick(rnd),
            "Noun": lambda: v.nouns.pick(rnd).capitalize(),
            "verb": lambda: v.verbs.pick(rnd),
            "Verb": lambda: v.verbs.pick(rnd).capitalize(),
            "verb_ing": lambda: _ING[v.verbs.pick(rnd)],
            "verb_ed": lambda: _ED[v.verbs.pick(rnd)],
            "verb_s": lambda: _S[v.verbs.pick(rnd)],
            "Verb_ing": lambda: _ING[v.verbs.pick(rnd)].capitalize(),
            "Verb_ed": lambda: _ED[v.verbs.pick(rnd)].capitalize(),
            "Verb_s": lambda: _S[v.verbs.pick(rnd)].capitalize(),
            "noun_s": lambda: _PLURAL[v.nouns.pick(rnd)],
            "Noun_s": lambda: _PLURAL[v.nouns.pick(rnd)].capitalize(),
            "adj": lambda: v.adjs.pick(rnd),
            "word": lambda: v.words.pick(rnd),
            "snake": lambda: p.snakes[ident_i()],
            "SNAKE": lambda: p.snakes[ident_i()].upper(),
            "camel": lambda: p.camels[ident_i()],
            "Type": lambda: p.pascals[ident_i()],
            "ident": lambda: style[ident_i()],
            "file": lambda: p.files.pick(rnd),
            "testfile": lambda: p.testfiles.pick(rnd),
            "path": lambda: f"{p.cwd}/{p.files.pick(rnd)}",
            "dir": lambda: p.dirs.pick(rnd),
            "lib": lambda: p.libs.pick(rnd),
            "cmd": self.command,
            "Err": self.error,
            "err": self.error,
            "num": lambda: str(int(rng.paretovariate(1.2)) if rnd() < 0.7 else ri(2, 5000)),
            "pct": lambda: str(ri(1, 100)),
            "dots": lambda: "." * ri(0, 12),
            "port": lambda: str(rng.choice([3000, 4000, 5173, 5432, 6379, 8000, 8080, 8443, 9090, 9200])),
            "ver": lambda: f"{ri(0, 5)}.{ri(0, 30)}.{ri(0, 12)}",
            "dur": lambda: f"{ri(0, 90)}.{ri(10, 99)}s",
            "sha": lambda: "".join(rng.choices(_HEX, k=7)),
            "ts": self._log_ts,
            "branch": lambda: p.branches.pick(rnd),
            "http": lambda: rng.choice(_HTTP),
            "org": lambda: p.org,
            "project": lambda: p.name,
            "pkg": lambda: p.pkg,
            "module": lambda: p.module,
            "clause": lambda: self.render(v.clauses.pick(rnd)),
            "Clause": self._clause_cap,
            "code": lambda: self.render(p.code.pick(rnd)),
            "fence": lambda: p.fence,
        }

    def _clause_cap(self) -> str:
        c = self.render(self.v.clauses.pick(self.rnd))
        return c[:1].upper() + c[1:]

    def _log_ts(self) -> str:
        self.ts_base += self.rng.randint(1, 4000)
        return _iso(self.ts_base)

    def render(self, t: _Tpl) -> str:
        if not t.slots:
            return t.lits[0]
        fill = self.fill
        out = [t.lits[0]]
        for name, lit in zip(t.slots, t.lits[1:], strict=True):
            out.append(fill[name]())
            out.append(lit)
        return "".join(out)

    def pick(self, z: _Z[_Tpl]) -> str:
        return self.render(z.pick(self.rnd))

    def error(self) -> str:
        return self.render(self.p.errs.pick(self.rnd))

    def command(self) -> str:
        r = self.rnd()
        p = self.p
        if r < 0.3:
            return self.render(self.rng.choice(p.test_cmds))
        if r < 0.45:
            return self.render(self.rng.choice(p.build_cmds))
        return self.render(self.v.commands.pick(self.rnd))

    def sentences(self, z: _Z[_Tpl], lo: int, hi: int, target: int, extra: _Z[_Tpl] | None = None) -> str:
        """Sentences from ``z`` (then ``extra``) until ``target`` words; clipped to ``hi`` words."""
        parts: list[str] = []
        wc = 0
        target = max(lo, min(hi, target))
        src = z
        while wc < target:
            s = self.render(src.pick(self.rnd))
            parts.append(s)
            wc += len(s.split())
            if extra is not None:
                src = extra
        text = " ".join(parts)
        if wc > hi:
            text = " ".join(text.split()[:hi])
        return text

    def lines_until(self, z: _Z[_Tpl], nchars: int, cap: int = 3000) -> list[str]:
        out: list[str] = []
        n = 0
        rnd = self.rnd
        while n < nchars:
            s = self.render(z.pick(rnd))
            out.append(s)
            n += len(s) + 1
        if n > cap:
            while out and n > cap:
                n -= len(out.pop()) + 1
        return out


def _capped(items: list[str], cap: int, extra: int = 0) -> list[str]:
    """Longest prefix of ``items`` whose newline-joined length (+``extra`` per item) stays within ``cap``."""
    n = 0
    for i, it in enumerate(items):
        n += len(it) + extra + (1 if i else 0)
        if n > cap:
            return items[:i]
    return items


def _iso(ms: int) -> str:
    s, msr = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{msr:03d}Z"


# ---------------------------------------------------------------------------------------------------------
# Transcript writer
# ---------------------------------------------------------------------------------------------------------


class _Gen:
    """Shared state of one ``generate`` call."""

    def __init__(self, dest: Path, n_events: int, seed: int, projects: int) -> None:
        self.rng = random.Random(seed)
        self.dest = dest
        self.target = n_events
        self.truth = CorpusTruth()
        used: set[str] = set()
        self.projects = [_make_project(self.rng, used) for _ in range(max(1, projects))]
        self.project_z = _Z(range(len(self.projects)), 0.8)
        self.written: list[Path] = []

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def b62(self, n: int) -> str:
        return "".join(self.rng.choices(_B62, k=n))

    def write(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        self.written.append(path)


class _File:
    """Builds one transcript file (main session or subagent)."""

    def __init__(self, g: _Gen, tx: _Text, env: JSON, modern: bool, t_ms: int, agent_id: str | None = None) -> None:
        self.g = g
        self.tx = tx
        self.rng = g.rng
        self.rnd = g.rng.random
        self.env = env  # trailing envelope fields (cwd, sessionId, version, gitBranch, ...)
        self.modern = modern
        self.t = t_ms
        self.agent_id = agent_id
        self.sidechain = agent_id is not None
        self.parent: str | None = None
        self.lines: list[str] = []
        self.prompt_id = ""
        self.model = "claude-opus-4-6"
        self.pending_results: list[tuple[str, str, JSON, str]] = []
        self.env_perm = "default"

    # -- low level ------------------------------------------------------------------------------------
    def tick(self, lo: int = 5, hi: int = 900) -> str:
        self.t += self.rng.randint(lo, hi)
        return _iso(self.t)

    def emit(self, obj: JSON) -> None:
        self.lines.append(_DUMPS(obj))

    def chain(self, body: JSON, lo: int = 5, hi: int = 900) -> str:
        """Emit a chain member line (uuid/parentUuid/timestamp + envelope) and return its uuid."""
        u = self.g.uuid4()
        head: JSON = {"parentUuid": self.parent, "isSidechain": self.sidechain}
        if self.agent_id is not None:
            head["agentId"] = self.agent_id
        if self.modern:
            obj = head | body
            obj["uuid"] = u
            obj["timestamp"] = self.tick(lo, hi)
            obj |= self.env
        else:
            obj = head | self.env | body
            obj["uuid"] = u
            obj["timestamp"] = self.tick(lo, hi)
        self.emit(obj)
        self.parent = u
        return u

    # -- noise ------------------------------------------------------------------------------------------
    def hook_progress(self, event: str, name: str) -> None:
        tid = self.g.uuid4()
        self.chain(
            {
                "type": "progress",
                "data": {
                    "type": "hook_progress",
                    "hookEvent": event,
                    "hookName": name,
                    "command": self.rng.choice(
                        [
                            "${CLAUDE_PLUGIN_ROOT}/hooks/capture.sh",
                            "~/.claude/hooks/tmux-waiting.sh mark",
                            "python3 ~/.claude/hooks/guard.py",
                        ]
                    ),
                },
                "parentToolUseID": tid,
                "toolUseID": tid,
            },
            1,
            20,
        )

    def hook_context(self, event: str) -> None:
        text = self.tx.pick(self.tx.v.memory_context)
        self.chain(
            {
                "attachment": {
                    "type": "hook_success",
                    "hookName": f"{event}:startup" if event == "SessionStart" else event,
                    "toolUseID": self.g.uuid4(),
                    "hookEvent": event,
                    "content": "",
                    "stdout": _DUMPS({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
                    + "\n",
                    "stderr": "",
                    "exitCode": 0,
                    "command": "claude-memory hook " + event,
                    "durationMs": self.rng.randint(40, 900),
                },
                "type": "attachment",
            },
            1,
            20,
        )
        self.chain(
            {
                "attachment": {
                    "type": "hook_additional_context",
                    "content": [text],
                    "hookName": event,
                    "toolUseID": event,
                    "hookEvent": event,
                },
                "type": "attachment",
                "rendered": [
                    {"content": f"<system-reminder>\n{event} hook additional context: {text}\n</system-reminder>"}
                ],
                "renderedRole": "system",
            },
            1,
            20,
        )

    def queue_op(self, content: str | None) -> None:
        self.tick(1, 30)
        obj: JSON = {
            "type": "queue-operation",
            "operation": "enqueue",
            "timestamp": _iso(self.t),
            "sessionId": self.env["sessionId"],
            "content": content,
        }
        if content is None:
            obj["operation"] = "dequeue"
            del obj["content"]
        self.emit(obj)

    def snapshot(self, message_id: str, files: list[str], update: bool) -> None:
        ts = _iso(self.t)
        backups = {
            f"{self.tx.p.cwd}/{f}": {
                "backupFileName": f"{self.g.b62(16).lower()}@v{i + 1}",
                "version": i + 1,
                "backupTime": ts,
            }
            for i, f in enumerate(files)
        }
        self.emit(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {"messageId": message_id, "trackedFileBackups": backups, "timestamp": ts},
                "isSnapshotUpdate": update,
            }
        )

    def meta_user(self, text: str) -> None:
        body: JSON = {"type": "user", "message": {"role": "user", "content": text}, "isMeta": True}
        if self.modern:
            body = {"promptId": self.prompt_id, **body}
        self.chain(body, 1, 50)

    def last_prompt(self, text: str) -> None:
        self.emit(
            {
                "type": "last-prompt",
                "lastPrompt": text[:200],
                "leafUuid": self.parent,
                "sessionId": self.env["sessionId"],
            }
        )

    # -- user lines -------------------------------------------------------------------------------------
    def user_prompt(self, text: str, turn: int, origin: str = "user") -> str:
        self.prompt_id = self.g.uuid4()
        body: JSON = {"type": "user", "message": {"role": "user", "content": text}}
        if self.modern:
            body = {"promptId": self.prompt_id, **body}
            body["permissionMode"] = self.env_perm
            if origin == "task-notification":
                body["origin"] = {
                    "kind": "task-notification",
                    "producer": "session-task",
                    "runId": self.g.b62(9).lower() + "-" + "".join(self.rng.choices(_HEX, k=8)),
                }
                body["promptSource"] = "system"
                body["turnOrigin"] = "task_notification"
            else:
                body["promptSource"] = "user"
                body["turnOrigin"] = "user"
            body["turnPosition"] = {"promptIndex": 0, "turnIndex": turn}
        else:
            body["thinkingMetadata"] = {"maxThinkingTokens": 31999}
            body["todos"] = []
            body["permissionMode"] = self.env_perm
            body["promptId"] = self.prompt_id
        return self.chain(body, 2000, 240_000)

    def tool_result(self, tool_id: str, content: Any, result: Any, is_error: bool, source: str) -> None:
        block: JSON = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        body: JSON = {"type": "user", "message": {"role": "user", "content": [block]}}
        if self.modern and not self.sidechain:
            body = {"promptId": self.prompt_id, **body}
        body["toolUseResult"] = result
        body["sourceToolAssistantUUID"] = source
        self.chain(body, 30, 20_000)

    # -- assistant ----------------------------------------------------------------------------------------
    def assistant_line(self, mid: str, rid: str, block: JSON, stop: str | None, usage: JSON, idx: int) -> str:
        msg: JSON = {
            "model": self.model,
            "id": mid,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        body: JSON = {"message": msg, "requestId": rid, "type": "assistant"}
        if self.modern:
            body["apiBlockIndex"] = idx
        return self.chain(body, 50, 6000)

    def usage(self) -> JSON:
        ri = self.rng.randint
        cc = ri(0, 20_000)
        return {
            "input_tokens": ri(1, 12),
            "cache_creation_input_tokens": cc,
            "cache_read_input_tokens": ri(0, 180_000),
            "cache_creation": {"ephemeral_5m_input_tokens": cc, "ephemeral_1h_input_tokens": 0},
            "output_tokens": ri(1, 4000),
            "service_tier": "standard",
            "inference_geo": "global",
        }

    def api_message(self, n_tools: int, text: bool, thinking: bool, tool_weights: _Z[str] | None = None) -> None:
        """One API message written as several lines (thinking?, text?, tool_use*) sharing message.id."""
        g = self.g
        tx = self.tx
        mid = "msg_01" + g.b62(22)
        rid = "req_011C" + g.b62(20)
        usage = self.usage()
        stop = "tool_use" if n_tools else "end_turn"
        idx = 0
        v = tx.v
        if thinking:
            th = tx.sentences(v.thinking, 10, 200, int(self.rng.lognormvariate(3.4, 0.7)))
            sig = base64.b64encode(self.rng.getrandbits(8 * 96).to_bytes(96, "little")).decode()
            self.assistant_line(mid, rid, {"type": "thinking", "thinking": th, "signature": sig}, stop, usage, idx)
            idx += 1
        if text:
            self.assistant_line(mid, rid, {"type": "text", "text": self.response_text(n_tools)}, stop, usage, idx)
            idx += 1
            g.truth.agent_responses += 1
        tw = tool_weights or _TOOL_Z
        for _ in range(n_tools):
            name = tw.pick(self.rnd)
            tool_id = "toolu_01" + g.b62(22)
            real_name, inp = self.tool_input(name)
            block: JSON = {"type": "tool_use", "id": tool_id, "name": real_name, "input": inp}
            if not self.modern:
                block["caller"] = {"type": "direct"}
            src = self.assistant_line(mid, rid, block, stop, usage, idx)
            idx += 1
            g.truth.tool_uses += 1
            self.pending_results.append((real_name, tool_id, inp, src))

    def response_text(self, n_tools: int) -> str:
        tx = self.tx
        v = tx.v
        target = int(self.rng.lognormvariate(3.0, 0.6) if n_tools else self.rng.lognormvariate(4.1, 0.7))
        if not n_tools and target > 60 and self.rnd() < 0.6:
            block = tx.pick(v.response_blocks)
            bw = len(block.split())
            return tx.sentences(v.responses, 10, 300 - bw, target - bw) + "\n\n" + block
        return tx.sentences(v.responses, 10, 300, target)

    # -- tools --------------------------------------------------------------------------------------------
    def out_len(self) -> int:
        r = self.rnd()
        if r < 0.06:
            return 0
        return min(3000, int(self.rng.lognormvariate(5.4, 1.15)))

    def tool_input(self, name: str) -> tuple[str, JSON]:
        tx = self.tx
        p = tx.p
        rng = self.rng
        f = tx.fill
        if name == "Bash":
            cmd = tx.command()
            inp: JSON = {"command": cmd, "description": f"{f['Verb']()} {f['noun']()} {f['noun']()}"}
            if self.rnd() < 0.1:
                inp["timeout"] = rng.choice([120000, 300000, 600000])
            return name, inp
        if name == "Read":
            inp = {"file_path": f["path"]()}
            if self.rnd() < 0.2:
                inp["offset"] = rng.randint(1, 400)
                inp["limit"] = rng.choice([50, 100, 200])
            return name, inp
        if name == "Edit":
            old = tx.render(p.code.pick(self.rnd))
            new = old + "\n" + tx.render(p.code.pick(self.rnd))
            return name, {
                "file_path": f["path"](),
                "old_string": old,
                "new_string": new,
                "replace_all": False,
            }
        if name == "Write":
            body = "\n".join(tx.lines_until(p.code, self.out_len() or 200))
            return name, {
                "file_path": f"{p.cwd}/{f['dir']()}/{f['snake']()}.{_LANGS[p.lang]['ext'][0]}",
                "content": body,
            }
        if name == "Grep":
            inp = {
                "pattern": rng.choice(
                    [f["ident"](), f"{f['snake']()}\\(", f"class {f['Type']()}", "TODO|FIXME", f["Type"]()]
                ),
                "output_mode": rng.choice(["content", "files_with_matches", "files_with_matches", "count"]),
            }
            if self.rnd() < 0.5:
                inp["path"] = f"{p.cwd}/{f['dir']()}"
            if inp["output_mode"] == "content":
                inp["-n"] = True
            return name, inp
        if name == "Glob":
            ext = rng.choice(_LANGS[p.lang]["ext"])
            return name, {"pattern": rng.choice([f"**/*.{ext}", f"{f['dir']()}/**/*.{ext}", f"**/*{f['snake']()}*"])}
        if name == "TodoWrite":
            todos = []
            for _ in range(rng.randint(2, 6)):
                verb = f["verb"]()
                what = f"{f['adj']()} {f['noun']()} in {f['ident']()}"
                todos.append(
                    {
                        "content": f"{verb.capitalize()} {what}",
                        "status": rng.choice(["pending", "pending", "in_progress", "completed"]),
                        "activeForm": f"{_ING[verb].capitalize()} {what}",
                    }
                )
            return name, {"todos": todos}
        if name == "WebFetch":
            lib = f["lib"]()
            return name, {
                "url": f"https://{rng.choice(['docs', 'github.com', 'pypi.org', 'www.npmjs.com'])}"
                f"/{lib}/{f['snake']()}",
                "prompt": f"How does {lib} handle {f['adj']()} {f['noun']()}s?",
            }
        if name == "WebSearch":
            return name, {"query": f"{f['lib']()} {f['Err']()}"[:120]}
        if name == "mcp":
            tool = rng.choice(_MCP_TOOLS)
            return tool, {"query": f"{f['noun']()} {f['ident']()}", "limit": rng.choice([5, 10, 20])}
        raise ValueError(name)

    def flush_results(self) -> list[str]:
        """Write the tool_result line for every pending tool_use; returns edited file paths."""
        edited: list[str] = []
        pending, self.pending_results = self.pending_results, []
        for name, tool_id, inp, src in pending:
            if name == "Bash" and self.rnd() < 0.25:
                self.bash_progress(tool_id)
            elif not self.modern and self.rnd() < 0.15:
                self.hook_progress("PostToolUse", f"PostToolUse:{name}")
            content, result, is_error = self.tool_output(name, tool_id, inp)
            self.tool_result(tool_id, content, result, is_error, src)
            if name in ("Edit", "Write") and not is_error:
                edited.append(str(inp["file_path"]))
                if not self.modern and not self.sidechain and self.rnd() < 0.2:
                    self.meta_user(
                        "<system-reminder>\n" + self.tx.pick(self.tx.v.hook_context) + "\n</system-reminder>"
                    )
        return edited

    def bash_progress(self, tool_id: str) -> None:
        out = "\n".join(self.tx.lines_until(self.tx.v.log_out, self.rng.randint(40, 400)))
        self.chain(
            {
                "type": "progress",
                "data": {
                    "type": "bash_progress",
                    "output": out[-200:],
                    "fullOutput": out,
                    "elapsedTimeSeconds": self.rng.randint(2, 90),
                    "totalLines": out.count("\n") + 1,
                },
                "toolUseID": f"bash-progress-{self.rng.randint(0, 9)}",
                "parentToolUseID": tool_id,
            },
            500,
            5000,
        )

    def tool_output(self, name: str, tool_id: str, inp: JSON) -> tuple[Any, Any, bool]:
        tx = self.tx
        p = tx.p
        rng = self.rng
        f = tx.fill
        is_error = self.rnd() < 0.05
        if name == "Bash":
            if is_error:
                if self.rnd() < 0.15:
                    msg = "[Request interrupted by user for tool use]"
                    return msg, "Error: " + msg, True
                out = "\n".join([*tx.lines_until(p.testout, self.out_len() // 2), tx.error()])
                msg = f"Error: Exit code {rng.choice([1, 1, 1, 2, 127, 137])}\n{out}"[:3000]
                return msg, msg, True
            n = self.out_len()
            cmd = str(inp["command"])
            if cmd.startswith("git"):
                z = tx.v.git_out
            elif any(cmd.startswith(c.lits[0].split(" ")[0]) for c in p.test_cmds) and self.rnd() < 0.8:
                z = p.testout
            else:
                z = tx.v.log_out if self.rnd() < 0.6 else p.code
            stdout = "\n".join(tx.lines_until(z, n))
            res: JSON = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
            if self.modern:
                res["noOutputExpected"] = False
            if not stdout and self.rnd() < 0.5:
                res["returnCodeInterpretation"] = "No matches found"
            content = stdout if stdout else "(Bash completed with no output)"
            return content, res, False
        if name == "Read":
            path = str(inp["file_path"])
            if is_error:
                msg = f"File does not exist. Note: your current working directory is {p.cwd}."
                return f"<tool_use_error>{msg}</tool_use_error>", "Error: " + msg, True
            start = int(inp.get("offset", 1))
            lines = tx.lines_until(p.code, self.out_len() or 60)
            lines = _capped(lines, 3000, extra=7)  # numbered lines carry a 7-char "{n:>6}→" prefix
            total = start - 1 + len(lines) + rng.randint(0, 300)
            numbered = "\n".join(f"{i + start:>6}\u2192{ln}" for i, ln in enumerate(lines))
            res = {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": "\n".join(lines),
                    "numLines": len(lines),
                    "startLine": start,
                    "totalLines": total,
                },
            }
            return numbered, res, False
        if name == "Edit":
            path = str(inp["file_path"])
            if is_error:
                msg = "String to replace not found in file."
                return (
                    f"<tool_use_error>{msg}\nString: {inp['old_string']}</tool_use_error>",
                    "Error: " + msg,
                    True,
                )
            orig = "\n".join(tx.lines_until(p.code, min(3000, self.out_len() + 100)))
            line_no = rng.randint(1, 400)
            old_l = str(inp["old_string"]).split("\n")
            new_l = str(inp["new_string"]).split("\n")
            res = {
                "filePath": path,
                "oldString": inp["old_string"],
                "newString": inp["new_string"],
                "originalFile": orig,
                "structuredPatch": [
                    {
                        "oldStart": line_no,
                        "oldLines": len(old_l),
                        "newStart": line_no,
                        "newLines": len(new_l),
                        "lines": [f"-{x}" for x in old_l] + [f"+{x}" for x in new_l],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            }
            return f"The file {path} has been updated successfully.", res, False
        if name == "Write":
            path = str(inp["file_path"])
            if is_error:
                msg = "File has not been read yet. Read it first before writing to it."
                return f"<tool_use_error>{msg}</tool_use_error>", "Error: " + msg, True
            res = {
                "type": "create",
                "filePath": path,
                "content": inp["content"],
                "structuredPatch": [],
                "originalFile": None,
            }
            return f"File created successfully at: {path}", res, False
        if name == "Grep":
            mode = str(inp["output_mode"])
            if is_error:
                msg = "Invalid regex: missing closing parenthesis"
                return f"<tool_use_error>{msg}</tool_use_error>", "Error: " + msg, True
            k = min(40, int(rng.paretovariate(1.1)) - 1)
            fnames = _capped([f"{p.cwd}/{p.files.pick(self.rnd)}" for _ in range(k)], 2900)
            if mode == "content":
                lines = [f"{fn}:{rng.randint(1, 900)}:{tx.render(p.code.pick(self.rnd))}" for fn in fnames]
                text = "\n".join(lines)[:3000]
                res = {
                    "mode": "content",
                    "numFiles": 0,
                    "filenames": [],
                    "content": text,
                    "numLines": text.count("\n") + 1 if text else 0,
                }
                return (text or "No matches found"), res, False
            if mode == "count":
                text = "\n".join(f"{fn}:{rng.randint(1, 30)}" for fn in fnames)
                res = {
                    "mode": "count",
                    "numFiles": len(fnames),
                    "filenames": [],
                    "content": text,
                    "numMatches": len(fnames),
                }
                return (text or "No matches found"), res, False
            res = {"mode": "files_with_matches", "numFiles": len(fnames), "filenames": fnames}
            body = f"Found {len(fnames)} file{'s' if len(fnames) != 1 else ''}\n" + "\n".join(fnames)
            return (body if fnames else "No files found"), res, False
        if name == "Glob":
            if is_error:
                return "User rejected tool use", "User rejected tool use", True
            k = min(100, int(rng.paretovariate(0.9)))
            fnames = _capped([f"{p.cwd}/{p.files.pick(self.rnd)}" for _ in range(k)], 3000)
            res = {
                "filenames": fnames,
                "durationMs": rng.randint(3, 400),
                "numFiles": len(fnames),
                "truncated": len(fnames) < k,
            }
            return ("\n".join(fnames) if fnames else "No files found"), res, False
        if name == "TodoWrite":
            res = {"oldTodos": [], "newTodos": inp["todos"]}
            return (
                (
                    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
                    "track your progress. Please proceed with the current tasks if applicable"
                ),
                res,
                False,
            )
        if name == "WebFetch":
            if is_error:
                msg = f"Request failed with status code {rng.choice([403, 404, 500])}"
                return "Error: " + msg, "Error: " + msg, True
            body = "\n".join(tx.lines_until(tx.v.responses, self.out_len() or 300))
            res = {
                "bytes": rng.randint(2000, 400_000),
                "code": 200,
                "codeText": "OK",
                "result": body,
                "durationMs": rng.randint(300, 9000),
                "url": inp["url"],
            }
            return body, res, False
        if name == "WebSearch":
            results = [
                {
                    "title": f"{f['lib']()} {f['noun']()} {f['noun']()} - GitHub",
                    "url": f"https://github.com/{f['org']()}/{f['lib']()}/issues/{rng.randint(10, 9999)}",
                }
                for _ in range(rng.randint(3, 8))
            ]
            body = f'Web search results for query: "{inp["query"]}"\n\n' + "\n".join(
                f"- [{r['title']}]({r['url']})" for r in results
            )
            res = {
                "query": inp["query"],
                "results": [{"tool_use_id": "srvtoolu_01" + self.g.b62(22), "content": results}],
                "durationSeconds": round(rng.uniform(1, 9), 3),
            }
            return body, res, False
        if name.startswith("mcp__"):
            text = "\n".join(tx.lines_until(tx.v.log_out if self.rnd() < 0.5 else tx.v.responses, self.out_len() or 80))
            blocks = [{"type": "text", "text": text}]
            return blocks, blocks, is_error
        raise ValueError(name)


class _Weighted(_Z[str]):
    def __init__(self, pairs: list[tuple[str, float]]) -> None:
        super().__init__([n for n, _ in pairs], 0.0)
        acc = 0.0
        self.cw = []
        for _, w in pairs:
            acc += w
            self.cw.append(acc)
        self.total = acc


_TOOL_Z = _Weighted(_TOOL_WEIGHTS)
_SUB_TOOL_Z = _Weighted(_SUB_TOOL_WEIGHTS)


# ---------------------------------------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------------------------------------


def _session(g: _Gen) -> None:
    rng = g.rng
    rnd = rng.random
    proj = g.projects[g.project_z.pick(rnd)]
    tx = _Text(rng, proj)
    truth = g.truth
    sid = g.uuid4()
    version = rng.choice(_VERSIONS)
    modern = _VERSIONS.index(version) >= 4
    branch = proj.branches.pick(rnd) if rnd() < 0.93 else ""
    slug = f"{rng.choice(_SLUG_ADJ)}-{rng.choice(_GERUNDS)}-{rng.choice(_SLUG_NOUN)}"
    env: JSON
    if modern:
        env = {
            "userType": "external",
            "entrypoint": rng.choice(["cli", "cli", "sdk-cli"]),
            "cwd": proj.cwd,
            "sessionId": sid,
            "version": version,
            "gitBranch": branch,
            "slug": slug,
        }
    else:
        env = {
            "userType": "external",
            "cwd": proj.cwd,
            "sessionId": sid,
            "version": version,
            "gitBranch": branch,
            "slug": slug,
        }
    t0 = _EPOCH_END_MS - _SPREAD_MS + int(rnd() * _SPREAD_MS)
    tx.ts_base = t0 - 3_600_000
    main = _File(g, tx, env, modern, t0)
    main.model = rng.choice(_MODELS[:3])
    main.env_perm = rng.choice(_PERMISSION_MODES)
    memory_plugin = rnd() < 0.5
    thinking_p = rng.choice([0.0, 0.3, 0.6])
    n_turns = 5 + int(55 * rnd() ** 1.6)
    compact_at = rng.randint(2, n_turns - 2) if rnd() < 1 / 15 else -1
    agent_at = rng.randrange(n_turns - 1) if rnd() < 0.1 else -1
    pending_notification: str | None = None
    truth.sessions += 1

    first = _prompt_text(tx)
    if modern and env["entrypoint"] == "sdk-cli":
        main.queue_op(first)
        main.queue_op(None)
    if modern:
        if memory_plugin:
            main.hook_context("SessionStart")
    else:
        main.hook_progress("SessionStart", "SessionStart:startup")
        if memory_plugin:
            main.hook_context("SessionStart")

    turn = 0
    while turn < n_turns:
        if turn >= 5 and truth.events() >= g.target:
            break
        turn += 1
        if turn - 1 == compact_at:
            _compaction(main, tx)
        edited: list[str] = []
        # ---- the prompt ----
        if pending_notification is not None:
            if modern:
                main.queue_op(pending_notification)
            main.user_prompt(pending_notification, turn, "task-notification")
            prompt_text = pending_notification
            pending_notification = None
        elif rnd() < 0.03:
            prompt_text = _bash_notification(main, tx)
            if modern:
                main.queue_op(prompt_text)
            main.user_prompt(prompt_text, turn, "task-notification")
        else:
            prompt_text = first if turn == 1 else _prompt_text(tx)
            if rnd() < 0.7:
                main.snapshot(g.uuid4(), [], False)
            if rnd() < 0.04:
                main.meta_user(_CAVEAT)
            main.user_prompt(prompt_text, turn)
            truth.user_prompts += 1
        if memory_plugin and rnd() < 0.8:
            main.hook_context("UserPromptSubmit")
        elif not modern and rnd() < 0.4:
            main.hook_progress("UserPromptSubmit", "UserPromptSubmit")
        # ---- the API messages ----
        k = rng.choices((1, 2, 3, 4), cum_weights=(0.22, 0.57, 0.82, 1.0))[0]
        if turn - 1 == agent_at and k < 2:
            k = 2
        for mi in range(k):
            last = mi == k - 1
            n_tools = 0 if last else rng.choices((1, 2, 3), cum_weights=(0.62, 0.9, 1.0))[0]
            if rnd() < 0.005:
                main.chain(
                    {
                        "type": "system",
                        "subtype": "api_error",
                        "level": "error",
                        "error": {
                            "status": 529,
                            "error": {"type": "overloaded_error", "message": "Overloaded"},
                        },
                        "retryInMs": rng.randint(500, 8000),
                        "retryAttempt": 1,
                        "maxRetries": 10,
                    }
                )
            if turn - 1 == agent_at and mi == 0:
                # the delegation message: text + one Agent/Task tool_use (its result is written inside)
                pending_notification = _spawn_subagent(g, main, tx)
                continue
            main.api_message(n_tools, last or rnd() < 0.55, rnd() < thinking_p)
            edited += main.flush_results()
        if rnd() < 0.03:
            if rnd() < 0.75:
                main.chain(
                    {
                        "type": "user",
                        "message": {
                            "role": "user",
                            "content": [{"type": "text", "text": "[Request interrupted by user]"}],
                        },
                    },
                    500,
                    20_000,
                )
            else:
                main.chain(
                    {"type": "user", "message": {"role": "user", "content": "[Request interrupted by user]"}},
                    500,
                    20_000,
                )
        if rnd() < 0.5:
            main.chain(
                {
                    "type": "system",
                    "subtype": "stop_hook_summary",
                    "hookCount": 1,
                    "hookInfos": [{"command": "claude-memory hook Stop", "durationMs": rng.randint(20, 400)}],
                    "hookErrors": [],
                    "preventedContinuation": False,
                    "stopReason": "",
                    "hasOutput": False,
                    "level": "suggestion",
                    "toolUseID": g.uuid4(),
                },
                5,
                300,
            )
        if rnd() < 0.5:
            main.chain(
                {
                    "type": "system",
                    "subtype": "turn_duration",
                    "durationMs": rng.randint(2000, 600_000),
                    "isMeta": False,
                },
                1,
                50,
            )
        if modern or rnd() < 0.3:
            main.last_prompt(prompt_text)
        if edited and rnd() < 0.5:
            main.snapshot(g.uuid4(), sorted(set(edited))[:6], True)

    path = g.dest / "projects" / encode_cwd(proj.cwd) / f"{sid}.jsonl"
    g.write(path, "\n".join(main.lines) + "\n")
    truth.files += 1


def _prompt_text(tx: _Text) -> str:
    v = tx.v
    target = int(tx.rng.lognormvariate(2.9, 0.65))
    return tx.sentences(v.prompts, 5, 80, target, extra=v.prompt_extra)


def _bash_notification(f: _File, tx: _Text) -> str:
    tid = "b" + "".join(f.rng.choices(_HEX, k=6))
    out = f"/tmp/claude-1000/{encode_cwd(tx.p.cwd)}/tasks/{tid}.output"
    desc = f"{tx.fill['Verb']()} {tx.fill['noun']()} {tx.fill['noun']()}"
    return (
        f"<task-notification>\n<task-id>{tid}</task-id>\n<output-file>{out}</output-file>\n"
        f'<status>completed</status>\n<summary>Background command "{desc}" completed (exit code 0)'
        f"</summary>\n</task-notification>\nRead the output file to retrieve the result: {out}"
    )


def _compaction(f: _File, tx: _Text) -> None:
    g = f.g
    logical = f.parent
    f.parent = None
    f.chain(
        {
            "logicalParentUuid": logical,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "level": "info",
            "compactMetadata": {"trigger": "auto", "preTokens": f.rng.randint(150_000, 190_000)},
        },
        20_000,
        90_000,
    )
    points = []
    for i in range(f.rng.randint(3, 9)):
        points.append(f"{i + 1}. {tx.pick(tx.v.responses)}\n   - {tx.fill['file']()}: {tx.fill['clause']()}")
    summary = (
        _SUMMARY_INTRO
        + "Let me chronologically analyze the conversation:\n\n"
        + "\n\n".join(points)
        + "\n\nSummary:\n"
        + tx.sentences(tx.v.responses, 30, 400, f.rng.randint(60, 250))
    )
    f.chain(
        {
            "type": "user",
            "message": {"role": "user", "content": summary},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
        },
        1,
        50,
    )
    g.truth.compactions += 1


def _spawn_subagent(g: _Gen, main: _File, tx: _Text) -> str | None:
    """Add an Agent/Task tool_use to the pending results, write the subagent file, return a notification."""
    rng = g.rng
    rnd = rng.random
    is_async = main.modern or rnd() < 0.3
    tool = "Agent" if is_async else "Task"
    agent_id = "a" + "".join(rng.choices(_HEX, k=16))
    agent_type = rng.choice(_AGENT_TYPES)
    prompt = tx.pick(tx.v.subagent_prompts)
    desc = f"{tx.fill['Verb']()} {tx.fill['noun']()} {tx.fill['noun']()}"
    inp = {"description": desc, "prompt": prompt, "subagent_type": agent_type}
    # the delegating assistant message: text + Agent tool_use
    mid = "msg_01" + g.b62(22)
    rid = "req_011C" + g.b62(20)
    usage = main.usage()
    main.assistant_line(
        mid,
        rid,
        {
            "type": "text",
            "text": f"I'll delegate this to a {agent_type} agent so the {tx.fill['noun']()} search does not "
            f"fill this context. Task: {desc}.",
        },
        "tool_use",
        usage,
        0,
    )
    g.truth.agent_responses += 1
    tool_id = "toolu_01" + g.b62(22)
    block: JSON = {"type": "tool_use", "id": tool_id, "name": tool, "input": inp}
    src = main.assistant_line(mid, rid, block, "tool_use", usage, 1)
    g.truth.tool_uses += 1

    # ---- the subagent transcript ----
    sub = _File(g, tx, main.env, main.modern, main.t + rng.randint(200, 2000), agent_id=agent_id)
    sub.model = rng.choice(_MODELS)
    sub.chain({"type": "user", "message": {"role": "user", "content": prompt}}, 1, 10)
    g.truth.subagent_prompts += 1
    if main.modern:
        sub.chain(
            {
                "attachment": {"type": "date", "date": _iso(sub.t)[:10]},
                "type": "attachment",
                "rendered": [
                    {"content": f"<system-reminder>\nToday's date is {_iso(sub.t)[:10]}.\n</system-reminder>"}
                ],
                "renderedRole": "system",
            },
            1,
            5,
        )
    progress_copies: list[JSON] = []
    for _ in range(rng.randint(1, 6)):
        sub.api_message(
            rng.choices((1, 2, 3), cum_weights=(0.5, 0.85, 1.0))[0],
            rnd() < 0.5,
            rnd() < 0.3,
            tool_weights=_SUB_TOOL_Z,
        )
        sub.flush_results()
        if not is_async and len(progress_copies) < 4:
            progress_copies.append(json.loads(sub.lines[-1]))
    rblock = tx.pick(tx.v.response_blocks)
    bw = len(rblock.split())
    report = tx.sentences(tx.v.responses, 80, 300 - bw, rng.randint(100, 280) - bw) + "\n\n" + rblock
    mid2 = "msg_01" + g.b62(22)
    sub.assistant_line(mid2, "req_011C" + g.b62(20), {"type": "text", "text": report}, "end_turn", sub.usage(), 0)
    g.truth.agent_responses += 1
    sub_dir = g.dest / "projects" / encode_cwd(tx.p.cwd) / main.env["sessionId"] / "subagents"
    g.write(sub_dir / f"agent-{agent_id}.jsonl", "\n".join(sub.lines) + "\n")
    g.truth.files += 1
    meta = {
        "agentType": agent_type,
        "isBuiltIn": agent_type != "code-reviewer",
        "description": desc,
        "toolUseId": tool_id,
        "spawnDepth": 1,
        "requestShape": "background" if is_async else "foreground",
        "model": sub.model,
        "finished": True,
    }
    g.write(sub_dir / f"agent-{agent_id}.meta.json", _DUMPS(meta))

    out_file = f"/tmp/claude-1000/{encode_cwd(tx.p.cwd)}/{main.env['sessionId']}/tasks/{agent_id}.output"
    if is_async:
        text = (
            f"Async agent launched successfully.\nagentId: {agent_id} (internal ID - do not mention to user. "
            f"Use SendMessage with to: '{agent_id}' to continue this agent.)\nThe agent is working in the "
            f"background. You will be notified automatically when it completes.\noutput_file: {out_file}"
        )
        res: JSON = {
            "isAsync": True,
            "status": "async_launched",
            "agentId": agent_id,
            "description": desc,
            "resolvedModel": sub.model,
            "prompt": prompt,
            "outputFile": out_file,
            "canReadOutputFile": True,
            "canContinueAgent": True,
        }
        main.tool_result(tool_id, [{"type": "text", "text": text}], res, False, src)
        return (
            f"<task-notification>\n<task-id>{agent_id}</task-id>\n<tool-use-id>{tool_id}</tool-use-id>\n"
            f'<output-file>{out_file}</output-file>\n<status>completed</status>\n<summary>Agent "{desc}" '
            f"finished</summary>\n<result>{report[:1500]}</result>\n<usage><subagent_tokens>"
            f"{rng.randint(2000, 90_000)}</subagent_tokens><tool_uses>{rng.randint(1, 20)}</tool_uses>"
            f"<duration_ms>{rng.randint(5000, 400_000)}</duration_ms></usage>\n</task-notification>"
        )
    # synchronous Task: agent_progress copies in the parent, then the completed result
    for i, copy in enumerate(progress_copies):
        main.chain(
            {
                "type": "progress",
                "data": {
                    "message": {
                        "type": copy["type"],
                        "message": copy["message"],
                        "uuid": copy["uuid"],
                        "timestamp": copy["timestamp"],
                    },
                    "normalizedMessages": [],
                    "type": "agent_progress",
                    "prompt": prompt if i == 0 else "",
                    "agentId": agent_id,
                },
                "toolUseID": f"agent_{mid}",
                "parentToolUseID": tool_id,
            },
            100,
            3000,
        )
    main.t = max(main.t, sub.t)
    content = [
        {"type": "text", "text": report},
        {
            "type": "text",
            "text": f"agentId: {agent_id} (for resuming to continue this agent's work if needed)",
        },
    ]
    res = {
        "status": "completed",
        "prompt": prompt,
        "agentId": agent_id,
        "content": [content[0]],
        "totalDurationMs": rng.randint(5000, 400_000),
        "totalTokens": rng.randint(2000, 90_000),
        "totalToolUseCount": rng.randint(1, 20),
        "usage": sub.usage(),
    }
    main.tool_result(tool_id, content, res, False, src)
    return None


# ---------------------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------------------


def generate(
    dest: Path, n_events: int, seed: int = 0, *, projects: int = 8, mtime: float | None = 1_700_000_000.0
) -> CorpusTruth:
    """Write a Claude Code ``projects/`` tree under ``dest`` until ``events() >= n_events``.

    Same ``seed``/``n_events``/``projects`` -> byte-identical files. When ``mtime`` is not None every written
    file gets that atime/mtime.
    """
    dest = Path(dest)
    g = _Gen(dest, n_events, seed, projects)
    while g.truth.events() < n_events:
        _session(g)
    if mtime is not None:
        for p in g.written:
            os.utime(p, (mtime, mtime))
    return g.truth


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a synthetic Claude Code transcript tree.")
    ap.add_argument("dest", type=Path, help="destination (acts as ~/.claude: files go to DEST/projects/...)")
    ap.add_argument("--events", type=int, required=True, help="target number of events")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--projects", type=int, default=8)
    ap.add_argument("--no-mtime", action="store_true", help="leave file mtimes at 'now'")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    truth = generate(
        args.dest,
        args.events,
        args.seed,
        projects=args.projects,
        mtime=None if args.no_mtime else 1_700_000_000.0,
    )
    elapsed = time.perf_counter() - t0
    print(json.dumps(asdict(truth) | {"events": truth.events()}))
    print(f"generated in {elapsed:.2f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
