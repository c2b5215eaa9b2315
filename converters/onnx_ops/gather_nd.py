"""ONNX GatherElements -> mace GatherElements, GatherND -> mace GatherND (indices constant
or computed at run time; bounds checked by the ops)."""
from __future__ import annotations

from . import register


@register("GatherElements")
def gather_elements(ctx, node):
    ctx.emit("GatherElements", [ctx.input(node, 0), ctx.input(node, 1)], [node.output[0]], node,
             axis=int(ctx.attrs(node).get("axis", 0)))


@register("GatherND")
def gather_nd(ctx, node):
    ctx.emit("GatherND", [ctx.input(node, 0), ctx.input(node, 1)], [node.output[0]], node,
             batch_dims=int(ctx.attrs(node).get("batch_dims", 0)))
