"""Element-wise arithmetic ONNX ops -> mace Eltwise (NumPy broadcasting; float16/32/64 and
integers of 8 to 64 bits, signed and unsigned)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

# ONNX op -> mace Eltwise type; variadic ops are chained pairwise.
_BINARY = {"Add": "ADD", "Sub": "SUB", "Mul": "PROD", "Div": "DIV", "Pow": "POW",
           "Min": "MIN", "Max": "MAX", "Sum": "ADD"}
_UNARY = {"Neg": "NEG", "Abs": "ABS", "Sign": "SIGN", "Exp": "EXP", "Log": "LOG",
          "Sqrt": "SQRT", "Reciprocal": "RECIPROCAL", "Floor": "FLOOR", "Ceil": "CEIL",
          "Round": "ROUND", "Erf": "ERF", "Sin": "SIN", "Cos": "COS", "Softplus": "SOFTPLUS",
          "Softsign": "SOFTSIGN", "Mish": "MISH"}
_VARIADIC = {"Min", "Max", "Sum"}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64))
_DTYPES = _FLOATS + tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                                np.uint32, np.int64, np.uint64))
_INT_TYPES = {"ADD", "SUB", "PROD", "DIV", "MIN", "MAX", "POW", "NEG", "ABS", "SIGN"}


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _check_dtype(ctx, node, name: str, mace_type: str) -> None:
    dt = ctx.dtype(name)
    if dt is None:
        return  # unknown at convert time; the runtime checks
    if dt not in _DTYPES:
        _fail(node, f"input dtype {dt} is not supported (float16/32/64, 8- to 64-bit integers)")
    if dt not in _FLOATS and mace_type not in _INT_TYPES:
        _fail(node, f"{mace_type} on {dt} is not supported")


def _same_dtype_operand(ctx, node, name: str, want) -> str:
    """`name` as dtype `want` (Pow's exponent may differ from its base)."""
    dt = ctx.dtype(name)
    if want is None or dt is None or dt == want:
        return name
    c = ctx.const(name)
    if c is not None:
        return ctx.add_const(c.astype(want), name + "_as_" + np.dtype(want).name)
    out = ctx.unique(name + "_as_" + np.dtype(want).name)
    from .cast import MACE_DTYPE  # one table of dtype numbers
    if np.dtype(want) not in MACE_DTYPE or np.dtype(dt) not in MACE_DTYPE:
        _fail(node, f"operand dtype {dt} cannot be converted to {want}")
    ctx.emit("Cast", [name], [out], ctx.unique(node.name + "_cast"),
             to=MACE_DTYPE[np.dtype(want)])
    return out


def emit_eltwise(ctx, inputs, output: str, node_or_name, mace_type: str, **args):
    """Emits an Eltwise op. Its "type" argument is set after emit(), whose first
    parameter is also called `type`."""
    op = ctx.emit("Eltwise", inputs, [output], node_or_name, **args)
    op.args = {"type": mace_type, **op.args}
    return op


@register(*_BINARY)
def binary(ctx, node):
    mace_type = _BINARY[node.op_type]
    ins = [ctx.input(node, i) for i in range(len(node.input)) if ctx.has_input(node, i)]
    if not ins:
        _fail(node, "no inputs")
    if len(ins) != 2 and node.op_type not in _VARIADIC:
        _fail(node, f"{len(ins)} inputs, expects 2")
    _check_dtype(ctx, node, ins[0], mace_type)
    out = node.output[0]
    if len(ins) == 1:
        ctx.forward(ins[0], out, node)
        return
    if node.op_type == "Pow":
        base_t, exp_t = ctx.dtype(ins[0]), ctx.dtype(ins[1])
        if (base_t is not None and exp_t is not None and base_t.kind in "iu"
                and exp_t.kind == "f"):
            c = ctx.const(ins[1])
            if c is None or not np.all(np.round(c) == c):
                # as NumPy (ONNX's reference) computes it: in float64, truncated to the base type
                from .cast import MACE_DTYPE
                f64 = np.dtype(np.float64)
                base = _same_dtype_operand(ctx, node, ins[0], f64)
                expo = _same_dtype_operand(ctx, node, ins[1], f64)
                p = ctx.unique(f"{out}_f64")
                ctx.graph.dtypes[p] = f64
                emit_eltwise(ctx, [base, expo], p, ctx.unique(f"{node.name or out}_f64"), "POW")
                ctx.emit("Cast", [p], [out], node, to=MACE_DTYPE[np.dtype(base_t)])
                return
        ins[1] = _same_dtype_operand(ctx, node, ins[1], base_t)
    acc = ins[0]
    for k, other in enumerate(ins[1:]):
        last = k == len(ins) - 2
        dst = out if last else ctx.unique(f"{out}_part{k}")
        emit_eltwise(ctx, [acc, other], dst,
                 node if last else ctx.unique(f"{node.name or out}_part{k}"), mace_type)
        acc = dst


@register(*_UNARY)
def unary(ctx, node):
    mace_type = _UNARY[node.op_type]
    x = ctx.input(node, 0)
    _check_dtype(ctx, node, x, mace_type)
    emit_eltwise(ctx, [x], node.output[0], node, mace_type)


@register("Gelu")
def gelu(ctx, node):
    approx = ctx.attrs(node).get("approximate", "none")
    if approx not in ("none", "tanh"):
        _fail(node, f"approximate='{approx}' is not supported")
    x = ctx.input(node, 0)
    _check_dtype(ctx, node, x, "GELU")
    if approx == "none" and ctx.dtype(x) in (None, np.float32):  # SIMD, fuses into the producer
        ctx.emit("Activation", [x], [node.output[0]], node, activation="GELU")
    else:
        emit_eltwise(ctx, [x], node.output[0], node, "GELU_TANH" if approx == "tanh" else "GELU")


@register("Mean")
def mean(ctx, node):
    """Variadic mean: a chain of ADDs, then PROD by the constant 1/n."""
    ins = [ctx.input(node, i) for i in range(len(node.input)) if ctx.has_input(node, i)]
    if not ins:
        _fail(node, "no inputs")
    _check_dtype(ctx, node, ins[0], "DIV")
    out = node.output[0]
    if len(ins) == 1:
        ctx.forward(ins[0], out, node)
        return
    acc = ins[0]
    for k, other in enumerate(ins[1:]):
        dst = ctx.unique(f"{out}_sum{k}")
        emit_eltwise(ctx, [acc, other], dst, ctx.unique(f"{node.name or out}_sum{k}"), "ADD")
        acc = dst
    dt = ctx.dtype(ins[0]) or np.dtype(np.float32)
    if dt != np.float32:
        _fail(node, f"input dtype {dt} is not supported (float32)")
    inv = ctx.add_const(np.asarray(1.0 / len(ins), np.float32), f"{out}_inv_n")
    emit_eltwise(ctx, [acc, inv], out, node, "PROD")
