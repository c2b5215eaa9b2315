"""ONNX Where -> mace Where (bool condition, three-way broadcasting, any dtype)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.int32, np.int64, np.uint8, np.int8,
                                      np.bool_))


@register("Where")
def where(ctx, node):
    c, x, y = (ctx.input(node, i) for i in range(3))
    for n in (x, y):
        dt = ctx.dtype(n)
        if dt is not None and dt not in _DTYPES:
            raise UnsupportedError(f"ONNX op 'Where' (node '{node.name}'): value dtype {dt} "
                                   "is not supported")
    ctx.emit("Where", [c, x, y], [node.output[0]], node)
