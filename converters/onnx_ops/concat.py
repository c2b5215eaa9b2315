"""ONNX Concat -> mace Concat (any dtype, any rank, any number of inputs)."""
from __future__ import annotations

from . import register


@register("Concat")
def concat(ctx, node):
    inputs = [ctx.input(node, i) for i in range(len(node.input)) if node.input[i]]
    ctx.emit("Concat", inputs, [node.output[0]], node, axis=int(ctx.attrs(node)["axis"]))
