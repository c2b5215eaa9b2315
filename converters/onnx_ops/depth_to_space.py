"""ONNX DepthToSpace (DCR, CRD) and SpaceToDepth -> mace ops of the same names (NCHW)."""
from __future__ import annotations

from . import register


@register("DepthToSpace")
def depth_to_space(ctx, node):
    a = ctx.attrs(node)
    mode = a.get("mode", "DCR") if ctx.opset >= 11 else "DCR"
    ctx.emit("DepthToSpace", [ctx.input(node, 0)], [node.output[0]], node,
             block_size=int(a["blocksize"]), mode=mode)


@register("SpaceToDepth")
def space_to_depth(ctx, node):
    ctx.emit("SpaceToDepth", [ctx.input(node, 0)], [node.output[0]], node,
             block_size=int(ctx.attrs(node)["blocksize"]))
