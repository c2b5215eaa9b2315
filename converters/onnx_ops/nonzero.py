"""ONNX NonZero -> mace NonZero (csrc/ops/nonzero.c): an output whose size depends on the
input values, computed during shape inference (its input a value input). A constant input
folds at conversion instead (onnx_fold)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_DTYPES = (np.float32, np.int32, np.int64, np.bool_, np.uint8, np.int8)


@register("NonZero")
def nonzero(ctx, node):
    x = ctx.input(node, 0)
    dt, shape = ctx.dtype(x), ctx.shape(x)
    if dt is not None and dt not in [np.dtype(d) for d in _DTYPES]:
        raise UnsupportedError(f"ONNX op 'NonZero' (node '{node.name}'): input dtype {dt} is not "
                               "supported (float32, int32, int64, bool, uint8, int8)")
    if shape is not None and len(shape) == 0:
        raise UnsupportedError(f"ONNX op 'NonZero' (node '{node.name}'): a scalar input is not "
                               "supported")
    ctx.emit("NonZero", [x], [node.output[0]], node)
