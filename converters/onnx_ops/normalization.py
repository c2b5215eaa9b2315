"""ONNX normalization ops -> mace LayerNorm (LayerNormalization, RMSNormalization,
onnxruntime's SimplifiedLayerNormalization),
GroupNorm (GroupNormalization, InstanceNormalization), LpNorm (LpNormalization),
LocalResponseNorm (LRN) and MVN (MeanVarianceNormalization)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _check_f32(ctx, node, *names: str) -> None:
    for n in names:
        dt = ctx.dtype(n) if n else None
        if dt is not None and np.dtype(dt) != np.float32:
            raise _fail(node, f"dtype {np.dtype(dt).name} of '{n}' is not supported "
                              "(float32 only)")


def _no_extra_outputs(node) -> None:
    if any(o for o in node.output[1:]):
        raise _fail(node, "the optional statistics outputs are not supported (inference only)")


def _norm_param(ctx, node, name: str, norm_shape, what: str) -> str:
    """A scale/bias broadcastable to the normalized dims, as a tensor of prod(norm_shape)
    elements or of one element."""
    c = ctx.const(name)
    if c is not None:
        c = np.asarray(c, np.float32)
        if c.size == 1:
            return ctx.add_const(c.reshape(1), name + "_flat")
        if norm_shape is None:
            return ctx.add_const(c.reshape(-1), name + "_flat")
        try:
            full = np.broadcast_to(c, list(norm_shape))
        except ValueError:
            raise _fail(node, f"{what} of shape {list(c.shape)} does not broadcast to the "
                              f"normalized dims {list(norm_shape)}") from None
        return ctx.add_const(np.ascontiguousarray(full).reshape(-1), name + "_flat")
    shape = ctx.shape(name)
    if norm_shape is not None and shape is not None:
        n = int(np.prod(shape)) if shape else 1
        if n not in (1, int(np.prod(norm_shape)) if norm_shape else 1):
            raise _fail(node, f"a run-time {what} of shape {shape} that broadcasts to the "
                              f"normalized dims {list(norm_shape)} is not supported")
    return name


def _layer_norm(ctx, node, rms: int, default_eps: float) -> None:
    a = ctx.attrs(node)
    if rms:
        _no_extra_outputs(node)
    x = ctx.input(node, 0)
    names = [ctx.input(node, i) for i in range(1, len(node.input))]
    _check_f32(ctx, node, x, *names)
    axis = int(a.get("axis", -1))
    eps = float(a.get("epsilon", default_eps))
    shape = ctx.shape(x)
    norm_shape = None
    if shape is not None:
        r = len(shape)
        if not -r <= axis < r:
            raise _fail(node, f"axis {axis} out of range for rank {r}")
        norm_shape = shape[axis % r:]
    ins = [x, _norm_param(ctx, node, ctx.input(node, 1), norm_shape, "scale")]
    if ctx.has_input(node, 2):
        ins.append(_norm_param(ctx, node, ctx.input(node, 2), norm_shape, "bias"))
    outs = [node.output[0]]
    stats = [o for o in node.output[1:3]]
    while stats and not stats[-1]:
        stats.pop()
    outs += [o or ctx.unique(node.output[0] + "_unused_stat") for o in stats]
    ctx.emit("LayerNorm", ins, outs, node, axis=axis, epsilon=eps, rms=rms)


@register("LayerNormalization")
def layer_normalization(ctx, node):
    _layer_norm(ctx, node, 0, 1e-5)


@register("RMSNormalization")
def rms_normalization(ctx, node):
    _layer_norm(ctx, node, 1, 1e-5)


@register("SimplifiedLayerNormalization")
def simplified_layer_normalization(ctx, node):
    """onnxruntime's RMSNorm (its transformer optimizer writes it, in the default domain):
    RMSNormalization's arithmetic; its inv_std_var output is refused as RMSNormalization's
    statistics are."""
    _layer_norm(ctx, node, 1, 1e-5)


@register("InstanceNormalization")
def instance_normalization(ctx, node):
    x, scale, bias = (ctx.input(node, i) for i in range(3))
    _check_f32(ctx, node, x, scale, bias)
    shape = ctx.shape(x)
    if shape is not None and len(shape) < 2:
        raise _fail(node, f"input of rank {len(shape)} is not supported (needs [N, C, ...])")
    eps = float(ctx.attrs(node).get("epsilon", 1e-5))
    ctx.emit("GroupNorm", [x, scale, bias], [node.output[0]], node, groups=0, epsilon=eps)


@register("GroupNormalization")
def group_normalization(ctx, node):
    a = ctx.attrs(node)
    x, scale, bias = (ctx.input(node, i) for i in range(3))
    _check_f32(ctx, node, x, scale, bias)
    if "num_groups" not in a:
        raise _fail(node, "attribute num_groups is required")
    groups = int(a["num_groups"])
    if groups <= 0:
        raise _fail(node, f"num_groups {groups} must be positive")
    eps = float(a.get("epsilon", 1e-5))
    if int(a.get("stash_type", 1)) != 1:
        raise _fail(node, f"stash_type {a['stash_type']} is not supported")
    # Opset 18 takes scale/bias per group, opset 21 per channel; when both read the same
    # (groups == C), per channel.
    per_group = 0
    if ctx.opset < 21:
        shape = ctx.shape(x)
        c = shape[1] if shape is not None and len(shape) > 1 else None
        per_group = int(c is None or c != groups)
    ctx.emit("GroupNorm", [x, scale, bias], [node.output[0]], node, groups=groups,
             epsilon=eps, per_group=per_group)


@register("LRN")
def lrn(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    _check_f32(ctx, node, x)
    if "size" not in a:
        raise _fail(node, "attribute size is required")
    size = int(a["size"])
    if size < 1:
        raise _fail(node, f"size {size} must be >= 1")
    shape = ctx.shape(x)
    if shape is not None and len(shape) < 2:
        raise _fail(node, f"input of rank {len(shape)} is not supported (needs [N, C, ...])")
    ctx.emit("LocalResponseNorm", [x], [node.output[0]], node, size=size,
             alpha=float(a.get("alpha", 1e-4)) / size, beta=float(a.get("beta", 0.75)),
             bias=float(a.get("bias", 1.0)))


@register("LpNormalization")
def lp_normalization(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    _check_f32(ctx, node, x)
    p = int(a.get("p", 2))
    if p not in (1, 2):
        raise _fail(node, f"p={p} is not supported (1 or 2)")
    ctx.emit("LpNorm", [x], [node.output[0]], node, axis=int(a.get("axis", -1)), p=p)


@register("MeanVarianceNormalization")
def mean_variance_normalization(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    _check_f32(ctx, node, x)
    axes = [int(v) for v in a.get("axes", [0, 2, 3])]
    shape = ctx.shape(x)
    if shape is not None:
        r = len(shape)
        if any(not -r <= v < r for v in axes) or len({v % r for v in axes}) != len(axes):
            raise _fail(node, f"axes {axes} are out of range or repeated for rank {r}")
    ctx.emit("MVN", [x], [node.output[0]], node, axes=axes, epsilon=1e-9)
