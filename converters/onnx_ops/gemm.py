"""ONNX Gemm and MatMul -> mace FullyConnected (constant B) or MatMul (+ Eltwise for alpha/C)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _check_float(ctx, node, *names: str) -> None:
    for name in names:
        dt = ctx.dtype(name)
        if dt is not None and np.dtype(dt) != np.float32:
            raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")


def _bias_vector(c: np.ndarray, n: int) -> np.ndarray | None:
    """C as a length-n bias when it only varies (or is constant) along Gemm's N axis."""
    if c.ndim > 2 or (c.ndim == 2 and c.shape[0] != 1) or c.size not in (1, n):
        return None
    return np.broadcast_to(c.reshape(-1).astype(np.float64), (n,))


@register("Gemm")
def gemm(ctx, node):
    a = ctx.attrs(node)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    trans_a, trans_b = int(a.get("transA", 0)), int(a.get("transB", 0))
    xa, xb = ctx.input(node, 0), ctx.input(node, 1)
    xc = ctx.input(node, 2) if ctx.has_input(node, 2) and beta != 0.0 else ""
    _check_float(ctx, node, xa, xb, *([xc] if xc else []))
    out = node.output[0]
    b = ctx.const(xb)
    c = ctx.const(xc) if xc else None
    if not trans_a and b is not None and b.ndim == 2:
        w = b if trans_b else b.T            # FullyConnected wants [N_out, K]
        n = w.shape[0]
        w = (w.astype(np.float64) * alpha).astype(np.float32)
        inputs = [xa, ctx.add_const(np.ascontiguousarray(w), out + "_weight")]
        vec = _bias_vector(c, n) if c is not None else None
        if vec is not None:
            inputs.append(ctx.add_const((vec * beta).astype(np.float32), out + "_bias"))
        if not xc or vec is not None:
            ctx.emit("FullyConnected", inputs, [out], node)
            return
        mm = ctx.unique(out + "_fc")
        ctx.emit("FullyConnected", inputs, [mm], node)
    else:
        mm = ctx.unique(out + "_matmul") if (alpha != 1.0 or xc) else out
        ctx.emit("MatMul", [xa, xb], [mm], node, transpose_a=trans_a, transpose_b=trans_b)
        if alpha != 1.0:
            scaled = ctx.unique(out + "_alpha") if xc else out
            ctx.emit("Eltwise", [mm, ctx.add_const(np.array(alpha, np.float32), out + "_alpha")],
                     [scaled], ctx.unique(out + "_alpha"), type="PROD")
            mm = scaled
        if not xc:
            return
    # mm + beta * C with C of any broadcastable shape.
    if c is not None:
        term = ctx.add_const((c.astype(np.float64) * beta).astype(np.float32), out + "_c")
    elif beta != 1.0:
        term = ctx.unique(out + "_beta_c")
        ctx.emit("Eltwise", [xc, ctx.add_const(np.array(beta, np.float32), out + "_beta")],
                 [term], term, type="PROD")
    else:
        term = xc
    ctx.emit("Eltwise", [mm, term], [out], ctx.unique(out + "_add"), type="ADD")


@register("MatMul")
def matmul(ctx, node):
    xa, xb = ctx.input(node, 0), ctx.input(node, 1)
    _check_float(ctx, node, xa, xb)
    ctx.emit("MatMul", [xa, xb], [node.output[0]], node)
