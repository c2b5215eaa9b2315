"""ONNX Softmax / LogSoftmax -> mace Softmax (opset < 13: coerced to 2-D at axis)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


@register("Softmax", "LogSoftmax")
def softmax(ctx, node):
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt != np.float32:
        raise UnsupportedError(
            f"ONNX op '{node.op_type}' (node '{node.name}'): input dtype {dt} is not supported")
    old = ctx.opset < 13
    axis = int(ctx.attrs(node).get("axis", 1 if old else -1))
    shape = ctx.shape(x)
    coerce = old
    if old and shape is not None and axis % max(len(shape), 1) == len(shape) - 1:
        coerce = False  # the last axis alone: both semantics agree
    ctx.emit("Softmax", [x], [node.output[0]], node, axis=axis,
             use_log=int(node.op_type == "LogSoftmax"), coerce_2d=int(coerce))
