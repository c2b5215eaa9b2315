"""ONNX Conv and ConvTranspose -> mace Conv2D / Deconv2D (2-D only, NCHW, OIHW filters)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_AUTO_PAD = {"NOTSET": "EXPLICIT", "": "EXPLICIT", "SAME_UPPER": "SAME_UPPER",
             "SAME_LOWER": "SAME_LOWER", "VALID": "VALID"}


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _spatial_rank(ctx, node) -> int:
    """Number of spatial dims from the filter, the input or kernel_shape, whichever is known."""
    for name in (ctx.input(node, 1), ctx.input(node, 0)):
        s = ctx.shape(name)
        if s is not None:
            return len(s) - 2
    ks = ctx.attrs(node).get("kernel_shape")
    return len(ks) if ks is not None else 2


def conv_geometry(ctx, node) -> dict:
    """Common Conv/ConvTranspose/pooling arguments: strides, dilations, padding_values, padding.

    ONNX pads [x1_begin, x2_begin, x1_end, x2_end] are mace's [top, left, bottom, right].
    """
    a = ctx.attrs(node)
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad not in _AUTO_PAD:
        raise _fail(node, f"auto_pad '{auto_pad}' is not supported")
    strides = list(a.get("strides", [1, 1]))
    dilations = list(a.get("dilations", [1, 1]))
    pads = list(a.get("pads", [0, 0, 0, 0]))
    if len(strides) != 2 or len(dilations) != 2 or len(pads) != 4:
        raise _fail(node, "only 2-D windows are supported")
    if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0:
        raise _fail(node, f"strides {strides}, dilations {dilations}, pads {pads} out of range")
    return dict(strides=strides, dilations=dilations, padding_values=pads,
                padding=_AUTO_PAD[auto_pad])


def _check_float(ctx, node, name: str) -> None:
    dt = ctx.dtype(name)
    if dt is not None and np.dtype(dt) != np.float32:
        raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")


@register("Conv")
def conv(ctx, node):
    if _spatial_rank(ctx, node) != 2:
        raise _fail(node, "only 2-D convolution (4-D NCHW input) is supported")
    x = ctx.input(node, 0)
    _check_float(ctx, node, x)
    group = int(ctx.attrs(node).get("group", 1))
    if group < 1:
        raise _fail(node, f"group {group} must be >= 1")
    inputs = [x, ctx.input(node, 1)]
    if ctx.has_input(node, 2):
        inputs.append(ctx.input(node, 2))
    ctx.emit("Conv2D", inputs, [node.output[0]], node, group=group,
             **conv_geometry(ctx, node))


@register("ConvTranspose")
def conv_transpose(ctx, node):
    if _spatial_rank(ctx, node) != 2:
        raise _fail(node, "only 2-D transposed convolution (4-D NCHW input) is supported")
    x = ctx.input(node, 0)
    _check_float(ctx, node, x)
    a = ctx.attrs(node)
    group = int(a.get("group", 1))
    if group < 1:
        raise _fail(node, f"group {group} must be >= 1")
    args = conv_geometry(ctx, node)
    out_pad = list(a.get("output_padding", [0, 0]))
    if len(out_pad) != 2 or min(out_pad) < 0:
        raise _fail(node, f"output_padding {out_pad} is not supported")
    args["output_padding"] = out_pad
    if "output_shape" in a:
        shape = list(a["output_shape"])
        if len(shape) not in (2, 4):
            raise _fail(node, f"output_shape {shape} must name 2 spatial dims")
        args["output_shape"] = shape[-2:]
    inputs = [x, ctx.input(node, 1)]
    if ctx.has_input(node, 2):
        inputs.append(ctx.input(node, 2))
    ctx.emit("Deconv2D", inputs, [node.output[0]], node, group=group, **args)
