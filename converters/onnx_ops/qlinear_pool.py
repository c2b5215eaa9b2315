"""onnxruntime's QLinearAveragePool / QLinearGlobalAveragePool (domain com.microsoft, as
onnxruntime.quantization writes them) -> mace QLinearAveragePool (2-D, NCHW).

Inputs X, x_scale, x_zero_point, y_scale, y_zero_point (zero points optional: absent ones
become constant zeros); attributes as ONNX AveragePool's (no dilations), channels_last 0 only.
The mean is rounded once in fixed point (docs/int8.md): onnxruntime's float averaging may
differ by one unit.
"""
from __future__ import annotations

from . import register
from .conv import conv_geometry
from .qlinear_common import check_quantized, check_scale, fail, zero_point


def _inputs(ctx, node) -> tuple[list[str], object]:
    x = ctx.input(node, 0)
    dt = check_quantized(ctx, node, x, "X")
    shape = ctx.shape(x)
    if shape is not None and len(shape) != 4:
        fail(node, "only 2-D pooling (4-D NCHW input) is supported")
    if int(ctx.attrs(node).get("channels_last", 0)):
        fail(node, "channels_last 1 (NHWC) is not supported")
    ins = [x, check_scale(ctx, node, 1, "x scale"), zero_point(ctx, node, 2, dt, "x zero point"),
           check_scale(ctx, node, 3, "y scale"), zero_point(ctx, node, 4, dt, "y zero point")]
    return ins, dt


def _declare(ctx, node, dt, shape):
    if dt is not None:
        ctx.declare(node.output[0], dt, shape)


@register("QLinearAveragePool", domain="com.microsoft")
def qlinear_average_pool(ctx, node):
    ins, dt = _inputs(ctx, node)
    a = ctx.attrs(node)
    if "kernel_shape" not in a or len(a["kernel_shape"]) != 2:
        fail(node, "kernel_shape must name 2 dims")
    if "dilations" in a:
        fail(node, "dilations are not an attribute of QLinearAveragePool")
    args = conv_geometry(ctx, node)
    del args["dilations"]
    ctx.emit("QLinearAveragePool", ins, [node.output[0]], node,
             kernels=list(a["kernel_shape"]), ceil_mode=int(a.get("ceil_mode", 0)),
             count_include_pad=int(a.get("count_include_pad", 0)), **args)
    _declare(ctx, node, dt, None)


@register("QLinearGlobalAveragePool", domain="com.microsoft")
def qlinear_global_average_pool(ctx, node):
    ins, dt = _inputs(ctx, node)
    ctx.emit("QLinearAveragePool", ins, [node.output[0]], node, **{"global": 1})
    shape = ctx.shape(ins[0])
    _declare(ctx, node, dt, shape[:2] + [1, 1] if shape is not None else None)
