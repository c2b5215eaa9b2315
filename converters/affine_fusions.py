"""Per-channel affine maps written as element-wise ops (scale * x + bias), fused away.

PaddleOCR's v4 models (PP-LCNetV3: the text detector and recogniser) follow each activation
with a "learnable affine block", Mul by a one-value constant then Add of another, on the whole
feature map: two passes over it where the convolutions around them do the real work, and
(an Eltwise with a constant runs on the plain layout only) Reorders in and out of the blocked
layout around each pair. affine_to_batchnorm makes the pair one BatchNorm; then
fold_batchnorm (transforms.py) folds it into the op before when it can,
fold_batchnorm_into_pointwise into a 1x1 convolution after it, and batchnorm_to_depthwise
makes what is left a 1x1 depthwise convolution: one pass, on the blocked layout.
"""
from __future__ import annotations

import numpy as np

from . import ir
from .graph_match import Matcher, float_const, new_const


def _channel_vector(c: np.ndarray, n: int) -> np.ndarray | None:
    """c as n values, one a channel of an [N, n, H, W] tensor, when it broadcasts so."""
    if c.ndim > 4:
        return None
    shape = (1,) * (4 - c.ndim) + tuple(c.shape)
    if shape[0] != 1 or shape[2] != 1 or shape[3] != 1 or shape[1] not in (1, n):
        return None
    return np.broadcast_to(c.reshape(-1).astype(np.float32), (n,)).copy()


def _const_operand(graph: ir.Graph, op: ir.Op) -> tuple[str, str] | None:
    """(variable input, constant input) of a two-input Eltwise with one float constant."""
    if len(op.inputs) != 2:
        return None
    a, b = op.inputs
    if b in graph.consts and a not in graph.consts and float_const(graph, b) is not None:
        return a, b
    if a in graph.consts and b not in graph.consts and float_const(graph, a) is not None:
        return b, a
    return None


def affine_to_batchnorm(graph: ir.Graph) -> bool:
    """Eltwise PROD(x, scale) -> Eltwise ADD(., offset) (or SUB of it), each constant one
    value or one a channel, on a 4-D f32 x of known shape, becomes BatchNorm(x, scale,
    offset) with the ADD's fused activation, if any. Neither step broadcasts x further."""
    m = Matcher(graph)
    for mul in graph.ops:
        if mul.type != "Eltwise" or mul.args != {"type": "PROD"}:
            continue
        pair = _const_operand(graph, mul)
        if pair is None:
            continue
        x, c = pair
        shape = graph.shapes.get(x)
        if (shape is None or len(shape) != 4 or graph.dtypes.get(x, np.float32) != np.float32
                or graph.shapes.get(mul.outputs[0]) != shape):
            continue
        add = m.sole_consumer(mul)
        if (add is None or add.type != "Eltwise" or add.args.get("type") not in ("ADD", "SUB")
                or set(add.args) - {"type", *ir.ACTIVATION_ARGS}
                or graph.shapes.get(add.outputs[0]) != shape):
            continue
        pair2 = _const_operand(graph, add)
        if pair2 is None or pair2[0] != mul.outputs[0]:
            continue
        if add.args["type"] == "SUB" and add.inputs[0] != mul.outputs[0]:
            continue  # offset - scale * x: not this form
        n = int(shape[1])
        scale = _channel_vector(graph.consts[c], n)
        offset = _channel_vector(graph.consts[pair2[1]], n)
        if scale is None or offset is None:
            continue
        if add.args["type"] == "SUB":
            offset = -offset
        mul.type = "BatchNorm"
        mul.inputs = [x, new_const(graph, mul.name + "_affine_scale", scale),
                      new_const(graph, mul.name + "_affine_offset", offset)]
        mul.args = {k: v for k, v in add.args.items() if k != "type"}
        mul.outputs = list(add.outputs)
        graph.ops = [o for o in graph.ops if o is not add]
        return True
    return False


def fold_batchnorm_into_pointwise(graph: ir.Graph) -> bool:
    """BatchNorm(scale, offset) without an activation whose only reader is a 1x1 Conv2D
    (group 1, no padding) goes into that convolution: conv(scale * x + offset) = (W scale) x
    + (bias + W offset) at every output pixel, since such a convolution reads no pixel
    outside x."""
    m = Matcher(graph)
    for bn in graph.ops:
        if (bn.type != "BatchNorm" or len(bn.inputs) != 3
                or bn.args.get("activation", "NOOP") not in ("NOOP", "", None)):
            continue
        scale, offset = float_const(graph, bn.inputs[1]), float_const(graph, bn.inputs[2])
        conv = m.sole_consumer(bn)
        if (scale is None or offset is None or conv is None or conv.type != "Conv2D"
                or len(conv.inputs) < 2 or conv.inputs[0] != bn.outputs[0]
                or bn.outputs[0] in conv.inputs[1:] or int(conv.args.get("group", 1)) != 1
                or any(int(p) for p in conv.args.get("padding_values", [0, 0, 0, 0]))):
            continue
        w = float_const(graph, conv.inputs[1])
        if w is None or w.ndim != 4 or w.shape[2:] != (1, 1) or w.dtype != np.float32:
            continue
        n = int(w.shape[1])
        if scale.size != n or offset.size != n:
            continue
        bias = conv.inputs[2] if len(conv.inputs) > 2 and conv.inputs[2] else None
        old = float_const(graph, bias) if bias else None
        if bias and (old is None or old.size != w.shape[0]):
            continue  # a computed bias
        w2 = w[:, :, 0, 0].astype(np.float64)
        b64 = np.zeros(w.shape[0]) if old is None else old.astype(np.float64).reshape(-1)
        new_b = (b64 + w2 @ offset.astype(np.float64).reshape(-1)).astype(np.float32)
        new_w = (w * scale.astype(np.float32).reshape(1, n, 1, 1)).astype(np.float32)
        ins = [bn.inputs[0], new_const(graph, conv.inputs[1] + "_affine", new_w),
               new_const(graph, conv.name + "_bias_affine", new_b)]
        conv.inputs = ins + conv.inputs[3:]
        graph.ops = [o for o in graph.ops if o is not bn]
        return True
    return False


AFFINE_FUSIONS = [affine_to_batchnorm, fold_batchnorm_into_pointwise]
