"""ONNX LpPool -> mace LpPool (1 to 3 spatial dims, NCHW-style layout, float32)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


@register("LpPool")
def lp_pool(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and np.dtype(dt) != np.float32:
        raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
    if "kernel_shape" not in a:
        raise _fail(node, "kernel_shape is required")
    ks = [int(k) for k in a["kernel_shape"]]
    n = len(ks)
    if not 1 <= n <= 3:
        raise _fail(node, f"{n}-D windows are not supported (1 to 3)")
    shape = ctx.shape(x)
    if shape is not None and len(shape) != n + 2:
        raise _fail(node, f"input rank {len(shape)} does not match a {n}-D kernel_shape")
    auto_pad = a.get("auto_pad", "NOTSET")
    if isinstance(auto_pad, bytes):
        auto_pad = auto_pad.decode()
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise _fail(node, f"auto_pad '{auto_pad}' is not supported")
    p = a.get("p", 2)
    if float(p) != int(p) or int(p) < 1:
        raise _fail(node, f"p={p} is not supported (an integer >= 1)")
    args = dict(kernels=ks, strides=[int(v) for v in a.get("strides", [1] * n)],
                dilations=[int(v) for v in a.get("dilations", [1] * n)],
                pads=[int(v) for v in a.get("pads", [0] * (2 * n))], auto_pad=auto_pad,
                ceil_mode=int(a.get("ceil_mode", 0)), p=int(p))
    ctx.emit("LpPool", [x], [node.output[0]], node, **args)
