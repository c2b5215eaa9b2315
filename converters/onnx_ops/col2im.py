"""ONNX Col2Im -> mace Col2Im (float32; image_shape and block_shape constant or computed)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


@register("Col2Im")
def col2im(ctx, node):
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and np.dtype(dt) != np.float32:
        raise UnsupportedError(f"ONNX op 'Col2Im' (node '{node.name}'): dtype {np.dtype(dt).name} "
                               "is not supported (float32)")
    a = ctx.attrs(node)
    args = {k: [int(v) for v in a[k]] for k in ("strides", "dilations", "pads") if k in a}
    ctx.emit("Col2Im", [x, ctx.input(node, 1), ctx.input(node, 2)], [node.output[0]], node,
             **args)
