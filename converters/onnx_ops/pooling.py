"""ONNX MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool -> mace Pooling (NCHW; float32,
and uint8 / int8 for the max poolings); 1-D pooling (N, C, L) runs as 2-D with H = 1 (conv.py's
lifting); 3-D max/average pooling (N, C, D, H, W) is mace Pool3D (float32), 3-D global pooling
a mace Reduce over D, H and W (kept as 1)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register
from .conv import conv_geometry, from_h1, geometry_3d, h1_output, lift_1d_attrs, to_h1


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _check_input(ctx, node) -> tuple[str, int]:
    """(input, its spatial rank: 1 or 2)."""
    x = ctx.input(node, 0)
    shape = ctx.shape(x)
    rank = len(shape) if shape is not None else None
    if rank is None:
        ks = ctx.attrs(node).get("kernel_shape")
        rank = len(ks) + 2 if ks is not None else 4
    if rank not in (3, 4, 5):
        raise _fail(node, "only 1-D, 2-D and 3-D pooling (NCL, NCHW or NCDHW input) are "
                          "supported")
    if rank == 5 and ctx.dtype(x) is not None and np.dtype(ctx.dtype(x)) != np.float32:
        raise _fail(node, f"3-D pooling of {np.dtype(ctx.dtype(x)).name} is not supported "
                          "(float32)")
    dt = ctx.dtype(x)
    # max pooling moves bytes: uint8 / int8 keep their scale and zero point (docs/int8.md)
    ok = (np.float32, np.uint8, np.int8) if "Max" in node.op_type else (np.float32,)
    if dt is not None and np.dtype(dt) not in [np.dtype(t) for t in ok]:
        raise _fail(node, f"dtype {np.dtype(dt).name} is not supported "
                          f"({', '.join(np.dtype(t).name for t in ok)})")
    if len(node.output) > 1 and node.output[1]:
        raise _fail(node, "the Indices output is not supported")
    return x, rank - 2


def _pool_3d(ctx, node, x) -> None:
    a = ctx.attrs(node)
    kernel = list(a.get("kernel_shape", []))
    args = geometry_3d(ctx, node, kernel, x)
    if node.op_type == "AveragePool" and args["dilations"] != [1, 1, 1] and ctx.opset < 19:
        raise _fail(node, "dilations need opset 19")
    kind = {"pooling_type": "MAX"} if node.op_type == "MaxPool" else {
        "pooling_type": "AVG", "count_include_pad": int(a.get("count_include_pad", 0))}
    ceil_mode = int(a.get("ceil_mode", 0))
    ctx.emit("Pool3D", [x], [node.output[0]], node, kernels=kernel, ceil_mode=ceil_mode,
             **kind, **args)
    shape = ctx.shape(x)
    if ceil_mode and shape is not None and all(d is not None for d in shape):
        # as for 2-D: a last window starting in the end padding is dropped (ONNX Runtime)
        out = list(shape[:2])
        for i in range(3):
            dk = (kernel[i] - 1) * args["dilations"][i] + 1
            pb, pe = args["padding_values"][i], args["padding_values"][i + 3]
            s = args["strides"][i]
            n = -(-(shape[i + 2] + pb + pe - dk) // s) + 1
            if (n - 1) * s >= shape[i + 2] + pb:
                n -= 1
            out.append(n)
        if ctx.graph.shapes.get(node.output[0]) not in (None, out):
            ctx.graph.declare_shapes = False
        ctx.graph.shapes[node.output[0]] = out


@register("MaxPool", "AveragePool")
def pool(ctx, node):
    x, rank = _check_input(ctx, node)
    if rank == 3:
        _pool_3d(ctx, node, x)
        return
    a = ctx.attrs(node) if rank == 2 else lift_1d_attrs(ctx.attrs(node))
    if "kernel_shape" not in a or len(a["kernel_shape"]) != 2:
        raise _fail(node, f"kernel_shape must name {rank} dims")
    args = conv_geometry(ctx, node, a)
    if node.op_type == "MaxPool":
        args["pooling_type"] = "MAX"
    else:
        args["pooling_type"] = "AVG"
        args["count_include_pad"] = int(a.get("count_include_pad", 0))
        if args["dilations"] != [1, 1] and ctx.opset < 19:
            raise _fail(node, "dilations need opset 19")
    ceil_mode = int(a.get("ceil_mode", 0))
    shape = ctx.shape(x)
    if rank == 1:
        x, y = to_h1(ctx, node, x), h1_output(ctx, node)
        shape = ctx.graph.shapes.get(x)
        ctx.emit("Pooling", [x], [y], ctx.unique((node.name or node.output[0]) + "_2d"),
                 kernels=list(a["kernel_shape"]), ceil_mode=ceil_mode, **args)
        from_h1(ctx, node, y)
    else:
        y = node.output[0]
        ctx.emit("Pooling", [x], [y], node, kernels=list(a["kernel_shape"]),
                 ceil_mode=ceil_mode, **args)
    if ceil_mode and args["padding"] == "EXPLICIT" and shape is not None:
        # ONNX shape inference (onnx 1.23) keeps a last window that starts in the end
        # padding; ONNX Runtime and onnx.reference drop it, and so does the runtime.
        out = list(shape[:2])
        for i in range(2):
            dk = (a["kernel_shape"][i] - 1) * args["dilations"][i] + 1
            pb, pe, s = args["padding_values"][i], args["padding_values"][i + 2], args["strides"][i]
            n = -(-(shape[i + 2] + pb + pe - dk) // s) + 1
            if (n - 1) * s >= shape[i + 2] + pb:
                n -= 1
            out.append(n)
        final = out if rank == 2 else out[:2] + out[3:]
        if ctx.graph.shapes.get(node.output[0]) not in (None, final):
            # the shapes ONNX inferred downstream of this op are off too
            ctx.graph.declare_shapes = False
        ctx.graph.shapes[node.output[0]] = final
        if rank == 1:
            ctx.graph.shapes[y] = out


@register("GlobalMaxPool", "GlobalAveragePool")
def global_pool(ctx, node):
    x, rank = _check_input(ctx, node)
    kind = "MAX" if node.op_type == "GlobalMaxPool" else "AVG"
    if rank == 2:
        ctx.emit("Pooling", [x], [node.output[0]], node, pooling_type=kind, **{"global": 1})
        return
    if rank == 3:  # [N, C, D, H, W] -> [N, C, 1, 1, 1]: rows of D * H * W contiguous floats
        ctx.emit("Reduce", [x], [node.output[0]], node, reduce_type=kind.replace("AVG", "MEAN"),
                 axis=[2, 3, 4], keepdims=1)
        return
    x, y = to_h1(ctx, node, x), h1_output(ctx, node)
    ctx.emit("Pooling", [x], [y], ctx.unique((node.name or node.output[0]) + "_2d"),
             pooling_type=kind, **{"global": 1})
    from_h1(ctx, node, y)
