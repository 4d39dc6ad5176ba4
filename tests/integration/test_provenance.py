"""Edit records in a real store: made by import and by live capture, privacy-filtered, read again for stores made
before them, removed by forget (down to the bytes); blame through the operation with the prompt behind each call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from claude_memory.client.local import LocalTransport
from claude_memory.client.transport import connect
from claude_memory.core.filters import ForgetSelector
from claude_memory.service.memory import Memory
from support import own_fixtures as fx

CART_NOW = fx.CART_NOW
DISCOUNT_LINE = b"return self.total() * (100 - percent) / 100"


def raw_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())


def hunks(memory: Memory) -> list[tuple[str, str | None, int | None, str]]:
    rows = memory.con.execute("SELECT file, rel_path, new_start, text FROM edit_hunks ORDER BY file, new_start")
    return [(str(r[0]), r[1], r[2], str(r[3])) for r in rows.fetchall()]


def test_import_records_what_each_edit_inserted_and_blame_names_the_prompt(fixtures_home: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        found = hunks(memory)
        cart = [h for h in found if h[0] == fx.CART_FILE]
        assert [(h[1], h[2]) for h in cart] == [("src/shop/cart.py", 1), ("src/shop/cart.py", 10)]
        assert cart[1][3].endswith("(100 - percent) / 100") and "return sum(price" not in cart[1][3]
        assert {h[1] for h in found} == {"src/shop/cart.py", "tests/test_cart.py"}  # the refused Edit added nothing
        blame = memory.provenance.blame(fx.CART_FILE, CART_NOW)
    assert blame["lines"] == 12 and blame["claude_lines"] == 12 and blame["edit_records"] == 2
    (first, second) = [r for r in blame["ranges"]]
    edits = {e["id"]: e for e in blame["edits"]}
    assert (first["start"], first["end"], edits[first["edit"]]["tool"]) == (1, 9, "Write")
    assert (second["start"], second["end"], edits[second["edit"]]["tool"]) == (10, 12, "Edit")
    write, edit = edits[first["edit"]], edits[second["edit"]]
    assert write["prompt"]["text"] == "Create the cart module with a Cart class that sums item prices"
    assert edit["prompt"]["text"] == "Add an apply_discount method to the cart"
    assert write["answer"]["text"] == "Creating src/shop/cart.py."
    assert all(e["session_id"] == fx.CART and e["model"] == "claude-sonnet-4-5" for e in (write, edit))
    assert write["citation"].startswith("mem:") and write["source"]["path"].endswith(f"{fx.CART}.jsonl")


def test_blame_through_the_operation_follows_later_changes(fixtures_home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
    transport = connect(data)
    assert isinstance(transport, LocalTransport)
    try:
        changed = "# shop cart\n" + CART_NOW.replace("def add(self, name, price):", "def add(self, title, price):")
        found = transport.call("blame", {"path": fx.CART_FILE, "text": changed, "start": 1, "end": 6})
        assert [(r["start"], r["end"], r["method"]) for r in found["ranges"]] == [
            (1, 1, None),  # a person's line
            (2, 5, "exact"),
            (6, 6, "fuzzy"),  # the renamed parameter: still the Write's, labelled as changed since
        ]
        assert found["ranges"][2]["edit"] == found["ranges"][1]["edit"] and found["ranges"][2]["confidence"] < 0.95
        assert [e["tool"] for e in found["edits"]] == ["Write"]  # only the edits of the ranges asked for
        with pytest.raises(Exception, match="ends before it starts"):
            transport.call("blame", {"path": fx.CART_FILE, "text": changed, "start": 5, "end": 2})
        with pytest.raises(Exception, match="does not exist"):
            transport.call("blame", {"path": str(tmp_path / "nope.py")})
        nobody = tmp_path / "mine.py"
        nobody.write_text("print('written by a person')\n")
        mine = transport.call("blame", {"path": str(nobody)})
        assert mine["edit_records"] == 0 and mine["ranges"] == [
            {"start": 1, "end": 1, "edit": None, "confidence": 0.0, "method": None}
        ]
    finally:
        transport.close()


def test_forget_removes_a_sessions_edit_records_down_to_the_bytes(fixtures_home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.con.execute("SET force_compression = 'uncompressed'")  # so that a byte scan can see stored text
        memory.import_history(fixtures_home, settle_seconds=0)
        memory.con.execute("CHECKPOINT")
        assert DISCOUNT_LINE in raw_bytes(data)
        assert memory.forget(ForgetSelector(session_id=fx.CART)) > 0
        assert not [h for h in hunks(memory) if h[0] == fx.CART_FILE]
        assert memory.provenance.blame(fx.CART_FILE, CART_NOW)["claude_lines"] == 0
    with Memory(data) as memory:  # (the rewrite after a forget is finished by then)
        assert memory.con.execute("SELECT count(*) FROM edit_hunks").fetchone() == (0,)
    assert DISCOUNT_LINE not in raw_bytes(data)
    assert b"apply_discount(self, percent)" not in raw_bytes(data)


def test_a_store_from_before_edit_records_reads_its_editing_calls_again(fixtures_home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
        before = hunks(memory)
        # as a store made before migration 0012: its calls have no records, and the flag asks for them
        memory.con.execute("DELETE FROM edit_hunks")
        memory.con.execute("INSERT INTO store_flags VALUES ('edits_backfill', now()::TIMESTAMP)")
    with Memory(data) as memory:
        assert hunks(memory) == before and len(before) == 3
        assert memory.con.execute("SELECT count(*) FROM store_flags").fetchone() == (0,)


def test_backfill_of_a_moved_transcript_keeps_going_and_says_so(
    fixtures_home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "claude"
    shutil.copytree(fixtures_home, home)
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        memory.con.execute("DELETE FROM edit_hunks")
        memory.con.execute("INSERT INTO store_flags VALUES ('edits_backfill', now()::TIMESTAMP)")
    shutil.rmtree(home)
    with caplog.at_level("WARNING"), Memory(data) as memory:
        assert hunks(memory) == []
        assert memory.con.execute("SELECT count(*) FROM store_flags").fetchone() == (0,)
    assert any("could not be read again from their transcripts" in r.getMessage() for r in caplog.records)


def test_live_capture_records_the_edit_with_secrets_masked(fixtures_home: Path, tmp_path: Path) -> None:
    """A PostToolUse capture carrying the result (the service API's direct path) stores the edit record at once,
    through the same privacy filter as the event."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    content = f'API_TOKEN = "{token}"\n<private>my home address is 12 Elm Street</private>\nDEBUG = False\n'
    path = "/home/dev/shop/src/shop/settings.py"
    payload: dict[str, Any] = {
        "hook_event_name": "PostToolUse",
        "session_id": fx.CART,
        "cwd": fx.SHOP,
        "tool_name": "Write",
        "tool_use_id": "toolu_live0001",
        "tool_input": {"file_path": path, "content": content},
        "tool_response": {"type": "create", "filePath": path, "content": content, "structuredPatch": []},
    }
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.con.execute("SET force_compression = 'uncompressed'")
    transport = connect(data)
    try:
        assert transport.call("capture", {"payload": payload})["new_events"] == 1
    finally:
        transport.close()
    with Memory(data) as memory:
        ((file, rel, start, text),) = hunks(memory)
        memory.con.execute("CHECKPOINT")
    assert (file, rel, start) == (path, "src/shop/settings.py", 1)
    assert "DEBUG = False" in text and token not in text and "12 Elm Street" not in text
    stored = raw_bytes(data)
    assert token.encode() not in stored and b"12 Elm Street" not in stored and b"DEBUG = False" in stored
    assert json.dumps(payload)  # (the payload itself is the test's)
