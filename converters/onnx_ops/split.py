"""ONNX Split -> mace Split (sizes from the attribute (< 13) or a constant input (>= 13))."""
from __future__ import annotations

import numpy as np

from . import register


@register("Split")
def split(ctx, node):
    a = ctx.attrs(node)
    sizes = None
    if ctx.opset < 13:
        sizes = a.get("split")
    elif ctx.has_input(node, 1):
        v = ctx.const(ctx.input(node, 1))
        if v is None:  # sizes computed at run time: the runtime reads them at infer
            ctx.emit("Split", [ctx.input(node, 0), ctx.input(node, 1)], list(node.output), node,
                     axis=int(a.get("axis", 0)))
            return
        sizes = [int(s) for s in np.asarray(v).reshape(-1)]
    outputs = list(node.output)
    # Equal parts otherwise: ceil(dim / n), the last smaller (num_outputs, opset 18).
    ctx.emit("Split", [ctx.input(node, 0)], outputs, node, axis=int(a.get("axis", 0)),
             split=list(sizes) if sizes else None)
