"""Turn a sentence-embedding ONNX encoder into a model FlashRank can load.

FlashRank's `Ranker` runs a cross-encoder: it tokenizes `[CLS] query [SEP] passage
[SEP]` (token types 0 then 1) and reads one logit per pair. When no trained
cross-encoder can be had, this wraps a *bi-encoder* (all-MiniLM-L6-v2) so that it
answers the same call:

1. **split** (`_split_graph`) makes `B + 1` rows of one batch: the first pair's
   `[CLS] query [SEP]` where it already stands, then every pair's
   `[CLS] passage [SEP]` moved to the front (so position embeddings match an
   ordinary single-text run). One `rerank` call has one query, so encoding it
   once instead of once per pair halves the work;
2. **encode** is the encoder itself, run once on the `B + 1` rows;
3. **score** (`_score_graph`) mean-pools each row, L2-normalises it and returns
   `scale * cos(query, passage) + bias` as `[B, 1]` logits (FlashRank applies a
   sigmoid, so the defaults 10 and -3 spread cosines 0.1..0.6 over 0.1..0.95).

The three graphs are joined with `onnx.compose.merge_models`. The result has real
trained weights and runs through FlashRank's own code, but it is a bi-encoder
used through a cross-encoder's interface, NOT an MS MARCO cross-encoder.

Only the `onnx` package is needed, and only to build
(`python -m langgraph_chronomem.models provision` calls it):

    build_pair_scorer("encoder.onnx", "pair/model.onnx")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["build_pair_scorer"]

_ENCODER_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def _split_graph(opset: int, ir_version: int) -> Any:
    """Pairs `[B, L]` -> encoder rows `[B + 1, L]` (the query first) and their mask."""
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, value: int | list[int]) -> Any:
        return numpy_helper.from_array(np.array(value, dtype=np.int64), name)

    node = helper.make_node
    nodes = [
        # Segment masks: 0 = "[CLS] q [SEP]", 1 = "p [SEP]"; and their lengths [B, 1].
        node("Sub", ["one", "token_type_ids"], ["is_q"]),
        node("Mul", ["attention_mask", "is_q"], ["q_mask"]),
        node("Mul", ["attention_mask", "token_type_ids"], ["p_only"]),
        node("ReduceSum", ["q_mask", "axis1"], ["q_len"], keepdims=1),
        node("ReduceSum", ["p_only", "axis1"], ["p_len"], keepdims=1),
        # Positions 0..L-1 as [1, L].
        node("Shape", ["input_ids"], ["L_1d"], start=1, end=2),
        node("Squeeze", ["L_1d"], ["L"]),
        node("Range", ["zero", "L", "one"], ["pos_1d"]),
        node("Unsqueeze", ["pos_1d", "axis0"], ["pos"]),
        node("Equal", ["pos", "zero"], ["at_cls"]),
        # Passage row: keep [CLS] at 0, then token q_len + pos - 1 (clipped to L-1).
        node("Add", ["q_len", "pos"], ["shifted_1"]),
        node("Sub", ["shifted_1", "one"], ["shifted"]),
        node("Sub", ["L", "one"], ["last"]),
        node("Min", ["shifted", "last"], ["clipped"]),
        node("Where", ["at_cls", "zero", "clipped"], ["take"]),
        node("GatherElements", ["input_ids", "take"], ["p_ids"], axis=1),
        node("Sub", ["pos", "one"], ["pos_m1"]),
        node("Less", ["pos_m1", "p_len"], ["in_p"]),
        node("Or", ["at_cls", "in_p"], ["p_keep"]),
        node("Cast", ["p_keep"], ["p_mask"], to=TensorProto.INT64),
        # The query once, then the passages; the encoder sees token type 0 everywhere.
        node("Slice", ["input_ids", "row0_start", "row0_end", "axis0"], ["q_ids"]),
        node("Slice", ["q_mask", "row0_start", "row0_end", "axis0"], ["q_row_mask"]),
        node("Concat", ["q_ids", "p_ids"], ["rows_ids"], axis=0),
        node("Concat", ["q_row_mask", "p_mask"], ["rows_mask"], axis=0),
        node("Mul", ["rows_ids", "zero"], ["rows_types"]),
        # The encoder consumes rows_mask; the pooling step needs its own copy.
        node("Identity", ["rows_mask"], ["pool_mask"]),
    ]
    dims = ["batch", "sequence"]
    rows = ["rows", "sequence"]
    graph = helper.make_graph(
        nodes,
        "split_pairs",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, dims)
            for n in _ENCODER_INPUTS
        ],
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, rows)
            for n in ("rows_ids", "rows_mask", "rows_types", "pool_mask")
        ],
        initializer=[
            const("one", 1),
            const("zero", 0),
            const("row0_start", [0]),
            const("row0_end", [1]),
            const("axis0", [0]),
            const("axis1", [1]),
        ],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version
    )


def _score_graph(opset: int, ir_version: int, scale: float, bias: float) -> Any:
    """Hidden states `[B + 1, L, H]` and mask `[B + 1, L]` -> logits `[B, 1]`."""
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, value: object, dtype: type) -> Any:
        return numpy_helper.from_array(np.array(value, dtype=dtype), name)

    node = helper.make_node
    nodes = [
        node("Cast", ["mask"], ["weights"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["weights", "last_axis"], ["weights_3d"]),
        node("Mul", ["hidden", "weights_3d"], ["masked"]),
        node("ReduceSum", ["masked", "dim1"], ["summed"], keepdims=0),
        node("ReduceSum", ["weights", "dim1"], ["count"], keepdims=1),
        node("Max", ["count", "min_count"], ["count_safe"]),
        node("Div", ["summed", "count_safe"], ["mean"]),
        node("Mul", ["mean", "mean"], ["squares"]),
        node("ReduceSum", ["squares", "dim1"], ["norm_sq"], keepdims=1),
        node("Sqrt", ["norm_sq"], ["norm"]),
        node("Max", ["norm", "min_norm"], ["norm_safe"]),
        node("Div", ["mean", "norm_safe"], ["unit"]),
        node("Slice", ["unit", "query_start", "query_end", "dim0"], ["query"]),
        node("Slice", ["unit", "query_end", "to_end", "dim0"], ["passage"]),
        node("Mul", ["query", "passage"], ["products"]),
        node("ReduceSum", ["products", "dim1"], ["cosine"], keepdims=1),
        node("Mul", ["cosine", "scale"], ["scaled"]),
        node("Add", ["scaled", "bias"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "score_pairs",
        [
            helper.make_tensor_value_info(
                "hidden", TensorProto.FLOAT, ["rows", "sequence", "hidden"]
            ),
            helper.make_tensor_value_info(
                "mask", TensorProto.INT64, ["rows", "sequence"]
            ),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            const("last_axis", [-1], np.int64),
            const("dim0", [0], np.int64),
            const("dim1", [1], np.int64),
            const("query_start", [0], np.int64),
            const("query_end", [1], np.int64),
            const("to_end", [np.iinfo(np.int64).max], np.int64),
            const("min_count", 1e-9, np.float32),
            const("min_norm", 1e-12, np.float32),
            const("scale", scale, np.float32),
            const("bias", bias, np.float32),
        ],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version
    )


def build_pair_scorer(
    encoder_path: str | Path,
    out_path: str | Path,
    *,
    scale: float = 10.0,
    bias: float = -3.0,
) -> None:
    """Write a FlashRank-loadable pair scorer built around `encoder_path`.

    Args:
        encoder_path: an ONNX encoder with inputs `input_ids`, `attention_mask`,
            `token_type_ids` and first output `last_hidden_state` `[B, L, H]`.
        out_path: where to write the combined model.
        scale: multiplies the cosine.
        bias: added after scaling; logits = scale * cos + bias.

    Raises:
        ImportError: the `onnx` package is not installed.
        ValueError: the encoder does not have the expected inputs.
    """
    import onnx
    from onnx import compose

    encoder = onnx.load(str(encoder_path))
    names = [i.name for i in encoder.graph.input]
    if names != _ENCODER_INPUTS:
        raise ValueError(f"expected encoder inputs {_ENCODER_INPUTS}, found {names}")
    hidden = encoder.graph.output[0].name
    opset = next(o.version for o in encoder.opset_import if o.domain in ("", "ai.onnx"))
    ir = encoder.ir_version

    split = _split_graph(opset, ir)
    # merge_models applies prefix2 to the io_map's encoder names itself.
    rows = list(
        zip(["rows_ids", "rows_mask", "rows_types"], _ENCODER_INPUTS, strict=True)
    )
    encoded = compose.merge_models(split, encoder, io_map=rows, prefix2="enc/")
    model = compose.merge_models(
        encoded,
        _score_graph(opset, ir, scale, bias),
        io_map=[(f"enc/{hidden}", "hidden"), ("pool_mask", "mask")],
    )
    model.producer_name = (
        "langgraph-chronomem bi-encoder pair scorer (no cross-encoder)"
    )
    onnx.checker.check_model(model)
    onnx.save(model, str(out_path))
