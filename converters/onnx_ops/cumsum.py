"""ONNX CumSum / CumProd -> mace CumSum (axis constant or read at run time; exclusive, reverse)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))


@register("CumSum", "CumProd")
def cumsum(ctx, node):
    def fail(why):
        raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt not in _DTYPES:
        fail(f"input dtype {dt} is not supported (float32, float64, int32, int64)")
    axis = ctx.const(ctx.input(node, 1))
    ins = [x] if axis is not None else [x, ctx.input(node, 1)]  # else read at run time
    a = ctx.attrs(node)
    ctx.emit("CumSum", ins, [node.output[0]], node,
             axis=None if axis is None else int(np.asarray(axis).reshape(-1)[0]),
             exclusive=int(a.get("exclusive", 0)), reverse=int(a.get("reverse", 0)),
             product=1 if node.op_type == "CumProd" else None)
