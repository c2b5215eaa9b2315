"""Checks and helpers the QOperator importers share (qlinear_*.py, integer_ops.py): scales,
zero points, missing optional zero points, the dtypes ONNX inference cannot see.

Not a handler module: it registers nothing.
"""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

QUANTIZED = (np.dtype(np.uint8), np.dtype(np.int8))


def fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def check_quantized(ctx, node, name: str, what: str) -> np.dtype | None:
    """The dtype of `name` (u8 / i8, or None when not known at conversion)."""
    dt = ctx.dtype(name)
    if dt is not None and np.dtype(dt) not in QUANTIZED:
        fail(node, f"{what} of dtype {np.dtype(dt).name} is not supported (uint8, int8)")
    return None if dt is None else np.dtype(dt)


def check_scale(ctx, node, i: int, what: str, per_channel: int | None = None) -> str:
    """Input i, a float32 scale: one value (or per_channel values where allowed)."""
    name = ctx.input(node, i)
    if not name:
        fail(node, f"the {what} (input {i}) is missing")
    dt = ctx.dtype(name)
    if dt is not None and np.dtype(dt) != np.float32:
        fail(node, f"{np.dtype(dt).name} scales are not supported (float32 only): {what}")
    shape = ctx.shape(name)
    if shape is not None:
        n = int(np.prod(shape)) if shape else 1
        if n != 1 and (per_channel is None or n != per_channel or len(shape) != 1):
            fail(node, f"the {what} has shape {shape}; needs one value"
                       + (f" or {per_channel} (per channel)" if per_channel else ""))
    return name


def zero_point(ctx, node, i: int, dtype: np.dtype | None, what: str) -> str:
    """Input i, a zero point of `dtype` (one value); absent: a constant 0 of that dtype."""
    name = ctx.input(node, i)
    if not name:
        if dtype is None:
            fail(node, f"the {what} is absent and the tensor's dtype is not known")
        return ctx.add_const(np.zeros((), dtype), f"{node.name or node.op_type}_{what}")
    dt = ctx.dtype(name)
    if dt is not None and dtype is not None and np.dtype(dt) != dtype:
        fail(node, f"the {what} is {np.dtype(dt).name}, its tensor {dtype.name}")
    if dt is not None and np.dtype(dt) not in QUANTIZED:
        fail(node, f"the {what} of dtype {np.dtype(dt).name} is not supported (uint8, int8)")
    shape = ctx.shape(name)
    if shape is not None and int(np.prod(shape)) != 1:
        fail(node, f"the {what} has shape {shape}; needs one value (per-tensor)")
    return name


def broadcast_shape(ctx, a: str, b: str) -> list[int] | None:
    sa, sb = ctx.shape(a), ctx.shape(b)
    if sa is None or sb is None:
        return None
    try:
        return list(np.broadcast_shapes(tuple(sa), tuple(sb)))
    except ValueError:
        return None
