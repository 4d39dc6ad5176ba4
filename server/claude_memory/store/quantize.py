"""An int8 copy of the embedding model, made on this machine from the downloaded float32 one.

ONNX Runtime's dynamic quantization: the weights of every matrix product with a constant weight become int8,
one scale per output channel; activations are quantized on the fly, per tensor. On 2 cores that embeds about
twice as fast and loads ~50 MB smaller. One product is kept in float32: the first layer's feed-forward output
projection, whose inputs carry the largest outliers: quantized alone, it moved the vectors more than any other
product did (each of the 36 quantized alone, docs/architecture.md). ``bench/bench_quantize.py`` measures the
copy's throughput and its cosine to the float32 vectors.

The word-embedding table (a lookup, not a product: it stays float32, 47 of the copy's 60 MB) is written beside
the model in ``model.onnx.data``, which ONNX Runtime maps from disk instead of copying it into memory: its pages are
read as tokens need them and are file pages, shared with any other process using the model and dropped by the
kernel when memory runs short. The session holds ~45 MB less anonymous memory and peaks ~75 MB lower while it
loads, with the same vectors; a backfill maps the whole table in the end (the kernel maps 64 KB around each row
read), so the service's resident size gains less than that (docs/architecture.md).

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
FEED_FORWARD: Final = 4  # BERT's feed-forward layer is this many times wider than the hidden one


def quantize_int8(source: Path, target: Path) -> None:
    """Write ``target`` (a model.onnx) as the int8 quantization of ``source``; raises on any failure
    (ImportError when the ``onnx`` package is missing)."""
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
    _tables_outside(target)


def _tables_outside(path: Path) -> None:
    """Move the model's large lookup tables (initializers only ``Gather`` reads) into :data:`TABLES_FILE`."""
    import onnx
    from onnx.external_data_helper import set_external_data

    model = onnx.load(str(path))
    readers: dict[str, set[str]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, set()).add(node.op_type)
    offset = 0
    for table in model.graph.initializer:
        if readers.get(table.name) == {"Gather"} and len(table.raw_data) >= TABLE_MIN_BYTES:
            set_external_data(table, TABLES_FILE, offset=offset)
            offset = -(-(offset + len(table.raw_data)) // ALIGNMENT) * ALIGNMENT
    if offset:
        (path.parent / TABLES_FILE).unlink(missing_ok=True)  # (tables are appended: start from an empty file)
        onnx.save_model(model, str(path))  # (writes each table at its offset, then the model without them)


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
