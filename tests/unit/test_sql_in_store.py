"""SQL lives in store/: no module outside it runs a statement or holds SQL text."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "claude_memory"
STORE = PACKAGE / "store"
RUNS_SQL = {"execute", "executemany", "sql"}
# A literal that opens (after whitespace, any case) like a statement. Each keyword needs its statement's
# shape, so prose that happens to open with the word ("with the events around them", "Create ``path``",
# the stop word "with") is not SQL; a query fragment such as "SELECT id FROM events WHERE" is.
SQL_TEXT = re.compile(
    r"""\s*(
        SELECT\s+\S
      | INSERT\s+(OR\s+\w+\s+)?INTO\b
      | UPDATE\s+\S+\s+SET\b
      | DELETE\s+FROM\b
      | CREATE\s+(OR\s+REPLACE\s+)?((TEMP|TEMPORARY|UNIQUE)\s+)?(TABLE|VIEW|INDEX|SEQUENCE|MACRO|SCHEMA|TYPE)\b
      | WITH\s+(RECURSIVE\s+)?\w+\s*(\([^)]*\)\s*)?AS\s*(NOT\s+)?(MATERIALIZED\s*)?\(
    )""",
    re.IGNORECASE | re.VERBOSE,
)


def outside_store() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if STORE not in p.parents)


def sql_in(tree: ast.AST) -> list[str]:
    """Each call of .execute/.executemany/.sql and each string literal that opens like a statement."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNS_SQL:
            found.append(f"line {node.lineno}: .{node.func.attr}(")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.match(node.value):
            found.append(f"line {node.lineno}: {node.value.strip()[:60]!r}")
    return found


@pytest.mark.parametrize("path", outside_store(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_sql_outside_store(path: Path) -> None:
    found = sql_in(ast.parse(path.read_text(encoding="utf-8")))
    assert not found, f"{path.relative_to(PACKAGE)} runs or holds SQL; move it into store/:\n" + "\n".join(found)


def test_the_scan_sees_sql() -> None:
    """The scan itself: statement calls, query strings in any case, and an f-string's opening all count."""
    source = (
        'con.execute("x")\ncon.executemany("x", [])\nrel.sql("x")\n'
        'q = """\n  select 1"""\nr = f"WITH a AS ({q}) SELECT 1"\n'
        's = ["insert or ignore into t VALUES (?)", "UPDATE t SET a = 1", "delete from t",'
        ' "CREATE TEMP TABLE t (a INT)", "SELECT id FROM events WHERE"]\n'
    )
    assert len(sql_in(ast.parse(source))) == 10
    prose = '"""Create ``path`` if needed."""\ns = ["selected events", "Deleted 3 events", "with", "with the events"]\n'
    assert sql_in(ast.parse(prose)) == []


# Inside store/, the statements that change a table live in the single writer, in the keyword index's
# statements that only the writer runs, and in what opening the store does (migrations, citations for
# events stored before they existed, the file rewrite after a forget).
WRITES_TABLES = re.compile(
    r"\s*(INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|CREATE\s+(OR\s+REPLACE\s+)?TABLE)\b",
    re.IGNORECASE,
)
MAY_WRITE = {"writer.py", "keyword.py", "edits.py", "tasks.py", "learning.py", "insights.py", "endless.py", "db.py",
             "migrations.py", "citations.py", "projections.py"}  # fmt: skip
WRITER = ("writer.py",)
PROJECTIONS = ("tasks.py", "insights.py", "endless.py")  # each moves its own offset, inside its writer-run writes
RUN_BY = {  # module -> its functions that write, and the modules allowed to call them
    "keyword": ({"stage_tokens", "index_staged", "delete", "drop_orphans", "merge"}, WRITER),
    "citations": ({"assign_missing"}, ("db.py",)),
    "edits": ({"insert_staged", "delete", "finish_backfill"}, WRITER),
    "tasks": ({"replace", "forget", "add_correction"}, WRITER),
    "learning": ({"record_uses", "save_levels", "forget"}, WRITER),
    "insights": ({"add", "reset", "set_mark", "forget"}, WRITER),
    "endless": (
        {"set_config", "set_offset", "add_working", "expire", "prune", "add_continuity", "add_consolidated", "forget"},
        WRITER,
    ),
    "projections": ({"set_offset", "reset"}, PROJECTIONS),
}


def writes_in(tree: ast.AST) -> list[str]:
    return [
        f"line {node.lineno}: {node.value.strip()[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and WRITES_TABLES.match(node.value)
    ]


def calls_of(tree: ast.AST, module: str, names: set[str]) -> list[str]:
    """Uses of ``module.name`` or of ``name`` imported from ``claude_memory.store.<module>``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == module:
            if node.attr in names:
                found.append(f"line {node.lineno}: {module}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == f"claude_memory.store.{module}":
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in names]
    return found


@pytest.mark.parametrize("path", sorted(STORE.glob("*.py")), ids=lambda p: p.name)
def test_store_writes_go_through_the_writer(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path.name not in MAY_WRITE:
        found = writes_in(tree)
        assert not found, f"store/{path.name} changes a table; writes belong to store/writer.py:\n" + "\n".join(found)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_write_helpers_are_run_only_by_their_owner(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for module, (names, owners) in RUN_BY.items():
        if path.name in (*owners, f"{module}.py") and path.parent == STORE:
            continue
        found = calls_of(tree, module, names)
        allowed = ", ".join(f"store/{owner}" for owner in owners)
        where = path.relative_to(PACKAGE)
        assert not found, f"{where} runs {module}'s writes; only {allowed} may:\n" + "\n".join(found)
