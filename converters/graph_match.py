"""Graph matching helpers shared by the rewrites (transforms.py, transformer_fusions.py):
single-consumer lookups, constants of one value, trailing-dims means, normalization params."""
from __future__ import annotations

import numpy as np

from . import ir


def new_const(graph: ir.Graph, base: str, value: np.ndarray) -> str:
    name, k = base, 0
    taken = set(graph.consts) | {t for op in graph.ops for t in op.inputs + op.outputs}
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    graph.consts[name] = np.ascontiguousarray(value)
    return name


class Matcher:
    """Producer -> single-consumer pairs, recomputed after every rewrite."""

    def __init__(self, graph: ir.Graph):
        self.graph = graph
        self.consumers = graph.consumers()
        self.outputs = {t.name for t in graph.outputs}

    def sole_consumer(self, op: ir.Op) -> ir.Op | None:
        """The only consumer of op's single output, unless that output is a graph output."""
        if len(op.outputs) != 1:
            return None
        t = op.outputs[0]
        if t in self.outputs:
            return None
        users = self.consumers.get(t, [])
        if len(users) != 1:
            return None
        return users[0]


def float_const(graph: ir.Graph, name: str) -> np.ndarray | None:
    c = graph.consts.get(name)
    if c is None or c.dtype.kind != "f":
        return None
    return c


def scalar_const(graph: ir.Graph, name: str, value: float, rtol: float = 0.0) -> bool:
    """name is a constant f32 of one element within rtol of value."""
    c = float_const(graph, name)
    return (c is not None and c.size == 1
            and abs(float(c.reshape(-1)[0]) - value) <= rtol * abs(value))


def eltwise_with_const(graph: ir.Graph, op: ir.Op | None, kind: str, value: float,
                        rtol: float = 0.0, commutes: bool = True) -> str | None:
    """The variable input of an argument-free Eltwise `kind`(x, constant value) (or (value, x)
    where the op commutes), else None."""
    if (op is None or op.type != "Eltwise" or op.args != {"type": kind}
            or len(op.inputs) != 2):
        return None
    x, c = op.inputs
    if scalar_const(graph, c, value, rtol) and x not in graph.consts:
        return x
    if commutes and scalar_const(graph, x, value, rtol) and c not in graph.consts:
        return c
    return None


def trailing_mean_axes(graph: ir.Graph, op: ir.Op | None) -> int | None:
    """For a Reduce MEAN with keepdims over the trailing dims of its f32 input, how many dims
    (k; axes [rank - k, rank) in any spelling), else None."""
    if (op is None or op.type != "Reduce" or op.args.get("reduce_type") != "MEAN"
            or op.args.get("keepdims", 1) != 1 or len(op.inputs) != 1
            or not set(op.args) <= {"reduce_type", "keepdims", "axis"}
            or graph.dtypes.get(op.inputs[0]) != np.float32):
        return None
    shape = graph.shapes.get(op.inputs[0])
    axes = op.args.get("axis")
    if shape is None or not axes or not isinstance(axes, (list, tuple)):
        return None
    r = len(shape)
    if not all(-r <= int(a) < r for a in axes):
        return None
    norm = sorted({int(a) % r for a in axes})
    return len(norm) if norm == list(range(r - len(norm), r)) else None


def norm_param(graph: ir.Graph, name: str, norm_shape: list) -> np.ndarray | None:
    """A constant that broadcasts over the normalized (trailing) dims only, flattened to their
    element count (or one element), else None."""
    c = float_const(graph, name)
    if c is None:
        return None
    if c.size == 1:
        return c.reshape(1).astype(np.float32)
    lead = c.shape[:max(0, c.ndim - len(norm_shape))]
    if any(d != 1 for d in lead):
        return None
    try:
        full = np.broadcast_to(c.reshape(c.shape[len(lead):]), norm_shape)
    except ValueError:
        return None
    return np.ascontiguousarray(full, np.float32).reshape(-1)


def norm_step(graph: ir.Graph, op: ir.Op | None, src: str, kind: str,
               norm_shape: list) -> np.ndarray | None:
    """For an argument-free two-input Eltwise `kind` of src and a constant over the normalized
    dims, that constant (flattened, norm_param), else None."""
    if (op is None or op.type != "Eltwise" or op.args != {"type": kind} or len(op.inputs) != 2
            or src not in op.inputs):
        return None
    return norm_param(graph, op.inputs[1] if op.inputs[0] == src else op.inputs[0], norm_shape)
