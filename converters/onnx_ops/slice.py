"""ONNX Slice -> mace Slice (starts/ends/axes/steps as arguments, ONNX clamping in C)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _ints(ctx, node, i: int, what: str):
    if not ctx.has_input(node, i):
        return None
    v = ctx.const(ctx.input(node, i))
    if v is None:
        raise UnsupportedError(f"ONNX op 'Slice' (node '{node.name}'): {what} must be a "
                               "constant")
    return [int(x) for x in np.asarray(v).reshape(-1)]


@register("Slice")
def slice_(ctx, node):
    if ctx.opset < 10:
        a = ctx.attrs(node)
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        starts = _ints(ctx, node, 1, "starts")
        ends = _ints(ctx, node, 2, "ends")
        axes = _ints(ctx, node, 3, "axes")
        steps = _ints(ctx, node, 4, "steps")
    ctx.emit("Slice", [ctx.input(node, 0)], [node.output[0]], node, starts=list(starts),
             ends=list(ends), axes=list(axes) if axes is not None else None,
             steps=list(steps) if steps is not None else None)
