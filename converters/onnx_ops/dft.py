"""ONNX DFT (opsets 17-20: forward, inverse, one-sided; dft_length and, from opset 20, axis as
inputs) -> mace DFT (float32)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


@register("DFT")
def dft(ctx, node):
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and np.dtype(dt) != np.float32:
        raise UnsupportedError(f"ONNX op 'DFT' (node '{node.name}'): dtype {np.dtype(dt).name} is "
                               "not supported (float32)")
    a = ctx.attrs(node)
    ins = [x]
    args = {"inverse": int(a.get("inverse", 0)), "onesided": int(a.get("onesided", 0)),
            "has_dft_length": int(ctx.has_input(node, 1)), "has_axis": 0}
    if ctx.has_input(node, 1):
        ins.append(ctx.input(node, 1))
    if ctx.opset >= 20:
        args["axis"] = -2
        if ctx.has_input(node, 2):
            ins.append(ctx.input(node, 2))
            args["has_axis"] = 1
    else:
        args["axis"] = int(a.get("axis", 1))
    ctx.emit("DFT", ins, [node.output[0]], node, **args)
