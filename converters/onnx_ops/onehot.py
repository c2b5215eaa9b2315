"""ONNX OneHot -> mace OneHot (depth constant, or read at run time)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_INDEX = (np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32))


@register("OneHot")
def onehot(ctx, node):
    def fail(why):
        raise UnsupportedError(f"ONNX op 'OneHot' (node '{node.name}'): {why}")
    ind, depth, values = (ctx.input(node, i) for i in range(3))
    dt = ctx.dtype(ind)
    if dt is not None and dt not in _INDEX:
        fail(f"indices dtype {dt} is not supported (int32, int64, float32)")
    d = ctx.const(depth)
    ins, dv = [ind, values], None
    if d is not None:
        dv = int(np.asarray(d).reshape(-1)[0])  # ONNX casts a float depth to int
    elif ctx.dtype(depth) in (np.dtype(np.int32), np.dtype(np.int64)):
        ins.append(depth)
    elif ctx.dtype(depth) == np.dtype(np.float32):
        from .cast import MACE_DTYPE  # one table of dtype numbers
        as_int = ctx.unique(depth + "_as_int64")
        ctx.emit("Cast", [depth], [as_int], ctx.unique((node.name or "onehot") + "_depth"),
                 to=MACE_DTYPE[np.dtype(np.int64)])
        ins.append(as_int)
    else:
        fail("a depth computed at run time must be int32, int64 or float32")
    ctx.emit("OneHot", ins, [node.output[0]], node, depth=dv,
             axis=int(ctx.attrs(node).get("axis", -1)))
