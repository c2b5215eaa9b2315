"""ONNX RotaryEmbedding (opset 23) -> mace RotaryEmbedding (csrc/ops/rotary_embedding.c)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


@register("RotaryEmbedding")
def rotary_embedding(ctx, node):
    a = ctx.attrs(node)
    for i in (0, 1, 2):
        dt = ctx.dtype(ctx.input(node, i))
        if dt is not None and np.dtype(dt) != np.float32:
            raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): dtype "
                                   f"{np.dtype(dt).name} is not supported (float32 only)")
    inputs = [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)]
    if ctx.has_input(node, 3):
        inputs.append(ctx.input(node, 3))
    ctx.emit("RotaryEmbedding", inputs, [node.output[0]], node,
             interleaved=int(a.get("interleaved", 0)),
             rotary_embedding_dim=int(a.get("rotary_embedding_dim", 0)),
             num_heads=int(a.get("num_heads", 0)))
