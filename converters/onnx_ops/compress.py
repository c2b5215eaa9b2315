"""ONNX Compress -> mace Compress (csrc/ops/compress.c): the output's length along the axis is
the count of true conditions, so the condition is a value input (known at infer)."""
from __future__ import annotations

from . import register


@register("Compress")
def compress(ctx, node):
    axis = ctx.attrs(node).get("axis")
    ctx.emit("Compress", [ctx.input(node, 0), ctx.input(node, 1)], [node.output[0]], node,
             axis=None if axis is None else int(axis))
