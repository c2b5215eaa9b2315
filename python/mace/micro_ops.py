"""The mace op types that MACE Micro runs, one handler each (mace/micro.py drives them).

A handler reads one OperatorDef of a converted model (its arguments as the full engine reads
them, csrc/ops/<op>.c), infers its output's shape and dtype, and emits one micro op: the kernel
(micro/ops/manifest.inc), the C initializer of its parameter struct
(micro/include/mace_micro_ops.h), and its tensors; or it makes the output an alias of the
input (reshape-like ops move no bytes). Anything the micro kernels cannot compute exactly as
the full engine does is an UnsupportedError naming the op.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .errors import InvalidModelError, UnsupportedError

# ---------------------------------------------------------------------------------------------
# arguments


def arg(op, name: str) -> Any:
    for a in op.arg:
        if a.name == name:
            return a
    return None


def arg_int(op, name: str, default: int) -> int:
    a = arg(op, name)
    if a is None:
        return default
    if a.HasField("i"):
        return int(a.i)
    if a.HasField("f"):
        return int(a.f)
    return default


def arg_float(op, name: str, default: float) -> float:
    """As mace_op_arg_float: the f32 value (f, else i) rounded to float32."""
    a = arg(op, name)
    if a is None:
        return float(np.float32(default))
    if a.HasField("f"):
        return float(np.float32(a.f))
    if a.HasField("i"):
        return float(np.float32(a.i))
    return float(np.float32(default))


def arg_str(op, name: str, default: str | None) -> str | None:
    a = arg(op, name)
    if a is None or not a.HasField("s"):
        return default
    return a.s.decode()


def arg_ints(op, name: str) -> list[int] | None:
    a = arg(op, name)
    return None if a is None else [int(v) for v in a.ints]


def where(op) -> str:
    return f"op '{op.name}' ({op.type})"


def unsupported(op, what: str) -> UnsupportedError:
    return UnsupportedError(f"{where(op)}: {what} is not supported by mace micro")


# ---------------------------------------------------------------------------------------------
# C literals


def c_float(v: float) -> str:
    """An exact C99 float literal (hexadecimal) of the float32 value v."""
    f = float(np.float32(v))
    if not math.isfinite(f):
        raise InvalidModelError(f"a parameter is {f}; mace micro needs finite values")
    return f"{f.hex()}f"


ACT_KINDS = {"NOOP": "MACE_MICRO_ACT_NONE", "RELU": "MACE_MICRO_ACT_RELU",
             "RELUX": "MACE_MICRO_ACT_RELUX", "LEAKYRELU": "MACE_MICRO_ACT_LEAKYRELU",
             "SIGMOID": "MACE_MICRO_ACT_SIGMOID", "TANH": "MACE_MICRO_ACT_TANH",
             "HARDSIGMOID": "MACE_MICRO_ACT_HARDSIGMOID",
             "HARDSWISH": "MACE_MICRO_ACT_HARDSWISH", "ELU": "MACE_MICRO_ACT_ELU"}


def act_parse(op) -> tuple[str, float, float]:
    """(kind, alpha, beta) of the op's fused activation, defaults as ops/fused_activation.c."""
    s = arg_str(op, "activation", "NOOP") or "NOOP"
    if s not in ACT_KINDS:
        raise unsupported(op, f"activation \"{s}\" (micro has {', '.join(ACT_KINDS)})")
    alpha = beta = 0.0
    if s == "RELUX":
        beta = arg_float(op, "max_limit", 6.0)
    elif s == "LEAKYRELU":
        alpha = arg_float(op, "activation_coefficient", 0.01)
    elif s == "ELU":
        alpha = arg_float(op, "activation_coefficient", 1.0)
    elif s == "HARDSIGMOID":
        alpha = arg_float(op, "hardsigmoid_alpha", 0.2)
        beta = arg_float(op, "hardsigmoid_beta", 0.5)
    elif s == "HARDSWISH":
        alpha, beta = 1.0 / 6.0, 0.5
    return s, alpha, beta


def act_c(op) -> str:
    """The mace_micro_act initializer: the clamps inline, the rest through their function
    (micro/ops/act_math.c), so a model links only the libm its activations need."""
    kind, alpha, beta = act_parse(op)
    fn = "0" if kind in ("NOOP", "RELU", "RELUX") else f"mace_micro_act_{kind.lower()}"
    return f"{{{ACT_KINDS[kind]}, {c_float(alpha)}, {c_float(beta)}, {fn}}}"


# ---------------------------------------------------------------------------------------------
# windows (conv, pooling): explicit pads and output sizes as ops/conv_pad.h computes them


def _out_size(op, n: int, k: int, s: int, d: int, mode: str, ceil: int,
              pb: int, pe: int) -> tuple[int, int, int]:
    dk = (k - 1) * d + 1
    if mode == "VALID":
        return ((n - dk) // s + 1 if n >= dk else 0), 0, 0
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        out = (n + s - 1) // s
        total = max((out - 1) * s + dk - n, 0)
        pb = total // 2 if mode == "SAME_UPPER" else total - total // 2
        return out, pb, total - pb
    if mode not in ("EXPLICIT", "NOTSET"):
        raise InvalidModelError(f"{where(op)}: unknown padding \"{mode}\"")
    span = n + pb + pe - dk
    if span < 0:
        return 0, pb, pe
    out = ((span + s - 1) // s if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + pb:
        out -= 1
    return out, pb, pe


def _ints(op, name: str, n: int, default: list[int], lo: int) -> list[int]:
    v = arg_ints(op, name)
    if v is None:
        return list(default)
    if len(v) != n or any(x < lo for x in v):
        raise InvalidModelError(f"{where(op)}: argument {name} {v}: expects {n} values >= {lo}")
    return v


def window(op, x_shape, out_c: int, kh: int, kw: int, group: int, pooling: bool) -> dict:
    """The mace_micro_window of an op on an NCHW input (a dict of its fields)."""
    if len(x_shape) != 4:
        raise unsupported(op, f"an input of rank {len(x_shape)} (micro convolves NCHW, rank 4)")
    n, c, h, w = x_shape
    g = dict(batch=n, in_c=c, in_h=h, in_w=w, out_c=out_c, k_h=kh, k_w=kw, stride_h=1,
             stride_w=1, dil_h=1, dil_w=1, pad_t=0, pad_l=0, pad_b=0, pad_r=0, group=group)
    if pooling and arg_int(op, "global", 0):
        g.update(k_h=h, k_w=w, out_h=1, out_w=1)
        return g
    sh, sw = _ints(op, "strides", 2, [1, 1], 1)
    dh, dw = _ints(op, "dilations", 2, [1, 1], 1)
    pads = _ints(op, "padding_values", 4, [0, 0, 0, 0], 0)
    mode = arg_str(op, "padding", "EXPLICIT") or "EXPLICIT"
    ceil = arg_int(op, "ceil_mode", 0) if pooling else 0
    oh, pt, pb = _out_size(op, h, kh, sh, dh, mode, ceil, pads[0], pads[2])
    ow, pl, pr = _out_size(op, w, kw, sw, dw, mode, ceil, pads[1], pads[3])
    if oh <= 0 or ow <= 0:
        raise InvalidModelError(f"{where(op)}: output size {oh}x{ow} is not positive")
    g.update(stride_h=sh, stride_w=sw, dil_h=dh, dil_w=dw, pad_t=pt, pad_l=pl, pad_b=pb,
             pad_r=pr, out_h=oh, out_w=ow)
    return g


WINDOW_FIELDS = ("batch", "in_c", "in_h", "in_w", "out_c", "out_h", "out_w", "k_h", "k_w",
                 "stride_h", "stride_w", "dil_h", "dil_w", "pad_t", "pad_l", "pad_b", "pad_r",
                 "group")


def window_c(g: dict) -> str:
    return "{" + ", ".join(str(int(g[f])) for f in WINDOW_FIELDS) + "}"


def _taps(start: int, k: int, d: int, lo: int, hi: int) -> int:
    return sum(1 for t in range(k) if lo <= start + t * d < hi)


# ---------------------------------------------------------------------------------------------
# int8 helpers (docs/int8.md)


def requant_params(m: float) -> tuple[int, int]:
    """mace_requant_params (kernels/cpu/ref/requant.h) in Python, bit for bit: M as
    mult * 2^(-31 - shift), mult in [2^30, 2^31); (0, 0) when M does not fit."""
    if not m > 0.0:
        return 0, 0
    q, e = math.frexp(m)
    qi = math.floor(q * 2147483648.0 + 0.5)  # llround of a positive value below 2^31: exact
    if qi == 1 << 31:
        qi //= 2
        e += 1
    if -e > 31 or e > 30:
        return 0, 0
    return int(qi), -e


def qadd16_params(sa: float, sb: float, sy: float) -> tuple[int, int, int]:
    """mace_qadd16_params (kernels/cpu/ref/qlinear_eltwise.h) in Python, bit for bit:
    QLinearAdd's narrow form (m_a, m_b, s), or (0, 0, 0) where the scales need the wide one."""
    def at(mult: int, shift: int, s: int) -> int:  # mace_qadd16_multiplier
        r = 31 + shift - s
        if mult == 0 or r > 62:
            return 0
        return mult << -r if r <= 0 else (mult + (1 << (r - 1))) >> r
    if not (sa / sy < 64.0 and sb / sy < 64.0):
        return 0, 0, 0
    (am, ash), (bm, bsh) = requant_params(sa / sy), requant_params(sb / sy)
    for s in range(20, 8, -1):  # MACE_QADD16_MAX_SHIFT down to MACE_QADD16_MIN_SHIFT
        ma, mb = at(am, ash, s), at(bm, bsh, s)
        if ma <= 32767 and mb <= 32767:
            return ma, mb, s
    return 0, 0, 0


def q_scalar(g, op, k: int, what: str) -> float:
    v = g.const(op, k, what)
    if v.size != 1 or v.dtype != np.float32 or not (0 < float(v.reshape(-1)[0]) < 3.4e38):
        raise InvalidModelError(f"{where(op)}: {what} must be one positive f32 value")
    return float(v.reshape(-1)[0])


def q_zp(g, op, k: int, what: str) -> int:
    v = g.const(op, k, what)
    if v.size != 1:
        raise unsupported(op, f"a per-channel {what}")
    if v.dtype != np.int8:
        raise unsupported(op, f"{what} of dtype {v.dtype} (micro runs int8 activations: "
                              "quantize with schema='int8')")
    return int(v.reshape(-1)[0])


def q_out_range(op, y_scale: float, y_zp: int) -> tuple[int, int]:
    """The output range narrowed by the fused activation, as mace_qlinear_out."""
    kind, _alpha, beta = act_parse(op)
    if kind not in ("NOOP", "RELU", "RELUX"):
        raise unsupported(op, f"fused activation {kind} on int8")
    lo, hi = -128, 127
    if kind != "NOOP" and y_zp > lo:
        lo = y_zp
    if kind == "RELUX":
        top = float(y_zp) + float(np.round(beta / y_scale))  # nearbyint: half to even
        if top < hi:
            hi = int(lo if top < lo else top)
    return lo, hi


def q_weight_scales(g, op, ks: int, kz: int, channels: int) -> list[float]:
    s, z = g.const(op, ks, "weight scale"), g.const(op, kz, "weight zero point")
    if s.dtype != np.float32 or s.size not in (1, channels) or z.size not in (1, channels):
        raise InvalidModelError(f"{where(op)}: weight scale/zero point need 1 or {channels} "
                                "values (f32 / i8)")
    if z.dtype != np.int8 or np.any(z != 0):
        raise unsupported(op, "weights that are not symmetric i8")
    s = s.reshape(-1)
    return [float(s[0] if s.size == 1 else s[c]) for c in range(channels)]


def q_bias(g, op, k: int, channels: int):
    if len(op.input) <= k or not op.input[k]:
        return None
    b = g.const(op, k, "bias")
    if b.dtype != np.int32 or b.size != channels:
        raise InvalidModelError(f"{where(op)}: bias must be an i32 constant of {channels} values")
    return b.reshape(-1)


def requant_c(g, op, x_scale: float, w_scales: list[float], y_scale: float, y_zp: int) -> str:
    mults, shifts = zip(*(requant_params(x_scale * ws / y_scale) for ws in w_scales))
    lo, hi = q_out_range(op, y_scale, y_zp)
    m = g.const_array(np.array(mults, np.int32), f"{op.name}_mult")
    s = g.const_array(np.array(shifts, np.int32), f"{op.name}_shift")
    return f"{{{m}, {s}, {y_zp}, {lo}, {hi}}}"


# ---------------------------------------------------------------------------------------------
# handlers: fn(g, op) with g the micro graph under construction (mace/micro.py, _Builder)


def h_conv2d(g, op) -> None:
    x = g.value(op, 0, "f32")
    w = g.const(op, 1, "filter", np.float32)
    if w.ndim != 4:
        raise InvalidModelError(f"{where(op)}: filter has rank {w.ndim}, expects 4 (OIHW)")
    group = arg_int(op, "group", 1)
    cout, cin_g, kh, kw = w.shape
    c = g.shape(x)[1]
    if group < 1 or c != cin_g * group or cout % group:
        raise InvalidModelError(f"{where(op)}: filter {list(w.shape)} does not fit {c} input "
                                f"channels in {group} groups")
    win = window(op, g.shape(x), cout, kh, kw, group, False)
    bias = "0"
    if len(op.input) > 2 and op.input[2]:
        b = g.const(op, 2, "bias", np.float32)
        if b.size != cout:
            raise InvalidModelError(f"{where(op)}: bias has {b.size} values, expects {cout}")
        bias = g.const_array(b.reshape(-1), f"{op.name}_bias")
    wc = g.const_array(w, f"{op.name}_filter")
    fn = "depthwise_conv2d_f32" if group == c and cin_g == 1 and group > 1 else "conv2d_f32"
    yshape = (win["batch"], cout, win["out_h"], win["out_w"])
    res = None
    if len(op.input) > 3 and op.input[3]:  # y = act(conv + bias + residual)
        res = g.value(op, 3, "f32")
        if g.shape(res) != yshape:
            raise unsupported(op, f"a residual of shape {list(g.shape(res))} (output {yshape})")
    y = g.define(op, 0, yshape, "f32")
    g.emit(op, fn, "mace_micro_conv2d",
           f"{{{window_c(win)}, {wc}, {bias}, {act_c(op)}}}", x, res, y)


def _fc(g, op, x: str, w: np.ndarray, bias: np.ndarray | None) -> None:
    """y [M, N] = x [M, K] (rank > 2 flattened as FullyConnected does) * w[N, K]^T + bias."""
    xs = g.shape(x)
    n, k = w.shape
    m = xs[0] if len(xs) >= 2 else 1
    if int(np.prod(xs)) != m * k:
        raise InvalidModelError(f"{where(op)}: input {list(xs)} does not give rows of {k}")
    bc = "0"
    if bias is not None:
        if bias.size != n:
            raise InvalidModelError(f"{where(op)}: bias has {bias.size} values, expects {n}")
        bc = g.const_array(bias.reshape(-1).astype(np.float32), f"{op.name}_bias")
    wc = g.const_array(np.ascontiguousarray(w, np.float32), f"{op.name}_weight")
    y = g.define(op, 0, (m, n), "f32")
    g.emit(op, "fully_connected_f32", "mace_micro_fc",
           f"{{{m}, {k}, {n}, {wc}, {bc}, {act_c(op)}}}", x, None, y)


def h_fully_connected(g, op) -> None:
    x = g.value(op, 0, "f32")
    w = g.const(op, 1, "weight", np.float32)
    if w.ndim != 2:
        raise InvalidModelError(f"{where(op)}: weight has rank {w.ndim}, expects 2")
    bias = g.const(op, 2, "bias", np.float32) if len(op.input) > 2 and op.input[2] else None
    _fc(g, op, x, w, bias)


def h_matmul(g, op) -> None:
    x = g.value(op, 0, "f32")
    if arg_int(op, "transpose_a", 0):
        raise unsupported(op, "transpose_a")
    if not g.is_const(op.input[1]):
        raise unsupported(op, "a computed (non-constant) B")
    b = g.const(op, 1, "b", np.float32)
    xs = g.shape(x)
    if b.ndim != 2 or len(xs) != 2:
        raise unsupported(op, f"shapes {list(xs)} x {list(b.shape)} (micro: 2-D x constant 2-D)")
    w = b if arg_int(op, "transpose_b", 0) else b.T
    bias = g.const(op, 2, "bias", np.float32) if len(op.input) > 2 and op.input[2] else None
    _fc(g, op, x, w, bias)


def _pool_window(g, op, x: str) -> tuple[dict, int]:
    xs = g.shape(x)
    if len(xs) != 4:
        raise unsupported(op, f"an input of rank {len(xs)} (NCHW pooling)")
    k = [0, 0] if arg_int(op, "global", 0) else _ints(op, "kernels", 2, [0, 0], 1)
    if not arg_int(op, "global", 0) and k[0] < 1:
        raise InvalidModelError(f"{where(op)}: argument kernels [kH, kW] missing")
    win = window(op, xs, xs[1], k[0], k[1], 1, True)
    return win, arg_int(op, "count_include_pad", 0)


def h_pooling(g, op) -> None:
    kind = arg_str(op, "pooling_type", "")
    if kind not in ("MAX", "AVG"):
        raise InvalidModelError(f"{where(op)}: pooling_type \"{kind}\", expects MAX or AVG")
    x = g.value(op, 0, None)
    dt = g.dtype(x)
    if dt == "i8" and kind != "MAX":
        raise unsupported(op, "AVG pooling of i8 outside QLinearAveragePool")
    win, cip = _pool_window(g, op, x)
    y = g.define(op, 0, (win["batch"], win["in_c"], win["out_h"], win["out_w"]), dt)
    g.emit(op, f"pooling_{dt}", "mace_micro_pool",
           f"{{{window_c(win)}, {int(kind == 'MAX')}, {cip}}}", x, None, y)


def h_activation(g, op) -> None:
    x = g.value(op, 0, "f32")
    if len(op.input) > 1:
        raise unsupported(op, "PRELU")
    y = g.define(op, 0, g.shape(x), "f32")
    g.emit(op, "activation_f32", "mace_micro_activation",
           f"{{{g.numel(x)}, {act_c(op)}}}", x, None, y, inplace=True)


def h_softmax(g, op) -> None:
    x = g.value(op, 0, "f32")
    if arg_int(op, "use_log", 0):
        raise unsupported(op, "log-softmax")
    if arg_int(op, "nan_to_zero", 0):
        raise unsupported(op, "nan_to_zero (the converter's fold of Where(IsNaN(p), 0, p))")
    xs = list(g.shape(x)) or [1]
    axis = arg_int(op, "axis", -1)
    axis = axis + len(xs) if axis < 0 else axis
    if not 0 <= axis < len(xs):
        raise InvalidModelError(f"{where(op)}: axis {axis} out of range for rank {len(xs)}")
    outer = int(np.prod(xs[:axis]))
    if arg_int(op, "coerce_2d", 0):
        length, inner = int(np.prod(xs[axis:])), 1
    else:
        length, inner = xs[axis], int(np.prod(xs[axis + 1:]))
    y = g.define(op, 0, g.shape(x), "f32")
    g.emit(op, "softmax_f32", "mace_micro_softmax", f"{{{outer}, {length}, {inner}}}", x, None,
           y, inplace=True)


ELTWISE_TYPES = {"ADD": "MACE_MICRO_ELTWISE_ADD", "SUB": "MACE_MICRO_ELTWISE_SUB",
                 "PROD": "MACE_MICRO_ELTWISE_PROD", "MIN": "MACE_MICRO_ELTWISE_MIN",
                 "MAX": "MACE_MICRO_ELTWISE_MAX"}


def _broadcast4(op, a: tuple, b: tuple) -> tuple[list[int], list[int], list[int]]:
    """Output dims and element strides of a and b (0 where broadcast), padded to rank 4."""
    if max(len(a), len(b)) > 4:
        raise unsupported(op, "broadcasting over more than 4 dims")
    a4, b4 = [1] * (4 - len(a)) + list(a), [1] * (4 - len(b)) + list(b)
    out = []
    for da, db in zip(a4, b4):
        if da != db and 1 not in (da, db):
            raise InvalidModelError(f"{where(op)}: shapes {list(a)} and {list(b)} do not "
                                    "broadcast")
        out.append(max(da, db))

    def strides(d4):
        s, acc = [0] * 4, 1
        for i in range(3, -1, -1):
            s[i] = 0 if d4[i] == 1 and out[i] != 1 else acc
            acc *= d4[i]
        return s
    return out, strides(a4), strides(b4)


def _eltwise(g, op, kind: str, a: str, b: str) -> None:
    dims, sa, sb = _broadcast4(op, g.shape(a), g.shape(b))
    rank = max(len(g.shape(a)), len(g.shape(b)))
    y = g.define(op, 0, tuple(dims[4 - rank:]), "f32")
    ints = lambda v: "{" + ", ".join(str(int(i)) for i in v) + "}"  # noqa: E731
    g.emit(op, "eltwise_f32", "mace_micro_eltwise",
           f"{{{ELTWISE_TYPES[kind]}, {ints(dims)}, {ints(sa)}, {ints(sb)}, {act_c(op)}}}",
           a, b, y, inplace=g.shape(a) == tuple(dims[4 - rank:]))


def h_eltwise(g, op) -> None:
    kind = arg_str(op, "type", "")
    if kind not in ELTWISE_TYPES:
        raise unsupported(op, f"type \"{kind}\" (micro: {', '.join(ELTWISE_TYPES)})")
    if len(op.input) != 2:
        raise unsupported(op, f"{len(op.input)} inputs")
    a, b = g.value(op, 0, "f32"), g.value(op, 1, "f32")
    if g.is_const(a) and g.is_const(b):
        raise unsupported(op, "two constant inputs (fold them before micro)")
    _eltwise(g, op, kind, a, b)


def h_bias_add(g, op) -> None:
    x = g.value(op, 0, "f32")
    b = g.const(op, 1, "bias", np.float32)
    xs = g.shape(x)
    if len(xs) < 2 or b.size != xs[1]:
        raise InvalidModelError(f"{where(op)}: bias of {b.size} values for input {list(xs)}")
    bname = g.add_const(f"{op.name}_bias4", b.reshape((1, xs[1]) + (1,) * (len(xs) - 2)))
    _eltwise(g, op, "ADD", x, bname)


def _reshape_target(g, op, xs: tuple) -> tuple:
    n = int(np.prod(xs))
    fa = arg(op, "flatten_axis")
    if fa is not None:
        axis = arg_int(op, "flatten_axis", 1)
        axis = axis + len(xs) if axis < 0 else axis
        return (int(np.prod(xs[:axis])), int(np.prod(xs[axis:])))
    shape = arg_ints(op, "shape")
    if shape is None:
        if len(op.input) < 2 or not g.is_const(op.input[1]):
            raise unsupported(op, "a shape computed at run time")
        shape = [int(v) for v in g.const(op, 1, "shape").reshape(-1)]
    allowzero = arg_int(op, "allowzero", 0)
    out = [xs[i] if d == 0 and not allowzero and i < len(xs) else d for i, d in enumerate(shape)]
    if out.count(-1) > 1:
        raise InvalidModelError(f"{where(op)}: shape {shape} has more than one -1")
    if -1 in out:
        rest = int(np.prod([d for d in out if d != -1]))
        out[out.index(-1)] = n // rest if rest else 0
    if int(np.prod(out)) != n:
        raise InvalidModelError(f"{where(op)}: cannot reshape {list(xs)} to {shape}")
    return tuple(out)


def h_reshape(g, op) -> None:
    x = g.value(op, 0, None)
    xs = g.shape(x)
    if op.type == "Reshape":
        ys = _reshape_target(g, op, xs)
    elif op.type == "Squeeze":
        axes = arg_ints(op, "axes") or []
        axes = [a + len(xs) if a < 0 else a for a in axes]
        ys = tuple(d for i, d in enumerate(xs) if not ((i in axes) if axes else d == 1))
    elif op.type == "ExpandDims":
        axes = arg_ints(op, "axis") or arg_ints(op, "axes") or []
        ys = list(xs)
        for a in sorted(a + len(xs) + len(axes) if a < 0 else a for a in axes):
            ys.insert(a, 1)
        ys = tuple(ys)
    else:  # Identity
        ys = xs
    if int(np.prod(ys)) != int(np.prod(xs)):
        raise InvalidModelError(f"{where(op)}: {list(xs)} -> {list(ys)} changes the size")
    g.alias(op, x, ys)


# ------------------------------------------------------------------------------- int8 handlers


def h_quantize(g, op) -> None:
    x = g.value(op, 0, "f32")
    scale, zp = q_scalar(g, op, 1, "scale"), q_zp(g, op, 2, "zero point")
    y = g.define(op, 0, g.shape(x), "i8")
    g.emit(op, "quantize_i8", "mace_micro_quantize",
           f"{{{g.numel(x)}, {c_float(scale)}, {zp}}}", x, None, y)


def h_dequantize(g, op) -> None:
    x = g.value(op, 0, "i8")
    scale, zp = q_scalar(g, op, 1, "scale"), q_zp(g, op, 2, "zero point")
    y = g.define(op, 0, g.shape(x), "f32")
    g.emit(op, "dequantize_i8", "mace_micro_dequantize",
           f"{{{g.numel(x)}, {c_float(scale)}, {zp}}}", x, None, y)


def _split_residual(op) -> tuple:
    """A QLinearConv2D with a fused residual Add (inputs 9-13, docs/int8.md) as the two ops it
    stands for: the convolution into `<output>_conv`, then the QLinearAdd (the same bytes)."""
    conv, add = type(op)(), type(op)()
    conv.CopyFrom(op)
    del conv.input[9:]
    del conv.output_shape[:]
    conv.output[0] = op.output[0] + "_conv"
    res = [a for a in conv.arg if a.name == "residual_activation"]
    for a in res:
        conv.arg.remove(a)
    add.name, add.type = op.name + "_residual", "QLinearAdd"
    add.input.extend([conv.output[0], op.input[6], op.input[7]] + list(op.input[9:14]))
    add.output.extend(op.output)
    add.output_shape.extend(op.output_shape)
    if res:
        a = add.arg.add()
        a.CopyFrom(res[0])
        a.name = "activation"
    return conv, add


def h_qconv2d(g, op) -> None:
    if len(op.input) > 9:
        conv, add = _split_residual(op)
        h_qconv2d(g, conv)
        h_qadd(g, add)
        return
    x = g.value(op, 0, "i8")
    xs_, xz = q_scalar(g, op, 1, "x_scale"), q_zp(g, op, 2, "x_zero_point")
    w = g.const(op, 3, "filter")
    if w.dtype != np.int8 or w.ndim != 4:
        raise unsupported(op, f"a {w.dtype} filter of rank {w.ndim} (micro: i8 OIHW)")
    ys_, yz = q_scalar(g, op, 6, "y_scale"), q_zp(g, op, 7, "y_zero_point")
    group = arg_int(op, "group", 1)
    cout, cin_g, kh, kw = w.shape
    c = g.shape(x)[1]
    if group < 1 or c != cin_g * group or cout % group:
        raise InvalidModelError(f"{where(op)}: filter {list(w.shape)} does not fit {c} input "
                                f"channels in {group} groups")
    win = window(op, g.shape(x), cout, kh, kw, group, False)
    scales = q_weight_scales(g, op, 4, 5, cout)
    b = q_bias(g, op, 8, cout)
    bias = "0" if b is None else g.const_array(b, f"{op.name}_bias")
    rq = requant_c(g, op, xs_, scales, ys_, yz)
    wc = g.const_array(w, f"{op.name}_filter")
    fn = "qdepthwise_conv2d_i8" if group == c and cin_g == 1 and group > 1 else "qconv2d_i8"
    y = g.define(op, 0, (win["batch"], cout, win["out_h"], win["out_w"]), "i8")
    g.emit(op, fn, "mace_micro_qconv2d", f"{{{window_c(win)}, {wc}, {bias}, {xz}, {rq}}}", x,
           None, y)


def h_qmatmul(g, op) -> None:
    x = g.value(op, 0, "i8")
    xs_, xz = q_scalar(g, op, 1, "a_scale"), q_zp(g, op, 2, "a_zero_point")
    if not g.is_const(op.input[3]):
        raise unsupported(op, "a computed (non-constant) B")
    b = g.const(op, 3, "b")
    shape = g.shape(x)
    if b.dtype != np.int8 or b.ndim != 2 or len(shape) != 2:
        raise unsupported(op, f"shapes {list(shape)} x {list(b.shape)} {b.dtype} (micro: 2-D "
                              "x constant 2-D i8)")
    k, n = b.shape
    if shape[1] != k:
        raise InvalidModelError(f"{where(op)}: {list(shape)} x {list(b.shape)} do not fit")
    ys_, yz = q_scalar(g, op, 6, "y_scale"), q_zp(g, op, 7, "y_zero_point")
    scales = q_weight_scales(g, op, 4, 5, n)
    bb = q_bias(g, op, 8, n)
    bias = "0" if bb is None else g.const_array(bb, f"{op.name}_bias")
    rq = requant_c(g, op, xs_, scales, ys_, yz)
    wc = g.const_array(np.ascontiguousarray(b.T), f"{op.name}_weight")
    y = g.define(op, 0, (shape[0], n), "i8")
    g.emit(op, "qfully_connected_i8", "mace_micro_qfc",
           f"{{{shape[0]}, {k}, {n}, {wc}, {bias}, {xz}, {rq}}}", x, None, y)


def h_qavgpool(g, op) -> None:
    x = g.value(op, 0, "i8")
    xs_, xz = q_scalar(g, op, 1, "x_scale"), q_zp(g, op, 2, "x_zero_point")
    ys_, yz = q_scalar(g, op, 3, "y_scale"), q_zp(g, op, 4, "y_zero_point")
    win, cip = _pool_window(g, op, x)
    counts = set()
    for oh in range(win["out_h"]):
        h0 = oh * win["stride_h"] - win["pad_t"]
        for ow in range(win["out_w"]):
            w0 = ow * win["stride_w"] - win["pad_l"]
            if cip:
                nh = _taps(h0, win["k_h"], win["dil_h"], -win["pad_t"], win["in_h"] + win["pad_b"])
                nw = _taps(w0, win["k_w"], win["dil_w"], -win["pad_l"], win["in_w"] + win["pad_r"])
            else:
                nh = _taps(h0, win["k_h"], win["dil_h"], 0, win["in_h"])
                nw = _taps(w0, win["k_w"], win["dil_w"], 0, win["in_w"])
            counts.add(nh * nw)
    if len(counts) != 1 or 0 in counts:
        raise unsupported(op, f"windows of different tap counts {sorted(counts)}")
    # as mace_qavgpool_params_init: real = x_scale / y_scale, then M = real / count
    mult, shift = requant_params((xs_ / ys_) / float(counts.pop()))
    y = g.define(op, 0, (win["batch"], win["in_c"], win["out_h"], win["out_w"]), "i8")
    g.emit(op, "qavg_pool_i8", "mace_micro_qavgpool",
           f"{{{window_c(win)}, {cip}, {xz}, {mult}, {shift}, {yz}}}", x, None, y)


def h_qadd(g, op) -> None:
    a, b = g.value(op, 0, "i8"), g.value(op, 3, "i8")
    sa, za = q_scalar(g, op, 1, "a_scale"), q_zp(g, op, 2, "a_zero_point")
    sb, zb = q_scalar(g, op, 4, "b_scale"), q_zp(g, op, 5, "b_zero_point")
    sy, zy = q_scalar(g, op, 6, "c_scale"), q_zp(g, op, 7, "c_zero_point")
    kind = arg_str(op, "activation", "NOOP") or "NOOP"
    if kind not in ("NOOP", "RELU"):
        raise unsupported(op, f"fused activation {kind} on int8 Add")
    lo = max(-128, zy) if kind == "RELU" else -128
    # mace_qbinary_params_init (kernels/cpu/ref/qlinear_eltwise.h), in double
    s = 2.0 * max(sa, sb)
    am, ash = requant_params(sa / s)
    bm, bsh = requant_params(sb / s)
    ym, ysh = requant_params(s / (float(1 << 20) * sy))
    m16a, m16b, s16 = qadd16_params(sa, sb, sy)
    dims, st_a, st_b = _broadcast4(op, g.shape(a), g.shape(b))
    rank = max(len(g.shape(a)), len(g.shape(b)))
    y = g.define(op, 0, tuple(dims[4 - rank:]), "i8")
    ints = lambda v: "{" + ", ".join(str(int(i)) for i in v) + "}"  # noqa: E731
    g.emit(op, "qadd_i8", "mace_micro_qadd",
           f"{{{ints(dims)}, {ints(st_a)}, {ints(st_b)}, {za}, {zb}, {zy}, {lo}, 127, "
           f"{am}, {ash}, {bm}, {bsh}, {ym}, {ysh}, {m16a}, {m16b}, {s16}}}", a, b, y,
           inplace=g.shape(a) == tuple(dims[4 - rank:]))


# mace op type -> handler. The one list of what mace micro converts.
HANDLERS: dict[str, Callable] = {
    "Conv2D": h_conv2d, "FullyConnected": h_fully_connected, "MatMul": h_matmul,
    "Pooling": h_pooling, "Activation": h_activation, "Softmax": h_softmax,
    "Eltwise": h_eltwise, "BiasAdd": h_bias_add, "Reshape": h_reshape, "Squeeze": h_reshape,
    "ExpandDims": h_reshape, "Identity": h_reshape, "Quantize": h_quantize,
    "Dequantize": h_dequantize, "QLinearConv2D": h_qconv2d, "QLinearMatMul": h_qmatmul,
    "QLinearAveragePool": h_qavgpool, "QLinearAdd": h_qadd,
}
