"""An int8 copy of the embedding model, made on this machine from the downloaded float32 one.

ONNX Runtime's dynamic quantization: the weights of every matrix product with a constant weight become int8,
one scale per output channel; activations are quantized on the fly, per tensor. On 2 cores that embeds about
twice as fast and loads ~50 MB smaller. One product is kept in float32: the first layer's feed-forward output
projection, whose inputs carry the largest outliers: quantized alone, it moved the vectors more than any other
product did (each of the 36 quantized alone, docs/architecture.md). ``bench/bench_quantize.py`` measures the
copy's throughput and its cosine to the float32 vectors.

The word-embedding table (a lookup, not a product, which dynamic quantization leaves in float32: 47 MB) is
quantized here too, to int8 with one scale per row (per word): 12 MB, rebuilt on the fly by a ``Gather`` of the
row's codes, a ``Cast`` and a ``Mul`` by the ``Gather``-ed scale. Its vectors are as close to the float32 model's as
the copy's with the float32 table (docs/architecture.md). The table is written beside the model in
``model.onnx.data``, which ONNX Runtime maps from disk instead of copying it into memory: its pages are file pages,
read as tokens need them, shared with any other process using the model and dropped by the kernel when memory
runs short. A long-running service ends up mapping all of it (the kernel maps 64 KB around each row read), which
is why its size matters: a float32 table cost 44 MB of resident memory, the int8 one 12.

Quantization is deterministic: the same float32 model and the same ONNX Runtime give the same bytes, and the
copy's size names its vector space (:attr:`claude_memory.store.embedder.Embedder.model_id`), so vectors of
the two precisions are never mixed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

MODEL_FILE: Final = "model.onnx"
TABLES_FILE: Final = "model.onnx.data"  # beside the model: its lookup tables, mapped by ONNX Runtime
TABLE_MIN_BYTES: Final = 1 << 20  # smaller tables (positions, token types) are read whole on every text anyway
ALIGNMENT: Final = 1 << 16  # ONNX Runtime maps external data only at offsets aligned to the allocation granularity
CODES: Final = "_int8"  # suffixes of a quantized table's initializers: its int8 rows,
SCALES: Final = "_scale"  # and each row's scale (a column: [rows, 1])
FEED_FORWARD: Final = 4  # BERT's feed-forward layer is this many times wider than the hidden one


def quantize_int8(source: Path, target: Path) -> None:
    """Write ``target`` (a model.onnx) as the int8 quantization of ``source``; raises on any failure
    (ImportError when the ``onnx`` package is missing)."""
    from claude_memory.store.model_files import no_telemetry

    no_telemetry()
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(source), load_external_data=False)
    root = logging.getLogger()
    root.addFilter(_quantizer_advice)
    try:
        quantize_dynamic(
            source,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=_sensitive(model),
            extra_options={"MatMulConstBOnly": True},
        )
    finally:
        root.removeFilter(_quantizer_advice)
    _quantize_tables(target)


def _quantize_tables(path: Path) -> None:
    """Quantize the model's large float32 lookup tables (initializers only ``Gather`` reads) to int8 rows with a
    scale each, and move their rows into :data:`TABLES_FILE`."""
    import onnx
    from onnx.external_data_helper import set_external_data

    model = onnx.load(str(path))
    readers: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    offset = 0
    for table in list(model.graph.initializer):
        lookups = readers.get(table.name, [])
        if table.data_type != onnx.TensorProto.FLOAT or len(table.dims) != 2 or len(table.raw_data) < TABLE_MIN_BYTES:
            continue
        if not lookups or not all(_row_lookup(node, table.name) for node in lookups):
            continue
        codes = _quantize_rows(model, table, lookups)
        set_external_data(codes, TABLES_FILE, offset=offset)
        offset = -(-(offset + len(codes.raw_data)) // ALIGNMENT) * ALIGNMENT
    if offset:
        (path.parent / TABLES_FILE).unlink(missing_ok=True)  # (tables are appended: start from an empty file)
        onnx.save_model(model, str(path))  # (writes each table at its offset, then the model without them)


def _row_lookup(node: Any, table: str) -> bool:
    """Whether ``node`` gathers rows of ``table`` (its first input, along axis 0)."""
    axis = next((attribute.i for attribute in node.attribute if attribute.name == "axis"), 0)
    return bool(node.op_type == "Gather" and node.input[0] == table and axis == 0)


def _quantize_rows(model: Any, table: Any, lookups: list[Any]) -> Any:
    """Replace ``table`` in ``model`` by its int8 rows and their scales, each ``Gather`` of it by the same rows
    rebuilt (``Gather`` of codes and of scales, ``Cast``, ``Mul``); returns the codes' initializer."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rows = numpy_helper.to_array(table).astype(np.float32)
    scales = np.abs(rows).max(axis=1, keepdims=True) / 127.0
    scales[scales == 0] = 1.0  # (a row of zeros: any scale gives zeros back)
    codes = numpy_helper.from_array(np.clip(np.rint(rows / scales), -127, 127).astype(np.int8), table.name + CODES)
    model.graph.initializer.remove(table)
    model.graph.initializer.extend([codes, numpy_helper.from_array(scales.astype(np.float32), table.name + SCALES)])
    nodes = model.graph.node
    for gather in lookups:
        at, (ids, out, name) = list(nodes).index(gather), (gather.input[1], gather.output[0], gather.name)
        nodes.remove(gather)
        rebuilt = [
            helper.make_node("Gather", [codes.name, ids], [out + CODES], name=name + CODES),
            helper.make_node("Cast", [out + CODES], [out + "_float"], name=name + "_cast", to=TensorProto.FLOAT),
            helper.make_node("Gather", [table.name + SCALES, ids], [out + SCALES], name=name + SCALES),
            helper.make_node("Mul", [out + "_float", out + SCALES], [out], name=name + "_rows"),
        ]
        for step, node in enumerate(rebuilt):
            nodes.insert(at + step, node)
    return next(t for t in model.graph.initializer if t.name == codes.name)  # (the graph holds a copy)


def _quantizer_advice(record: logging.LogRecord) -> bool:
    """The quantizer logs advice ("consider pre-processing") to the root logger, so to stderr: not for users."""
    return "onnxruntime" not in record.pathname


def _sensitive(model: Any) -> list[str]:
    """The first feed-forward output projection: the first MatMul whose weight maps 4×hidden to hidden."""
    shapes = {init.name: list(init.dims) for init in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        for name in node.input:
            dims = shapes.get(name)
            if dims is not None and len(dims) == 2 and dims[0] == FEED_FORWARD * dims[1]:
                return [node.name]
    return []
