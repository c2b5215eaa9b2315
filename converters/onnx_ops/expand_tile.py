"""ONNX Expand and Tile -> mace Expand / Tile (shape / repeats constant or computed at run time)."""
from __future__ import annotations

import numpy as np

from . import register


def _ints_or_input(ctx, node, i):
    """(argument list, extra inputs): a constant becomes the argument, else the input is
    passed and the runtime reads its values while inferring shapes."""
    name = ctx.input(node, i)
    v = ctx.const(name)
    if v is not None:
        return [int(s) for s in np.asarray(v).reshape(-1)], []
    return None, [name]


@register("Expand")
def expand(ctx, node):
    shape, extra = _ints_or_input(ctx, node, 1)
    ctx.emit("Expand", [ctx.input(node, 0)] + extra, [node.output[0]], node, shape=shape)


@register("Tile")
def tile(ctx, node):
    reps, extra = _ints_or_input(ctx, node, 1)
    ctx.emit("Tile", [ctx.input(node, 0)] + extra, [node.output[0]], node, repeats=reps)
