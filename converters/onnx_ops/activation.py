"""ONNX activations -> mace Activation; Clip -> RELU/RELUX or Eltwise MAX/MIN."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register
from .eltwise import emit_eltwise

_FLT_BIG = 3.4e38  # at least this: +-FLT_MAX (ONNX's Clip defaults)


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _f32_input(ctx, node) -> str:
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt != np.float32:
        _fail(node, f"input dtype {dt} is not supported (float32 only)")
    return x


def _act(ctx, node, activation: str, **args) -> None:
    ctx.emit("Activation", [_f32_input(ctx, node)], [node.output[0]], node,
             activation=activation, **args)


@register("Relu")
def relu(ctx, node):
    _act(ctx, node, "RELU")


@register("Sigmoid")
def sigmoid(ctx, node):
    _act(ctx, node, "SIGMOID")


@register("Tanh")
def tanh(ctx, node):
    _act(ctx, node, "TANH")


@register("HardSwish")
def hard_swish(ctx, node):
    _act(ctx, node, "HARDSWISH")


@register("LeakyRelu")
def leaky_relu(ctx, node):
    _act(ctx, node, "LEAKYRELU",
         activation_coefficient=float(ctx.attrs(node).get("alpha", 0.01)))


@register("Elu")
def elu(ctx, node):
    _act(ctx, node, "ELU", activation_coefficient=float(ctx.attrs(node).get("alpha", 1.0)))


@register("HardSigmoid")
def hard_sigmoid(ctx, node):
    a = ctx.attrs(node)
    _act(ctx, node, "HARDSIGMOID", hardsigmoid_alpha=float(a.get("alpha", 0.2)),
         hardsigmoid_beta=float(a.get("beta", 0.5)))


@register("PRelu")
def prelu(ctx, node):
    x = _f32_input(ctx, node)
    slope = ctx.input(node, 1)
    c = ctx.const(slope)
    if c is not None and c.size == 1:
        ctx.emit("Activation", [x], [node.output[0]], node, activation="LEAKYRELU",
                 activation_coefficient=float(np.asarray(c).reshape(-1)[0]))
        return
    if c is not None and c.dtype != np.float32:
        slope = ctx.add_const(c.astype(np.float32), slope + "_f32")
    elif c is None and ctx.dtype(slope) not in (None, np.float32):
        _fail(node, f"slope dtype {ctx.dtype(slope)} is not supported")
    ctx.emit("Activation", [x, slope], [node.output[0]], node, activation="PRELU")


def _bound(ctx, node, i: int, attr: str, a: dict, is_f32: bool):
    """(constant value or None, tensor name or "") of Clip's min (i=1) / max (i=2). An absent
    float bound is ONNX's default, -FLT_MAX / +FLT_MAX (so Clip(+Inf) with no max is FLT_MAX, as
    the spec and onnxruntime say); None only where no clamp changes anything (an infinite bound
    on its own side, an absent integer bound)."""
    flt_max = float(np.finfo(np.float32).max)
    default = (-flt_max if i == 1 else flt_max) if is_f32 else None
    if ctx.opset < 11:
        v = a.get(attr)
        if v is None or abs(v) >= _FLT_BIG:
            return default, ""
        return float(v), ""
    if not ctx.has_input(node, i):
        return default, ""
    name = ctx.input(node, i)
    c = ctx.const(name)
    if c is None:
        return None, name
    v = np.asarray(c).reshape(-1)
    if v.size != 1:
        _fail(node, f"input {i} must be a scalar")
    v = v[0]
    if v.dtype.kind == "f" and not np.isfinite(v) and (v < 0) == (i == 1):
        return None, ""  # -Inf as min, +Inf as max: no clamp
    if v.dtype.kind == "f" and np.isfinite(v) and abs(float(v)) >= _FLT_BIG:
        return (flt_max if v > 0 else -flt_max), ""
    return v, ""


# Eltwise MAX / MIN take every one of these (csrc/ops/eltwise.c)
_CLIP_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int8, np.uint8,
                                           np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                           np.uint64))


@register("Clip")
def clip(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt not in _CLIP_DTYPES:
        _fail(node, f"input dtype {dt} is not supported")
    is_f32 = dt is None or dt == np.float32
    lo, lo_t = _bound(ctx, node, 1, "min", a, is_f32)
    hi, hi_t = _bound(ctx, node, 2, "max", a, is_f32)
    out = node.output[0]
    if is_f32 and not lo_t and not hi_t and lo is not None and float(lo) == 0.0:
        if hi is None:
            ctx.emit("Activation", [x], [out], node, activation="RELU")
            return
        if float(hi) >= 0.0:
            ctx.emit("Activation", [x], [out], node, activation="RELUX", max_limit=float(hi))
            return
    # General bounds: max(x, lo) then min(., hi), constants as 1-element inputs.
    steps = []
    for kind, v, t in (("MAX", lo, lo_t), ("MIN", hi, hi_t)):
        if t:
            steps.append((kind, t))
        elif v is not None:
            steps.append((kind, ctx.add_const(np.asarray(v, dtype=dt or np.float32),
                                              f"{out}_{kind.lower()}")))
    if not steps:
        ctx.forward(x, out, node)
        return
    acc = x
    for k, (kind, bound) in enumerate(steps):
        last = k == len(steps) - 1
        dst = out if last else ctx.unique(f"{out}_lo")
        emit_eltwise(ctx, [acc, bound], dst,
                 node if last else ctx.unique(f"{node.name or out}_lo"), kind)
        acc = dst
