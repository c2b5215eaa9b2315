"""ONNX BatchNormalization (inference) -> mace BatchNorm with precomputed per-channel scale/offset."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


@register("BatchNormalization")
def batch_norm(ctx, node):
    a = ctx.attrs(node)
    if int(a.get("training_mode", 0)):
        raise _fail(node, "training_mode=1 is not supported (inference only)")
    if not int(a.get("spatial", 1)):
        raise _fail(node, "spatial=0 is not supported")
    if any(o for o in node.output[1:]):
        raise _fail(node, "running mean/variance outputs are not supported (inference only)")
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and np.dtype(dt) != np.float32:
        raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
    shape = ctx.shape(x)
    if shape is not None and len(shape) < 2:
        raise _fail(node, f"input of rank {len(shape)} is not supported (needs [N, C, ...])")
    eps = float(a.get("epsilon", 1e-5))
    names = [ctx.input(node, i) for i in range(1, 5)]
    params = [ctx.const(n) for n in names]
    out = node.output[0]
    if any(p is None for p in params):
        # Statistics fed at run time: the op derives scale/offset itself.
        for n in names:
            dt = ctx.dtype(n)
            if dt is not None and np.dtype(dt) != np.float32:
                raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
        ctx.emit("BatchNorm", [x] + names, [out], node, epsilon=eps)
        return
    gamma, beta, mean, var = (np.asarray(p, np.float64).reshape(-1) for p in params)
    if not (gamma.size == beta.size == mean.size == var.size):
        raise _fail(node, "scale, bias, mean and var differ in length")
    scale = gamma / np.sqrt(var + eps)
    offset = beta - mean * scale
    ctx.emit("BatchNorm", [x, ctx.add_const(scale.astype(np.float32), out + "_scale"),
                           ctx.add_const(offset.astype(np.float32), out + "_offset")],
             [out], node)
