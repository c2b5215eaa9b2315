"""ONNX comparisons, logic and predicates -> mace Compare (broadcasting, bool output)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_COMPARE = {"Equal": "EQUAL", "Less": "LESS", "Greater": "GREATER",
            "LessOrEqual": "LESS_EQUAL", "GreaterOrEqual": "GREATER_EQUAL"}
_LOGIC = {"And": "AND", "Or": "OR", "Xor": "XOR"}
_CMP_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int8, np.uint8,
                                          np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                          np.uint64, np.bool_))
_FLOATS = tuple(np.dtype(t) for t in (np.float32, np.float16, np.float64))


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _check(ctx, node, names, allowed) -> None:
    for n in names:
        dt = ctx.dtype(n)
        if dt is not None and dt not in allowed:
            _fail(node, f"input dtype {dt} is not supported "
                        f"({', '.join(d.name for d in allowed)})")


def emit_compare(ctx, inputs, output: str, node_or_name, mace_type: str, **args):
    """Emits a Compare op (its "type" argument is set after emit(), whose first parameter
    is also called `type`)."""
    op = ctx.emit("Compare", inputs, [output], node_or_name, **args)
    op.args = {"type": mace_type, **op.args}
    return op


@register(*_COMPARE)
def compare(ctx, node):
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    _check(ctx, node, [a, b], _CMP_DTYPES)
    emit_compare(ctx, [a, b], node.output[0], node, _COMPARE[node.op_type])


@register(*_LOGIC)
def logic(ctx, node):
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    _check(ctx, node, [a, b], (np.dtype(np.bool_),))
    emit_compare(ctx, [a, b], node.output[0], node, _LOGIC[node.op_type])


@register("Not")
def logical_not(ctx, node):
    x = ctx.input(node, 0)
    _check(ctx, node, [x], (np.dtype(np.bool_),))
    emit_compare(ctx, [x], node.output[0], node, "NOT")


@register("IsNaN")
def is_nan(ctx, node):
    x = ctx.input(node, 0)
    _check(ctx, node, [x], _FLOATS)
    emit_compare(ctx, [x], node.output[0], node, "IS_NAN")


@register("IsInf")
def is_inf(ctx, node):
    x = ctx.input(node, 0)
    _check(ctx, node, [x], _FLOATS)
    a = ctx.attrs(node)
    emit_compare(ctx, [x], node.output[0], node, "IS_INF",
                 detect_negative=int(a.get("detect_negative", 1)),
                 detect_positive=int(a.get("detect_positive", 1)))
