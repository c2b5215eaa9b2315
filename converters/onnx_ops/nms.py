"""ONNX NonMaxSuppression -> mace NonMaxSuppression (csrc/ops/nms.c): an output whose size
depends on the input values, computed during shape inference (every input a value input)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


@register("NonMaxSuppression")
def non_max_suppression(ctx, node):
    boxes, scores = ctx.input(node, 0), ctx.input(node, 1)
    for name in (boxes, scores):
        dt = ctx.dtype(name)
        if dt is not None and dt != np.float32:
            raise UnsupportedError(f"ONNX op 'NonMaxSuppression' (node '{node.name}'): '{name}' "
                                   f"is {dt}; float32 is supported")
    defaults = (np.array([0], np.int64), np.array([0], np.float32), np.array([0], np.float32))
    extra = [ctx.input(node, 2 + k) or ctx.add_const(d, f"{node.output[0]}_nms_default{k}")
             for k, d in enumerate(defaults)]
    center = int(ctx.attrs(node).get("center_point_box", 0))
    if center not in (0, 1):
        raise UnsupportedError(f"ONNX op 'NonMaxSuppression' (node '{node.name}'): "
                               f"center_point_box {center} (0 or 1)")
    ctx.emit("NonMaxSuppression", [boxes, scores] + extra, [node.output[0]], node,
             center_point_box=center, has_score_threshold=int(ctx.has_input(node, 4)))
