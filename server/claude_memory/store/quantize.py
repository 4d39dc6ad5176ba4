"""An int8 copy of the embedding model, made on this machine from the downloaded float32 one.

ONNX Runtime's dynamic quantization: the weights of every matrix product with a constant weight become int8,
one scale per output channel; activations are quantized on the fly, per tensor. On 2 cores that embeds about
twice as fast and loads ~50 MB smaller. One product is kept in float32: the first layer's feed-forward output
projection, whose inputs carry the largest outliers: quantized alone, it moved the vectors more than any other
product did (each of the 36 quantized alone, docs/architecture.md). ``bench/bench_quantize.py`` measures the
copy's throughput and its cosine to the float32 vectors.

Quantization is deterministic: the same float32 model and the same ONNX Runtime give the same bytes, and the
copy's size names its vector space (:attr:`claude_memory.store.embedder.Embedder.model_id`), so vectors of
the two precisions are never mixed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

MODEL_FILE: Final = "model.onnx"
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
