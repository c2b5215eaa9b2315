"""ONNX RoiAlign -> mace RoiAlign (csrc/ops/roi_align.c documents the args)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _s(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


@register("RoiAlign")
def roi_align(ctx, node):
    a = ctx.attrs(node)
    for i in (0, 1):
        dt = ctx.dtype(ctx.input(node, i))
        if dt is not None and np.dtype(dt) != np.float32:
            raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
    mode = _s(a.get("mode", "avg"))
    if mode not in ("avg", "max"):
        raise _fail(node, f"mode '{mode}' is not supported")
    ctm = _s(a.get("coordinate_transformation_mode",
                   "half_pixel" if ctx.opset >= 16 else "output_half_pixel"))
    if ctm not in ("half_pixel", "output_half_pixel"):
        raise _fail(node, f"coordinate_transformation_mode '{ctm}' is not supported")
    ctx.emit("RoiAlign", [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)],
             [node.output[0]], node, output_height=int(a.get("output_height", 1)),
             output_width=int(a.get("output_width", 1)),
             sampling_ratio=int(a.get("sampling_ratio", 0)),
             spatial_scale=float(a.get("spatial_scale", 1.0)), mode=int(mode == "max"),
             half_pixel=int(ctm == "half_pixel"))
