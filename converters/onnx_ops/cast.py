"""ONNX Cast / CastLike -> mace Cast (every mace dtype: floats 16/32/64, bfloat16, the float8
and float4 formats, integers of 2 to 64 bits, bool)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from mace.errors import UnsupportedError

from . import register
from ..serialize import _DTYPES, data_type

# NumPy dtype -> mace_dtype number (csrc/include/mace/mace.h) of every dtype mace stores.
MACE_DTYPE = {}
for _name in _DTYPES:
    try:
        _dt = np.dtype(_name)
    except TypeError:  # ml_dtypes' names: np.dtype knows them once ml_dtypes is imported
        import ml_dtypes
        _dt = np.dtype(getattr(ml_dtypes, _name))
    MACE_DTYPE[_dt] = data_type(_dt)
CASTABLE = MACE_DTYPE
ROUND_MODES = {"up": 0, "down": 1, "nearest": 2}


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _emit_cast(ctx, node, to) -> None:
    x = ctx.input(node, 0)
    if to not in CASTABLE:
        _fail(node, f"cast to {to} is not supported")
    src = ctx.dtype(x)
    if src is not None and np.dtype(src) not in CASTABLE:
        _fail(node, f"cast from {src} is not supported")
    if src is not None and np.dtype(src) == to:
        ctx.forward(x, node.output[0], node)
        return
    attrs = ctx.attrs(node)
    mode = attrs.get("round_mode", "up")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ROUND_MODES:
        _fail(node, f"round_mode '{mode}' is not up, down or nearest")
    ctx.emit("Cast", [x], [node.output[0]], node, to=CASTABLE[to],
             saturate=int(attrs.get("saturate", 1)), round_mode=ROUND_MODES[mode])


@register("Cast")
def cast(ctx, node):
    elem = ctx.attrs(node).get("to")
    if elem is None:
        _fail(node, "missing attribute 'to'")
    try:
        to = np.dtype(helper.tensor_dtype_to_np_dtype(int(elem)))
    except Exception:  # noqa: BLE001 - string, ...
        _fail(node, f"cast to ONNX type {helper.tensor_dtype_to_string(int(elem))} "
                    "is not supported")
    _emit_cast(ctx, node, to)


@register("CastLike")
def cast_like(ctx, node):
    to = ctx.dtype(ctx.input(node, 1))
    if to is None:
        _fail(node, "the target type (input 1) is unknown at convert time")
    _emit_cast(ctx, node, np.dtype(to))
