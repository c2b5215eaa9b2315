"""ONNX DynamicQuantizeLinear -> mace DynamicQuantizeLinear: float32 to uint8 with the scale
and zero point computed from the tensor's range at run time, as the ONNX spec defines them
(kernels/cpu/ref/dynamic_quantize.h)."""
from __future__ import annotations

import numpy as np

from . import register
from .qlinear_common import fail


@register("DynamicQuantizeLinear")
def dynamic_quantize_linear(ctx, node):
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and np.dtype(dt) != np.float32:
        fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
    outs = [o if o else ctx.unique(f"{node.name or node.op_type}_unused{i}")
            for i, o in enumerate(list(node.output) + [""] * (3 - len(node.output)))]
    ctx.emit("DynamicQuantizeLinear", [x], outs, node)
    ctx.declare(outs[0], np.uint8, ctx.shape(x))
    ctx.declare(outs[1], np.float32, [])
    ctx.declare(outs[2], np.uint8, [])
