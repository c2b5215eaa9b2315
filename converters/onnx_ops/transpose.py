"""ONNX Transpose -> mace Transpose (perm as `dims`; absent: reversed)."""
from __future__ import annotations

from . import register


@register("Transpose")
def transpose(ctx, node):
    perm = ctx.attrs(node).get("perm")
    ctx.emit("Transpose", [ctx.input(node, 0)], [node.output[0]], node,
             dims=list(perm) if perm else None)
