"""ONNX Trilu -> mace Trilu (k constant or read at run time; any dtype)."""
from __future__ import annotations

import numpy as np

from . import register


@register("Trilu")
def trilu(ctx, node):
    k, ins = 0, [ctx.input(node, 0)]
    if ctx.has_input(node, 1):
        v = ctx.const(ctx.input(node, 1))
        if v is None:
            k = None
            ins.append(ctx.input(node, 1))  # read at run time
        else:
            k = int(np.asarray(v).reshape(-1)[0])
    ctx.emit("Trilu", ins, [node.output[0]], node, k=k,
             upper=int(ctx.attrs(node).get("upper", 1)))
