"""ONNX Gather -> mace Gather (indices constant or computed at run time)."""
from __future__ import annotations

from . import register


@register("Gather")
def gather(ctx, node):
    ctx.emit("Gather", [ctx.input(node, 0), ctx.input(node, 1)], [node.output[0]], node,
             axis=int(ctx.attrs(node).get("axis", 0)))
