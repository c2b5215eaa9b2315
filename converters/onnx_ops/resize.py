"""ONNX Resize and Upsample -> mace ResizeNearestNeighbor / ResizeBilinear / ResizeBicubic.

Scales or sizes must be constants; they become the `scales` / `sizes` arguments, and the
ONNX coordinate_transformation_mode / nearest_mode strings pass through unchanged.
Upsample and Resize-10 use asymmetric coordinates and the "simple" nearest rounding
(what ONNX Runtime does for them).
"""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_COORD = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
          "tf_half_pixel_for_nn", "half_pixel_symmetric"}
_NEAREST = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _const(ctx, node, i: int, what: str):
    """Value of optional input i; None when absent or empty."""
    if not ctx.has_input(node, i):
        return None
    v = ctx.const(ctx.input(node, i))
    if v is None:
        raise _fail(node, f"{what} must be a constant")
    v = np.asarray(v).reshape(-1)
    return v if v.size else None


def _emit(ctx, node, x, mode, coord, nearest, scales=None, sizes=None, cubic=None,
          runtime=None):
    """`runtime`: name of a scales/sizes tensor computed at run time (then the runtime checks
    which dims it resizes)."""
    ins = [x] + ([runtime] if runtime else [])
    shape = ctx.shape(x)
    if runtime and shape is None:
        raise _fail(node, "run-time scales/sizes need the input's rank")
    rank = len(shape) if shape is not None else len(scales if scales is not None else sizes)
    if mode == "nearest":
        ctx.emit("ResizeNearestNeighbor", ins, [node.output[0]], node, scales=scales,
                 sizes=sizes, coordinate_transformation_mode=coord, nearest_mode=nearest)
        return
    if mode not in ("linear", "cubic"):
        raise _fail(node, f"mode '{mode}' is not supported")
    if rank < 2:
        raise _fail(node, f"{mode} resize needs rank >= 2")
    if runtime:
        outer = [False]
    elif scales is not None:
        outer = [float(s) != 1.0 for s in scales[:-2]]
    elif shape is not None:
        outer = [int(s) != int(d) for s, d in zip(sizes[:-2], shape[:-2])]
    else:
        outer = [False]
    if any(outer):
        raise _fail(node, f"{mode} resize only of the last two dims (H, W of NCHW)")
    if ctx.dtype(x) is not None and np.dtype(ctx.dtype(x)) != np.float32:
        raise _fail(node, f"{mode} resize needs float32")
    if mode == "cubic":
        ctx.emit("ResizeBicubic", ins, [node.output[0]], node, scales=scales, sizes=sizes,
                 coordinate_transformation_mode=coord, **(cubic or {}))
        return
    ctx.emit("ResizeBilinear", ins, [node.output[0]], node, scales=scales, sizes=sizes,
             coordinate_transformation_mode=coord)


def _runtime_full_rank(ctx, node, x, given: str, axes: list, is_sizes: bool) -> str:
    """The run-time scales/sizes of `axes` as a tensor over every dim of x, built at run time:
    each resized dim gathered from `given`, the others 1.0 (scales) or x's static dim (sizes)."""
    shape = ctx.static_shape(x)
    if shape is None or (is_sizes and any(d is None for d in shape)):
        raise _fail(node, "run-time scales/sizes with axes need the input's static shape")
    rank = len(shape)
    axes = [ax + rank if ax < 0 else ax for ax in axes]
    if sorted(axes) != sorted(set(axes)) or any(not 0 <= ax < rank for ax in axes):
        raise _fail(node, f"axes {axes} out of range for rank {rank}")
    dt = np.int64 if is_sizes else np.float32
    tag = node.name or node.output[0]
    parts = []
    for d in range(rank):
        if d in axes:
            part = ctx.unique(f"{given}_axis{d}")
            ctx.emit("Gather", [given, ctx.add_const(np.asarray([axes.index(d)], np.int64))],
                     [part], ctx.unique(f"{tag}_axis{d}"), axis=0)
            ctx.graph.dtypes[part] = ctx.dtype(given) or np.dtype(dt)
            ctx.graph.shapes[part] = [1]
        else:
            part = ctx.add_const(np.asarray([shape[d] if is_sizes else 1.0], dt))
        parts.append(part)
    full = ctx.unique(f"{given}_full")
    ctx.emit("Concat", parts, [full], ctx.unique(f"{tag}_full"), axis=0)
    ctx.graph.dtypes[full] = ctx.dtype(given) or np.dtype(dt)
    ctx.graph.shapes[full] = [rank]
    return full


def _keep_aspect_ratio(policy, shape, sizes, axes):
    """Output dims and scales of ONNX Resize's not_larger / not_smaller (float32, as ONNX
    Runtime computes them: one scale for every resized axis, dims rounded half away)."""
    f32 = np.float32
    ratios = [f32(sizes[ax]) / f32(shape[ax]) for ax in axes]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    out = list(sizes)
    scales = [1.0] * len(shape)
    for ax in axes:
        out[ax] = int(np.floor(f32(scale) * f32(shape[ax]) + f32(0.5)))
        scales[ax] = float(scale)
    for d in range(len(shape)):
        if d not in axes:
            scales[d] = float(f32(out[d]) / f32(shape[d])) if shape[d] else 1.0
    return out, scales


@register("Upsample")
def upsample(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    if ctx.opset < 9:
        scales = a.get("scales")
        if scales is None:
            raise _fail(node, "scales missing")
    else:
        scales = _const(ctx, node, 1, "scales")
        if scales is None:
            raise _fail(node, "scales missing")
    mode = a.get("mode", "nearest")
    if mode == "bilinear":
        mode = "linear"
    _emit(ctx, node, x, mode, "asymmetric", "simple",
          scales=[float(s) for s in scales])


@register("Resize")
def resize(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    mode = a.get("mode", "nearest")
    if ctx.opset < 11:
        scales = _const(ctx, node, 1, "scales")
        if scales is None:
            raise _fail(node, "scales missing")
        _emit(ctx, node, x, mode, "asymmetric", "simple", scales=[float(s) for s in scales])
        return
    coord = a.get("coordinate_transformation_mode", "half_pixel")
    nearest = a.get("nearest_mode", "round_prefer_floor")
    if coord not in _COORD:
        raise _fail(node, f"coordinate_transformation_mode '{coord}' is not supported")
    if nearest not in _NEAREST:
        raise _fail(node, f"nearest_mode '{nearest}' is not supported")
    if int(a.get("antialias", 0)):
        raise _fail(node, "antialias is not supported")
    policy = a.get("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise _fail(node, f"keep_aspect_ratio_policy '{policy}' is not supported")
    cubic = {"cubic_coeff_a": float(a.get("cubic_coeff_a", -0.75)),
             "exclude_outside": int(a.get("exclude_outside", 0))}
    runtime = [ctx.input(node, i) for i in (2, 3)
               if ctx.has_input(node, i) and ctx.const(ctx.input(node, i)) is None]
    if runtime:  # scales or sizes computed at run time: the runtime reads them at infer
        if policy != "stretch":
            raise _fail(node, "run-time sizes with keep_aspect_ratio_policy")
        full = runtime[0]
        if a.get("axes") is not None:
            full = _runtime_full_rank(ctx, node, x, runtime[0], [int(v) for v in a["axes"]],
                                      is_sizes=ctx.has_input(node, 3) and
                                      ctx.input(node, 3) == runtime[0])
        _emit(ctx, node, x, mode, coord, nearest, cubic=cubic, runtime=full)
        return
    scales = _const(ctx, node, 2, "scales")
    sizes = _const(ctx, node, 3, "sizes")
    axes = a.get("axes")
    if axes is not None:
        shape = ctx.shape(x)
        if shape is None:
            raise _fail(node, "axes need the input's static shape")
        rank = len(shape)
        axes = [ax + rank if ax < 0 else ax for ax in axes]
        if scales is not None:
            full = [1.0] * rank
            for ax, s in zip(axes, scales):
                full[ax] = float(s)
            scales = full
        if sizes is not None:
            full = list(ctx.static_shape(x))
            for ax, s in zip(axes, sizes):
                full[ax] = int(s)
            if any(d is None for d in full):
                raise _fail(node, "sizes on some axes of an input whose other dims follow a "
                                  "symbolic input dim (fix them with input_shapes=)")
            sizes = full
    if sizes is not None and policy != "stretch":
        shape = ctx.static_shape(x)
        if shape is None or any(d is None for d in shape):
            raise _fail(node, "keep_aspect_ratio_policy needs the input's static shape")
        sizes, scales = _keep_aspect_ratio(policy, shape, [int(v) for v in sizes],
                                           axes or list(range(len(shape))))
        _emit(ctx, node, x, mode, coord, nearest, sizes=sizes, scales=scales, cubic=cubic)
    elif sizes is not None:
        _emit(ctx, node, x, mode, coord, nearest, sizes=[int(s) for s in sizes], cubic=cubic)
    elif scales is not None:
        _emit(ctx, node, x, mode, coord, nearest, scales=[float(s) for s in scales], cubic=cubic)
    else:
        raise _fail(node, "needs constant scales or sizes")
