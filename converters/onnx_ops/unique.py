"""ONNX Unique -> mace Unique (csrc/ops/unique.c): every output sized by the input values,
computed during shape inference (its input a value input)."""
from __future__ import annotations

from . import register


@register("Unique")
def unique(ctx, node):
    a = ctx.attrs(node)
    outs = list(node.output)
    while outs and not outs[-1]:
        outs.pop()
    if any(not o for o in outs):  # a skipped output in the middle: give it a name of its own
        outs = [o or ctx.unique(f"{node.output[0]}_unused{k}") for k, o in enumerate(outs)]
    axis = a.get("axis")
    ctx.emit("Unique", [ctx.input(node, 0)], outs, node,
             axis=None if axis is None else int(axis), sorted=int(a.get("sorted", 1)))
