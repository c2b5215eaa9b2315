"""ONNX QLinearConv / QLinearMatMul -> mace QLinearConv2D / QLinearMatMul (docs/int8.md).

mace's int8 GEMM takes int8 weights, symmetric (zero point 0), per tensor or per output
channel, packed once at load, so the weights (QLinearConv's w, QLinearMatMul's b) must be
constants of dtype int8 with all-zero zero points: what onnxruntime.quantization writes with
weight_type=QInt8 (its default). uint8 weights, non-zero weight zero points and computed
weights fail with UnsupportedError naming the node. Scales must be float32. Activations are
uint8 or int8; the output's dtype is y_zero_point's. The accumulators are exact; the
requantization is fixed point, one unit from onnxruntime's float one at most.
"""
from __future__ import annotations

import numpy as np

from . import register
from .conv import conv_geometry
from .qlinear_common import check_quantized, check_scale, fail, zero_point


def _weights(ctx, node, wi: int, channels_axis: int) -> tuple[str, str, str, int]:
    """The constant int8 weights (input wi), their scale (wi + 1) and zero point (wi + 2),
    checked; returns their names (scale and zero point as 1-element or 1-D constants) and the
    output channel count."""
    w = ctx.input(node, wi)
    wv = ctx.const(w)
    if wv is None:
        fail(node, f"the weights (input {wi}) must be a constant: mace packs int8 weights once "
                   "at load")
    if wv.dtype == np.uint8:
        fail(node, "uint8 weights are not supported: weights must be int8 and symmetric (zero "
                   "point 0); quantize with weight_type=QuantType.QInt8")
    if wv.dtype != np.int8:
        fail(node, f"weights of dtype {wv.dtype.name} are not supported (int8)")
    channels = int(wv.shape[channels_axis]) if wv.ndim else 1
    scale = check_scale(ctx, node, wi + 1, "weight scale", per_channel=channels)
    sv = ctx.const(scale)
    if sv is not None and sv.ndim > 1:
        scale = ctx.add_const(sv.reshape(-1), f"{node.name or node.op_type}_w_scale")
    zname = ctx.input(node, wi + 2)
    zv = ctx.const(zname) if zname else np.zeros((), np.int8)
    if zv is None:
        fail(node, "the weight zero point must be a constant (all zeros)")
    if zv.dtype != np.int8:
        fail(node, f"the weight zero point is {zv.dtype.name}, the weights int8")
    if np.any(zv != 0):
        fail(node, f"weights must be symmetric: the weight zero point is {zv.reshape(-1)[:4]} "
                   "(not 0)")
    if zv.size not in (1, channels):
        fail(node, f"the weight zero point has {zv.size} values; needs 1 or {channels}")
    zp = ctx.add_const(zv.reshape(-1) if zv.size > 1 else zv.reshape(()),
                       f"{node.name or node.op_type}_w_zero_point")
    return w, scale, zp, channels


def _activations(ctx, node) -> tuple[str, str, str, str, str, np.dtype | None]:
    x = ctx.input(node, 0)
    dx = check_quantized(ctx, node, x, "the input")
    xs = check_scale(ctx, node, 1, "input scale")
    xz = zero_point(ctx, node, 2, dx, "input zero point")
    yz_name = ctx.input(node, 7)
    dy = check_quantized(ctx, node, yz_name, "y zero point") if yz_name else dx
    ys = check_scale(ctx, node, 6, "y scale")
    yz = zero_point(ctx, node, 7, dy, "y zero point")
    return x, xs, xz, ys, yz, dy


@register("QLinearConv")
def qlinear_conv(ctx, node):
    x, xs, xz, ys, yz, dy = _activations(ctx, node)
    w, ws, wz, cout = _weights(ctx, node, 3, 0)
    if ctx.const(w).ndim != 4:
        fail(node, "only 2-D convolution (4-D weights) is supported")
    group = int(ctx.attrs(node).get("group", 1))
    if group < 1:
        fail(node, f"group {group} must be >= 1")
    ins = [x, xs, xz, w, ws, wz, ys, yz]
    if ctx.has_input(node, 8):
        b = ctx.input(node, 8)
        bdt = ctx.dtype(b)
        if bdt is not None and np.dtype(bdt) != np.int32:
            fail(node, f"a bias of dtype {np.dtype(bdt).name} is not supported (int32)")
        ins.append(b)
    ctx.emit("QLinearConv2D", ins, [node.output[0]], node, group=group,
             **conv_geometry(ctx, node))
    if dy is not None:
        ctx.declare(node.output[0], dy)


@register("QLinearMatMul")
def qlinear_matmul(ctx, node):
    a, as_, az, ys, yz, dy = _activations(ctx, node)
    b, bs, bz, n = _weights(ctx, node, 3, -1)
    bv = ctx.const(b)
    if bv.ndim != 2:
        fail(node, f"weights of rank {bv.ndim} are not supported (a [K, N] matrix)")
    ctx.emit("QLinearMatMul", [a, as_, az, b, bs, bz, ys, yz], [node.output[0]], node)
    if dy is not None:
        sa = ctx.shape(a)
        ctx.declare(node.output[0], dy, sa[:-1] + [n] if sa else None)
