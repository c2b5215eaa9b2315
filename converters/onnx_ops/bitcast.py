"""ONNX BitCast -> mace BitCast (a view: the same bytes read as another dtype of equal size)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from mace.errors import UnsupportedError

from . import register
from .cast import MACE_DTYPE


@register("BitCast")
def bitcast(ctx, node):
    x = ctx.input(node, 0)
    elem = int(ctx.attrs(node).get("to", 0))
    try:
        to = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    except Exception:  # noqa: BLE001 - string, ...
        to = None
    src = ctx.dtype(x)
    if to is None or to not in MACE_DTYPE:
        raise UnsupportedError(f"ONNX op 'BitCast' (node '{node.name}'): bit cast to "
                               f"{helper.tensor_dtype_to_string(elem)} is not supported")
    if src is None or np.dtype(src) not in MACE_DTYPE:
        raise UnsupportedError(f"ONNX op 'BitCast' (node '{node.name}'): input dtype {src} is "
                               "not supported")
    if np.dtype(src).itemsize != to.itemsize:
        raise UnsupportedError(f"ONNX op 'BitCast' (node '{node.name}'): {src} and {to} differ in "
                               "size (ONNX requires the same bit width)")
    ctx.emit("BitCast", [x], [node.output[0]], node, to=MACE_DTYPE[to])
