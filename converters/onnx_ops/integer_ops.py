"""ONNX ConvInteger / MatMulInteger -> mace ConvInteger / MatMulInteger: uint8 / int8
operands minus their zero points, exact int32 outputs (reference kernels; a model mace
quantizes itself uses QLinearConv2D / QLinearMatMul instead).

Zero points: optional; ConvInteger's w_zero_point one value or one per output channel,
MatMulInteger's a_zero_point one value or one per row of A, b_zero_point one or one per
column of B. 2-D convolution only (4-D NCHW input).
"""
from __future__ import annotations

import numpy as np

from . import register
from .conv import conv_geometry
from .qlinear_common import check_quantized, fail


def _inputs(ctx, node) -> list[str]:
    x, w = ctx.input(node, 0), ctx.input(node, 1)
    dx = check_quantized(ctx, node, x, "input 0")
    check_quantized(ctx, node, w, "input 1")
    ins = [x, w]
    if ctx.has_input(node, 2):
        ins.append(ctx.input(node, 2))
    if ctx.has_input(node, 3):
        if len(ins) == 2:  # a zero point for input 1 only: input 0's is 0
            if dx is None:
                fail(node, "the first zero point is absent and input 0's dtype is not known")
            ins.append(ctx.add_const(np.zeros((), dx), f"{node.name or node.op_type}_zp0"))
        ins.append(ctx.input(node, 3))
    for i, z in enumerate(ins[2:]):
        zv = ctx.const(z)
        if zv is not None and zv.ndim > 1:  # per-row / per-column given as [M, 1] or [1, N]
            ins[2 + i] = ctx.add_const(zv.reshape(-1), f"{node.name or node.op_type}_zp{i}")
    return ins


@register("ConvInteger")
def conv_integer(ctx, node):
    ins = _inputs(ctx, node)
    shape = ctx.shape(ins[0])
    ks = ctx.attrs(node).get("kernel_shape")
    if (shape is not None and len(shape) != 4) or (ks is not None and len(ks) != 2):
        fail(node, "only 2-D convolution (4-D NCHW input) is supported")
    group = int(ctx.attrs(node).get("group", 1))
    if group < 1:
        fail(node, f"group {group} must be >= 1")
    ctx.emit("ConvInteger", ins, [node.output[0]], node, group=group, **conv_geometry(ctx, node))
    ctx.declare(node.output[0], np.int32)


@register("MatMulInteger")
def matmul_integer(ctx, node):
    ins = _inputs(ctx, node)
    sa, sb = ctx.shape(ins[0]), ctx.shape(ins[1])
    if (sa is not None and len(sa) < 2) or (sb is not None and len(sb) < 2):
        fail(node, "operands of rank 1 are not supported (ranks >= 2)")
    ctx.emit("MatMulInteger", ins, [node.output[0]], node)
    ctx.declare(node.output[0], np.int32)
