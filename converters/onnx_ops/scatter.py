"""ONNX ScatterND -> mace ScatterND; ScatterElements (and its deprecated opset 9-10 name
Scatter) -> mace ScatterElements. Reductions none/add/mul/max/min; bounds checked by the ops."""
from __future__ import annotations

from mace.errors import UnsupportedError

from . import register

_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _reduction(ctx, node) -> str:
    red = ctx.attrs(node).get("reduction", "none")
    if isinstance(red, bytes):
        red = red.decode()
    if red not in _REDUCTIONS:
        raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): reduction "
                               f"'{red}' is not supported")
    return red


@register("ScatterND")
def scatter_nd(ctx, node):
    ctx.emit("ScatterND", [ctx.input(node, i) for i in range(3)], [node.output[0]], node,
             reduction=_reduction(ctx, node))


@register("ScatterElements", "Scatter")
def scatter_elements(ctx, node):
    ctx.emit("ScatterElements", [ctx.input(node, i) for i in range(3)], [node.output[0]], node,
             axis=int(ctx.attrs(node).get("axis", 0)), reduction=_reduction(ctx, node))
