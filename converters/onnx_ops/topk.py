"""ONNX TopK -> mace TopK (K constant or read at run time; largest; output always sorted,
which `sorted=0` allows)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_DTYPES = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64))


@register("TopK")
def topk(ctx, node):
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt not in _DTYPES:
        raise UnsupportedError(f"ONNX op 'TopK' (node '{node.name}'): input dtype {dt} is not "
                               "supported (float32, int32, int64)")
    a = ctx.attrs(node)
    ins, k = [x], None
    if ctx.opset < 10:
        k = int(a["k"])
    else:
        v = ctx.const(ctx.input(node, 1))
        if v is not None:
            k = int(np.asarray(v).reshape(-1)[0])
        else:
            ins.append(ctx.input(node, 1))
    outs = list(node.output) + [""] * (2 - len(node.output))
    outs = [o or ctx.unique(f"{node.name or 'topk'}_unused{i}") for i, o in enumerate(outs)]
    ctx.emit("TopK", ins, outs, node, k=k, axis=int(a.get("axis", -1)),
             largest=int(a.get("largest", 1)))
