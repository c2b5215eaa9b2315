"""ONNX Pad -> mace Pad (pads attr < 11 or constant input >= 11; constant/reflect/edge/wrap)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_MODES = {"constant": 0, "reflect": 1, "edge": 3, "wrap": 4}


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op 'Pad' (node '{node.name}'): {why}")


@register("Pad")
def pad(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    mode = a.get("mode", "constant")
    if mode not in _MODES:
        raise _fail(node, f"mode '{mode}' is not supported")
    value = 0.0
    axes = None
    if ctx.opset < 11:
        pads = list(a.get("pads", a.get("paddings", [])))
        value = float(a.get("value", 0.0))
    else:
        ins = [ctx.input(node, i) if ctx.has_input(node, i) else "" for i in range(4)]
        if any(n and ctx.const(n) is None for n in ins[1:]):
            # computed at run time: the runtime reads pads/value/axes at infer
            if ins[3] and not ins[2]:
                ins[2] = ctx.add_const(np.zeros([], dtype=ctx.dtype(x) or np.float32))
            ctx.emit("Pad", [n for n in ins if n], [node.output[0]], node,
                     pad_type=_MODES[mode])
            return
        v = ctx.const(ins[1])
        if ins[2]:
            cv = np.asarray(ctx.const(ins[2])).reshape(-1)
            value = float(cv[0]) if cv.size else 0.0
        if ins[3]:
            axes = [int(i) for i in np.asarray(ctx.const(ins[3])).reshape(-1)]
        pads = [int(p) for p in np.asarray(v).reshape(-1)]
    if axes is None:
        if len(pads) % 2:
            raise _fail(node, f"{len(pads)} pads is not an even number")
        rank = len(pads) // 2
        axes = list(range(rank))
    else:
        shape = ctx.shape(x)
        if shape is None:
            raise _fail(node, "axes need the input's rank")
        rank = len(shape)
        axes = [ax + rank if ax < 0 else ax for ax in axes]
        if len(pads) != 2 * len(axes):
            raise _fail(node, f"{len(pads)} pads for {len(axes)} axes")
    n = len(axes)
    paddings = [0] * (2 * rank)
    for k, ax in enumerate(axes):
        paddings[2 * ax] = pads[k]
        paddings[2 * ax + 1] = pads[n + k]
    ctx.emit("Pad", [x], [node.output[0]], node, paddings=paddings, pad_type=_MODES[mode],
             constant_value=value if mode == "constant" else None)
