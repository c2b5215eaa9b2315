"""ONNX GridSample (opsets 16-22: bilinear/linear, nearest, bicubic/cubic; zeros, border,
reflection padding; 1 to 3 spatial dims) -> mace GridSample (float32)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_MODES = {"nearest": 0, "linear": 1, "bilinear": 1, "cubic": 2, "bicubic": 2}
_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op 'GridSample' (node '{node.name}'): {why}")


@register("GridSample")
def grid_sample(ctx, node):
    a = ctx.attrs(node)
    dec = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
    mode, pad = dec(a.get("mode", "linear" if ctx.opset >= 20 else "bilinear")), \
        dec(a.get("padding_mode", "zeros"))
    if mode not in _MODES:
        _fail(node, f"mode '{mode}' is not supported")
    if pad not in _PADDING:
        _fail(node, f"padding_mode '{pad}' is not supported")
    x, g = ctx.input(node, 0), ctx.input(node, 1)
    for name in (x, g):
        dt = ctx.dtype(name)
        if dt is not None and np.dtype(dt) != np.float32:
            _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32)")
    ctx.emit("GridSample", [x, g], [node.output[0]], node, mode=_MODES[mode],
             padding_mode=_PADDING[pad], align_corners=int(a.get("align_corners", 0)))
