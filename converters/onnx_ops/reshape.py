"""ONNX Reshape and Flatten -> mace Reshape (target shape as the `shape` argument)."""
from __future__ import annotations

import numpy as np

from . import register


@register("Reshape")
def reshape(ctx, node):
    x = ctx.input(node, 0)
    a = ctx.attrs(node)
    if ctx.opset < 5:
        shape = a["shape"]
    else:
        v = ctx.const(ctx.input(node, 1))
        if v is not None:
            shape = [int(s) for s in np.asarray(v).reshape(-1)]
        else:
            # A shape computed at run time (e.g. a graph input): the runtime reads its
            # values when it infers shapes, and re-infers when they change.
            ctx.emit("Reshape", [x, ctx.input(node, 1)], [node.output[0]], node,
                     allowzero=int(a.get("allowzero", 0)) or None)
            return
    ctx.emit("Reshape", [x], [node.output[0]], node, shape=list(shape),
             allowzero=int(a.get("allowzero", 0)) or None)


@register("Flatten")
def flatten(ctx, node):
    ctx.emit("Reshape", [ctx.input(node, 0)], [node.output[0]], node,
             flatten_axis=int(ctx.attrs(node).get("axis", 1)))
