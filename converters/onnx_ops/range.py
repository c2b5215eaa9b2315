"""ONNX Range and ConstantOfShape computed at run time -> mace Range / Fill (the runtime reads
their scalar / shape inputs while inferring shapes). Constant ones fold at convert time."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register
from .cast import MACE_DTYPE

_RANGE = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64))
_FILL = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8),
         np.dtype(np.int8), np.dtype(np.bool_))


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


@register("Range")
def range_(ctx, node):
    ins = [ctx.input(node, i) for i in range(3)]
    dt = ctx.dtype(ins[0])
    if dt is not None and dt not in _RANGE:
        _fail(node, f"dtype {dt} is not supported (float32, int32, int64)")
    ctx.emit("Range", ins, [node.output[0]], node)


@register("ConstantOfShape")
def constant_of_shape(ctx, node):
    value = ctx.attrs(node).get("value")
    value = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    if value.dtype not in _FILL:
        _fail(node, f"value dtype {value.dtype} is not supported")
    v = value[0]
    args = {"dtype": MACE_DTYPE[value.dtype]}
    if value.dtype == np.float32:
        args["value_float"] = float(v)
    else:
        args["value_int"] = int(v)
    ctx.emit("Fill", [ctx.input(node, 0)], [node.output[0]], node, **args)
