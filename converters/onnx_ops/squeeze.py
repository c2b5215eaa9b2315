"""ONNX Squeeze -> mace Squeeze, Unsqueeze -> mace ExpandDims (axes attr < 13, input >= 13)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _axes(ctx, node):
    """(axes list or None, runtime axes input name or None)."""
    if ctx.opset < 13:
        return ctx.attrs(node).get("axes"), None
    if not ctx.has_input(node, 1):
        return None, None
    v = ctx.const(ctx.input(node, 1))
    if v is None:  # computed at run time: the runtime reads the values at infer
        return None, ctx.input(node, 1)
    return [int(a) for a in np.asarray(v).reshape(-1)], None


@register("Squeeze")
def squeeze(ctx, node):
    axes, runtime = _axes(ctx, node)
    ctx.emit("Squeeze", [ctx.input(node, 0)] + ([runtime] if runtime else []), [node.output[0]],
             node, axes=list(axes) if axes else None)


@register("Unsqueeze")
def unsqueeze(ctx, node):
    axes, runtime = _axes(ctx, node)
    if runtime:
        ctx.emit("ExpandDims", [ctx.input(node, 0), runtime], [node.output[0]], node)
        return
    if not axes:
        raise UnsupportedError(f"ONNX op 'Unsqueeze' (node '{node.name}'): axes missing")
    ctx.emit("ExpandDims", [ctx.input(node, 0)], [node.output[0]], node, axes=list(axes))
