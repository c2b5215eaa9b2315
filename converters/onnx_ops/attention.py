"""ONNX Attention (opset 23/24) -> mace Attention (csrc/ops/attention.c documents the args)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


@register("Attention")
def attention(ctx, node):
    a = ctx.attrs(node)
    for i in (0, 1, 2, 4, 5):
        if ctx.has_input(node, i):
            dt = ctx.dtype(ctx.input(node, i))
            if dt is not None and np.dtype(dt) != np.float32:
                raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
    if ctx.has_input(node, 3):
        dt = ctx.dtype(ctx.input(node, 3))
        if dt is not None and np.dtype(dt) not in (np.float32, np.bool_):
            raise _fail(node, f"attn_mask dtype {np.dtype(dt).name} is not supported")
    for name in ("left_window_size", "right_window_size"):
        if int(a.get(name, -1)) != -1:
            raise _fail(node, f"{name} is not supported")
    sp = a.get("softmax_precision")
    if sp is not None and int(sp) not in (0, 1):  # FLOAT (or unset): what mace computes in
        raise _fail(node, f"softmax_precision {sp} is not supported")
    inputs = [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)]
    flags = {}
    if ctx.has_input(node, 3):
        inputs.append(ctx.input(node, 3))
        flags["has_attn_mask"] = 1
    if ctx.has_input(node, 4) != ctx.has_input(node, 5):
        raise _fail(node, "past_key and past_value must be given together")
    if ctx.has_input(node, 4):
        inputs += [ctx.input(node, 4), ctx.input(node, 5)]
        flags["has_past"] = 1
    if ctx.has_input(node, 6):
        inputs.append(ctx.input(node, 6))
        flags["has_nonpad_kv_seqlen"] = 1
    args = dict(is_causal=int(a.get("is_causal", 0)),
                qk_matmul_output_mode=int(a.get("qk_matmul_output_mode", 0)),
                scale=float(a.get("scale", 0.0) or 0.0),
                softcap=float(a.get("softcap", 0.0) or 0.0), **flags)
    if "q_num_heads" in a:
        args["q_num_heads"] = int(a["q_num_heads"])
    if "kv_num_heads" in a:
        args["kv_num_heads"] = int(a["kv_num_heads"])
    outs = list(node.output)
    while outs and not outs[-1]:
        outs.pop()
    if not outs:
        return
    outs = [o if o else ctx.unique(f"{node.name or 'attention'}_unused_{i}")
            for i, o in enumerate(outs)]
    ctx.emit("Attention", inputs, outs, node, **args)
