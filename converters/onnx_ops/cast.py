"""ONNX Cast / CastLike -> mace Cast (f32/f16/i32/i64/i8/u8/bool)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from mace.errors import UnsupportedError

from . import register

# NumPy dtype -> mace_dtype number (csrc/include/mace/mace.h).
MACE_DTYPE = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.float16): 3,
              np.dtype(np.int32): 4, np.dtype(np.int8): 8, np.dtype(np.int64): 9,
              np.dtype(np.bool_): 10}


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _emit_cast(ctx, node, to) -> None:
    x = ctx.input(node, 0)
    if to not in MACE_DTYPE:
        _fail(node, f"cast to {to} is not supported")
    src = ctx.dtype(x)
    if src is not None and np.dtype(src) not in MACE_DTYPE:
        _fail(node, f"cast from {src} is not supported")
    if src is not None and np.dtype(src) == to:
        ctx.forward(x, node.output[0], node)
        return
    ctx.emit("Cast", [x], [node.output[0]], node, to=MACE_DTYPE[to])


@register("Cast")
def cast(ctx, node):
    elem = ctx.attrs(node).get("to")
    if elem is None:
        _fail(node, "missing attribute 'to'")
    try:
        to = np.dtype(helper.tensor_dtype_to_np_dtype(int(elem)))
    except Exception:  # noqa: BLE001 - string, bfloat16, float8 ...
        _fail(node, f"cast to ONNX type {helper.tensor_dtype_to_string(int(elem))} "
                    "is not supported")
    _emit_cast(ctx, node, to)


@register("CastLike")
def cast_like(ctx, node):
    to = ctx.dtype(ctx.input(node, 1))
    if to is None:
        _fail(node, "the target type (input 1) is unknown at convert time")
    _emit_cast(ctx, node, np.dtype(to))
