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


def _runtime_slice(ctx, node):
    """Some of starts/ends/axes/steps are computed at run time: pass all four as inputs (the
    runtime reads their values at infer); absent ones before a present one get defaults."""
    ins = [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)]
    last = max(i for i in range(1, 5) if ctx.has_input(node, i))
    n = (ctx.shape(ins[1]) or [None])[0]
    for i in range(3, last + 1):
        if ctx.has_input(node, i):
            ins.append(ctx.input(node, i))
            continue
        if n is None:
            raise UnsupportedError(f"ONNX op 'Slice' (node '{node.name}'): starts computed at run "
                                   "time with an unknown length and a missing axes input")
        ins.append(ctx.add_const(np.arange(n, dtype=np.int64)))  # default axes
    ctx.emit("Slice", ins, [node.output[0]], node)


@register("Slice")
def slice_(ctx, node):
    if ctx.opset < 10:
        a = ctx.attrs(node)
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    elif any(ctx.has_input(node, i) and ctx.const(ctx.input(node, i)) is None
             for i in range(1, 5)):
        _runtime_slice(ctx, node)
        return
    else:
        starts = _ints(ctx, node, 1, "starts")
        ends = _ints(ctx, node, 2, "ends")
        axes = _ints(ctx, node, 3, "axes")
        steps = _ints(ctx, node, 4, "steps")
    ctx.emit("Slice", [ctx.input(node, 0)], [node.output[0]], node, starts=list(starts),
             ends=list(ends), axes=list(axes) if axes is not None else None,
             steps=list(steps) if steps is not None else None)
