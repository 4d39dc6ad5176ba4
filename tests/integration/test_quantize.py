"""The int8 copy of the embedding model (store/quantize.py), made from ../shared's float32 model: close to the
float32 vectors on the fixtures' own texts, a quarter-ish of the weight bytes, and the one sensitive product
kept in float32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from claude_memory.store import model_files
from claude_memory.store.embedder import Embedder
from claude_memory.store.quantize import ALIGNMENT, CODES, SCALES, TABLES_FILE, quantize_int8
from support.shared_data import embedding_model

TEXTS = [
    "Please add a greeting function to hello.py that prints hello-from-mock.",
    "I added `greet(name)` to hello.py; it prints a salutation and returns None.",
    "pytest -q failed: ModuleNotFoundError: No module named 'requests'",
    "Always use pnpm, never npm, in this repository.",
    "The DuckDB store is append-only; forget writes tombstones and rewrites the file.",
    "Zürich, 東京 and São Paulo are in the timezone table; see tz.py line 42.",
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    "ok",
]


@pytest.fixture(scope="module")
def float_folder() -> Path:
    return embedding_model()


def test_the_int8_copy_is_close_to_the_float32_model_and_smaller(float_folder: Path, tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"
    quantize_int8(float_folder / "model.onnx", target)
    assert target.stat().st_size < 0.7 * (float_folder / "model.onnx").stat().st_size
    kept = [n for n in onnx.load(str(target)).graph.node if n.op_type == "MatMul" and "output/dense" in n.name]
    assert len(kept) == 1 and "layer.0/" in kept[0].name  # the first feed-forward output stays float32
    for item in float_folder.iterdir():
        if item.name != "model.onnx":
            (tmp_path / item.name).write_bytes(item.read_bytes())
    base = Embedder(float_folder).embed(TEXTS)
    quantized = Embedder(tmp_path).embed(TEXTS)
    cosines = (base * quantized).sum(axis=1)
    assert cosines[:-1].min() > 0.99 and cosines[-1] > 0.96, cosines  # each sentence; a two-letter text is the worst
    # the ranking a query makes is the one the float32 model makes
    query = ["how do I say hello"]
    query_f, query_q = Embedder(float_folder).embed(query), Embedder(tmp_path).embed(query)
    assert np.argmax(base @ query_f[0]) == np.argmax(quantized @ query_q[0]) == 0


def test_a_managed_model_gets_its_int8_copy_once_and_a_float32_store_keeps_float32(
    float_folder: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    name = "sentence-transformers/all-MiniLM-L6-v2"
    made = model_files.make_int8(data, name, float_folder)
    assert made == model_files.installed_int8(data, name) and (made / "tokenizer.json").exists()
    stamp = (made / "model.onnx").stat().st_mtime_ns
    assert model_files.make_int8(data, name, float_folder) == made  # not made again
    assert (made / "model.onnx").stat().st_mtime_ns == stamp
    assert not list(made.parent.glob(".download-*"))


def test_the_int8_copy_keeps_its_word_table_in_int8_beside_it_and_embeds_the_same(
    float_folder: Path, tmp_path: Path
) -> None:
    """The lookup table, quantized per row and mapped by ONNX Runtime from disk: out of model.onnx, aligned, within
    half a step of the float32 table, and the same vectors as with the table inside the model."""
    data = tmp_path / "data"
    name = "sentence-transformers/all-MiniLM-L6-v2"
    made = model_files.make_int8(data, name, float_folder)
    model = onnx.load(str(made / "model.onnx"), load_external_data=False)
    outside = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    table = "m.embeddings.word_embeddings.weight"
    assert [t.name for t in outside] == [table + CODES] and outside[0].data_type == onnx.TensorProto.INT8
    assert table not in {t.name for t in model.graph.initializer}  # no float32 copy left
    info = {e.key: e.value for e in outside[0].external_data}
    assert info["location"] == TABLES_FILE and int(info.get("offset", 0)) % ALIGNMENT == 0
    assert (made / TABLES_FILE).stat().st_size == int(info["length"]) == 30522 * 384
    assert (made / "model.onnx").stat().st_size < 20_000_000
    original = next(t for t in onnx.load(str(float_folder / "model.onnx")).graph.initializer if t.name == table)
    rows = numpy_helper.to_array(original)
    loaded = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(made / "model.onnx")).graph.initializer}
    scales = loaded[table + SCALES]
    assert scales.shape == (30522, 1)
    assert np.all(np.abs(loaded[table + CODES] * scales - rows) <= scales / 2 + 1e-7)
    inline = tmp_path / "inline"
    inline.mkdir()
    for item in made.iterdir():
        if item.name not in ("model.onnx", TABLES_FILE):
            (inline / item.name).write_bytes(item.read_bytes())
    onnx.save_model(onnx.load(str(made / "model.onnx")), str(inline / "model.onnx"))  # the table back inside
    assert not (inline / TABLES_FILE).exists()
    assert np.array_equal(Embedder(made).embed(TEXTS), Embedder(inline).embed(TEXTS))
    # what the store records covers the table too
    before = model_files.fingerprint(made, name)
    with (made / TABLES_FILE).open("r+b") as table:
        table.seek(1_000)
        table.write(b"\x01")
    assert model_files.fingerprint(made, name) != before
