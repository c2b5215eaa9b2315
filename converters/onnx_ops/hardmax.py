"""ONNX Hardmax -> mace Hardmax (opset < 13: coerced to 2-D at axis)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


@register("Hardmax")
def hardmax(ctx, node):
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt != np.float32:
        raise UnsupportedError(f"ONNX op 'Hardmax' (node '{node.name}'): input dtype {dt} is "
                               "not supported (float32)")
    old = ctx.opset < 13
    axis = int(ctx.attrs(node).get("axis", 1 if old else -1))
    ctx.emit("Hardmax", [x], [node.output[0]], node, axis=axis, coerce_2d=int(old) or None)
