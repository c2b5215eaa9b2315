"""ONNX LSTM, GRU and RNN -> mace LSTM / GRU / RNN (csrc/ops/recurrent_op.c documents the args)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

# ONNX activation name -> (mace_rnn_act_type, default alpha or None if unused, default beta or None)
_ACTS = {
    "sigmoid": (0, None, None),
    "tanh": (1, None, None),
    "relu": (2, None, None),
    "softsign": (3, None, None),
    "softplus": (4, None, None),
    "affine": (5, 1.0, 0.0),
    "leakyrelu": (6, 0.01, None),
    "thresholdedrelu": (7, 1.0, None),
    "scaledtanh": (8, 1.0, 1.0),
    "hardsigmoid": (9, 0.2, 0.5),
    "elu": (10, 1.0, None),
}
_DEFAULTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _fail(node, why: str) -> UnsupportedError:
    return UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _activations(node, a: dict, num_dir: int):
    n = len(_DEFAULTS[node.op_type])
    names = a.get("activations")
    if names is None:
        names = _DEFAULTS[node.op_type] * num_dir
    names = [x.decode() if isinstance(x, bytes) else str(x) for x in names]
    if len(names) == n and num_dir == 2:
        names = names * 2
    if len(names) != n * num_dir:
        raise _fail(node, f"{len(names)} activations, expected {n * num_dir}")
    alphas = list(a.get("activation_alpha", []) or [])
    betas = list(a.get("activation_beta", []) or [])
    types, al, be = [], [], []
    for name in names:
        key = name.lower()
        if key not in _ACTS:
            raise _fail(node, f"activation '{name}' is not supported")
        t, da, db = _ACTS[key]
        types.append(t)
        al.append(float(alphas.pop(0)) if da is not None and alphas else float(da or 0.0))
        be.append(float(betas.pop(0)) if db is not None and betas else float(db or 0.0))
    return types, al, be


@register("LSTM", "GRU", "RNN")
def recurrent(ctx, node):
    a = ctx.attrs(node)
    op = node.op_type
    x = ctx.input(node, 0)
    for i in range(len(node.input)):
        if i == 4 or not ctx.has_input(node, i):
            continue
        dt = ctx.dtype(ctx.input(node, i))
        if dt is not None and np.dtype(dt) != np.float32:
            raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
    direction = a.get("direction", "forward")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    dirs = {"forward": 0, "reverse": 1, "bidirectional": 2}
    if direction not in dirs:
        raise _fail(node, f"direction '{direction}' is not supported")
    num_dir = 2 if direction == "bidirectional" else 1
    hidden = a.get("hidden_size")
    if hidden is None:
        wshape = ctx.shape(ctx.input(node, 2))
        if not wshape or wshape[-1] is None:
            raise _fail(node, "hidden_size is not given and R's shape is unknown")
        hidden = wshape[-1]
    types, alphas, betas = _activations(node, a, num_dir)
    inputs = [x, ctx.input(node, 1), ctx.input(node, 2)]
    flags = {}
    for idx, flag in ((3, "has_bias"), (4, "has_sequence_lens"), (5, "has_initial_h"),
                      (6, "has_initial_c"), (7, "has_peepholes")):
        if op != "LSTM" and idx >= 6:
            continue
        if ctx.has_input(node, idx):
            inputs.append(ctx.input(node, idx))
            flags[flag] = 1
    args = dict(hidden_size=int(hidden), direction=dirs[direction],
                layout=int(a.get("layout", 0)), clip=float(a.get("clip", 0.0) or 0.0),
                activations=types, activation_alpha=alphas, activation_beta=betas, **flags)
    if args["clip"] < 0:
        raise _fail(node, "negative clip")
    if op == "GRU":
        args["linear_before_reset"] = int(a.get("linear_before_reset", 0))
    if op == "LSTM":
        args["input_forget"] = int(a.get("input_forget", 0))
    outs = list(node.output)
    while outs and not outs[-1]:
        outs.pop()
    if not outs:
        return
    outs = [o if o else ctx.unique(f"{node.name or op}_unused_{i}") for i, o in enumerate(outs)]
    ctx.emit(op, inputs, outs, node, **args)
