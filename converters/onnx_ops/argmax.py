"""ONNX ArgMax / ArgMin -> mace ArgMax (i64 indices)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


@register("ArgMax", "ArgMin")
def argmax(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt not in (np.float32, np.int32, np.int64):
        raise UnsupportedError(
            f"ONNX op '{node.op_type}' (node '{node.name}'): input dtype {dt} is not supported")
    ctx.emit("ArgMax", [x], [node.output[0]], node, axis=int(a.get("axis", 0)),
             keepdims=int(a.get("keepdims", 1)),
             select_last_index=int(a.get("select_last_index", 0)),
             argmin=int(node.op_type == "ArgMin"))
