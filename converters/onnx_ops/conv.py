"""ONNX Conv and ConvTranspose -> mace Conv2D / Deconv2D (NCHW, OIHW filters). 1-D ones
(N, C, L) run as the 2-D ops with H = 1: the input gets a unit H by a view (ExpandDims), the
filter is reshaped, the window attributes get a leading 1 (kernel, stride, dilation) or 0
(pads, output_padding), and the result drops H again (Squeeze). 3-D Conv (N, C, D, H, W) is
mace Conv3D, with auto_pad resolved into explicit pads (geometry_3d)."""
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


def lift_1d_attrs(a: dict) -> dict:
    """A 1-D window's attributes as the 2-D ops' with H = 1 (kernel 1, stride 1, dilation 1,
    no padding along H). Lengths other than 1-D's are left for conv_geometry to refuse."""
    b = dict(a)
    for key, first in (("kernel_shape", 1), ("strides", 1), ("dilations", 1),
                       ("output_padding", 0)):
        if key in a and len(a[key]) == 1:
            b[key] = [first] + list(a[key])
    if "pads" in a and len(a["pads"]) == 2:
        b["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    if "output_shape" in a and len(a["output_shape"]) in (1, 3):
        b["output_shape"] = [1, list(a["output_shape"])[-1]]
    return b


def _tag(node) -> str:
    return node.name or f"{node.op_type}_{node.output[0]}"


def to_h1(ctx, node, name: str) -> str:
    """Tensor `name` of rank 3 (N, C, L) as rank 4 (N, C, 1, L): a constant is reshaped, anything
    else goes through a view op."""
    c = ctx.const(name)
    if c is not None:
        return ctx.add_const(np.asarray(c)[:, :, None, :], name + "_h1")
    out = ctx.unique(name + "_h1")
    ctx.emit("ExpandDims", [name], [out], ctx.unique(f"{_tag(node)}_{name}_h1"), axes=[2])
    shape, dt = ctx.shape(name), ctx.dtype(name)
    if shape is not None and all(d is not None for d in shape):
        ctx.graph.shapes[out] = list(shape[:2]) + [1] + list(shape[2:])
    if dt is not None:
        ctx.graph.dtypes[out] = dt
    return out


def h1_output(ctx, node) -> str:
    """The rank-4 tensor a lifted 1-D op writes (from_h1 turns it into the node's output)."""
    out = node.output[0]
    y4 = ctx.unique(out + "_h1")
    shape, dt = ctx.shape(out), ctx.dtype(out)
    if shape is not None and all(d is not None for d in shape):
        ctx.graph.shapes[y4] = list(shape[:2]) + [1] + list(shape[2:])
    if dt is not None:
        ctx.graph.dtypes[y4] = dt
    return y4


def from_h1(ctx, node, y4: str) -> None:
    ctx.emit("Squeeze", [y4], [node.output[0]], node, axes=[2])


def conv_geometry(ctx, node, a: dict | None = None) -> dict:
    """Common Conv/ConvTranspose/pooling arguments: strides, dilations, padding_values, padding,
    from the node's attributes (or `a`, e.g. lift_1d_attrs's).

    ONNX pads [x1_begin, x2_begin, x1_end, x2_end] are mace's [top, left, bottom, right].
    """
    a = ctx.attrs(node) if a is None else a
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


def geometry_3d(ctx, node, kernel: list, x: str) -> dict:
    """strides, dilations and padding_values [d, h, w begin, d, h, w end] of a 3-D window;
    SAME_UPPER / SAME_LOWER / VALID become explicit pads, which needs x's spatial dims."""
    a = ctx.attrs(node)
    strides = list(a.get("strides", [1, 1, 1]))
    dilations = list(a.get("dilations", [1, 1, 1]))
    pads = list(a.get("pads", [0] * 6))
    auto_pad = a.get("auto_pad", "NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if len(kernel) != 3 or len(strides) != 3 or len(dilations) != 3 or len(pads) != 6:
        raise _fail(node, "a 3-D window needs 3 kernel, stride and dilation values and 6 pads")
    if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0:
        raise _fail(node, f"strides {strides}, dilations {dilations}, pads {pads} out of range")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER", "VALID"):
        shape = ctx.static_shape(x)
        if auto_pad != "VALID" and (shape is None or any(d is None for d in shape[2:])):
            raise _fail(node, f"auto_pad {auto_pad} needs the input's spatial dims at conversion")
        pads = [0] * 6
        for i in range(3 if auto_pad != "VALID" else 0):
            n, s, dk = shape[i + 2], strides[i], (kernel[i] - 1) * dilations[i] + 1
            total = max((-(-n // s) - 1) * s + dk - n, 0)
            small = total // 2
            pads[i], pads[i + 3] = ((small, total - small) if auto_pad == "SAME_UPPER"
                                    else (total - small, small))
    elif auto_pad not in ("NOTSET", ""):
        raise _fail(node, f"auto_pad '{auto_pad}' is not supported")
    return dict(strides=strides, dilations=dilations, padding_values=pads)


def _check_float(ctx, node, name: str) -> None:
    dt = ctx.dtype(name)
    if dt is not None and np.dtype(dt) != np.float32:
        raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")


def _emit_2d(ctx, node, op_type, inputs, rank, **args):
    """Emits the 2-D op; a 1-D one (rank 1) runs on it with H = 1: x and the filter lifted to
    4-D, the output squeezed back."""
    if rank == 2:
        ctx.emit(op_type, inputs, [node.output[0]], node, **args)
        return
    inputs = [to_h1(ctx, node, inputs[0]), to_h1(ctx, node, inputs[1])] + inputs[2:]
    y4 = h1_output(ctx, node)
    ctx.emit(op_type, inputs, [y4], ctx.unique(_tag(node) + "_2d"), **args)
    from_h1(ctx, node, y4)


@register("Conv")
def conv(ctx, node):
    rank = _spatial_rank(ctx, node)
    if rank not in (1, 2, 3):
        raise _fail(node, "only 1-D, 2-D and 3-D convolution (NCL, NCHW or NCDHW input) are "
                          "supported")
    x = ctx.input(node, 0)
    _check_float(ctx, node, x)
    if rank == 3:
        w = ctx.input(node, 1)
        wshape = ctx.shape(w)
        kernel = list(ctx.attrs(node).get("kernel_shape", wshape[2:] if wshape else []))
        inputs = [x, w] + ([ctx.input(node, 2)] if ctx.has_input(node, 2) else [])
        ctx.emit("Conv3D", inputs, [node.output[0]], node,
                 group=int(ctx.attrs(node).get("group", 1)), **geometry_3d(ctx, node, kernel, x))
        return
    a = ctx.attrs(node) if rank == 2 else lift_1d_attrs(ctx.attrs(node))
    group = int(a.get("group", 1))
    if group < 1:
        raise _fail(node, f"group {group} must be >= 1")
    geometry = conv_geometry(ctx, node, a)
    inputs = [x, ctx.input(node, 1)]
    if ctx.has_input(node, 2):
        inputs.append(ctx.input(node, 2))
    _emit_2d(ctx, node, "Conv2D", inputs, rank, group=group, **geometry)


def _conv_transpose_3d(ctx, node, x) -> None:
    """mace Deconv3D; output_shape and auto_pad become explicit pads as the ONNX spec says
    (total = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - out, split with the
    extra pixel at the end for SAME_UPPER, at the start otherwise)."""
    a = ctx.attrs(node)
    w = ctx.input(node, 1)
    wshape = ctx.shape(w)
    kernel = list(a.get("kernel_shape", wshape[2:] if wshape else []))
    strides = list(a.get("strides", [1, 1, 1]))
    dilations = list(a.get("dilations", [1, 1, 1]))
    out_pad = list(a.get("output_padding", [0, 0, 0]))
    pads = list(a.get("pads", [0] * 6))
    auto_pad = a.get("auto_pad", "NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if len(kernel) != 3 or len(strides) != 3 or len(dilations) != 3 or len(out_pad) != 3 or \
            len(pads) != 6:
        raise _fail(node, "a 3-D window needs 3 kernel, stride, dilation and output_padding "
                          "values and 6 pads")
    if auto_pad not in ("NOTSET", "", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise _fail(node, f"auto_pad '{auto_pad}' is not supported")
    out_shape = list(a.get("output_shape", []))[-3:]
    shape = ctx.static_shape(x)
    if auto_pad == "VALID":
        pads = [0] * 6
    elif out_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if shape is None or any(d is None for d in shape[2:]):
            raise _fail(node, "output_shape / auto_pad need the input's spatial dims at conversion")
        if not out_shape:
            out_shape = [shape[i + 2] * strides[i] for i in range(3)]
        for i in range(3):
            total = strides[i] * (shape[i + 2] - 1) + out_pad[i] + \
                (kernel[i] - 1) * dilations[i] + 1 - int(out_shape[i])
            if total < 0:
                raise _fail(node, f"output_shape {out_shape} is larger than the full output")
            half = total // 2
            pads[i], pads[i + 3] = (half, total - half) if auto_pad == "SAME_UPPER" else \
                (total - half, half)
    inputs = [x, w] + ([ctx.input(node, 2)] if ctx.has_input(node, 2) else [])
    ctx.emit("Deconv3D", inputs, [node.output[0]], node, group=int(a.get("group", 1)),
             strides=strides, dilations=dilations, padding_values=pads, output_padding=out_pad)


@register("ConvTranspose")
def conv_transpose(ctx, node):
    rank = _spatial_rank(ctx, node)
    if rank not in (1, 2, 3):
        raise _fail(node, "only 1-D, 2-D and 3-D transposed convolution (NCL, NCHW or NCDHW "
                          "input) are supported")
    x = ctx.input(node, 0)
    _check_float(ctx, node, x)
    if rank == 3:
        _conv_transpose_3d(ctx, node, x)
        return
    a = ctx.attrs(node) if rank == 2 else lift_1d_attrs(ctx.attrs(node))
    group = int(a.get("group", 1))
    if group < 1:
        raise _fail(node, f"group {group} must be >= 1")
    args = conv_geometry(ctx, node, a)
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
    _emit_2d(ctx, node, "Deconv2D", inputs, rank, group=group, **args)
