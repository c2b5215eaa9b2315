"""ONNX Reshape and Flatten -> mace Reshape (target shape as the `shape` argument)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

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
            # A computed shape the converter could not fold: the output's inferred static
            # shape does the same job.
            shape = ctx.shape(node.output[0])
            if shape is None:
                raise UnsupportedError(f"ONNX op 'Reshape' (node '{node.name}'): the shape "
                                       "input is not a constant and the output shape is "
                                       "unknown")
            a = {}
    ctx.emit("Reshape", [x], [node.output[0]], node, shape=list(shape),
             allowzero=int(a.get("allowzero", 0)) or None)


@register("Flatten")
def flatten(ctx, node):
    ctx.emit("Reshape", [ctx.input(node, 0)], [node.output[0]], node,
             flatten_axis=int(ctx.attrs(node).get("axis", 1)))
