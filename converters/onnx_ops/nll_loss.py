"""ONNX NegativeLogLikelihoodLoss -> mace NegativeLogLikelihoodLoss; SoftmaxCrossEntropyLoss ->
mace Softmax (log, over the class axis 1) feeding it."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

REDUCTION = {"none": 0, "sum": 1, "mean": 2}


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _loss_args(ctx, node) -> dict:
    attrs = ctx.attrs(node)
    red = attrs.get("reduction", "mean")
    red = red.decode() if isinstance(red, bytes) else red
    if red not in REDUCTION:
        _fail(node, f"reduction '{red}' is not none, sum or mean")
    args = {"reduction": REDUCTION[red]}
    if "ignore_index" in attrs:
        args["ignore_index"] = int(attrs["ignore_index"])
    return args


def _check_inputs(ctx, node, names) -> None:
    for k, name in enumerate(names):
        dt = ctx.dtype(name)
        want = (np.float32,) if k != 1 else (np.int32, np.int64)
        if dt is not None and np.dtype(dt) not in [np.dtype(w) for w in want]:
            _fail(node, f"input {k} dtype {dt} is not supported "
                        f"({', '.join(np.dtype(w).name for w in want)})")


@register("NegativeLogLikelihoodLoss")
def nll_loss(ctx, node):
    ins = [ctx.input(node, k) for k in range(3) if ctx.has_input(node, k)]
    _check_inputs(ctx, node, ins)
    ctx.emit("NegativeLogLikelihoodLoss", ins, [node.output[0]], node, **_loss_args(ctx, node))


@register("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(ctx, node):
    ins = [ctx.input(node, k) for k in range(3) if ctx.has_input(node, k)]
    _check_inputs(ctx, node, ins)
    shape = ctx.shape(ins[0])
    if shape is not None and len(shape) < 2:
        _fail(node, f"scores must be [N, C, ...], got rank {len(shape)}")
    args = _loss_args(ctx, node)
    want_log = len(node.output) > 1 and bool(node.output[1])
    log_prob = node.output[1] if want_log else ctx.unique(f"{node.output[0]}_log_prob")
    if not want_log:
        if shape is not None and all(d is not None for d in shape):
            ctx.graph.shapes[log_prob] = list(shape)
        ctx.graph.dtypes[log_prob] = np.dtype(np.float32)
    ctx.emit("Softmax", [ins[0]], [log_prob], ctx.unique(f"{node.name or node.output[0]}_log"),
             axis=1, use_log=1, coerce_2d=0)
    ctx.emit("NegativeLogLikelihoodLoss", [log_prob] + ins[1:], [node.output[0]], node, **args)
