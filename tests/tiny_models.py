"""Tiny mace models for the Session/error tests, built directly as mace IR graphs (so they
do not depend on which ONNX handlers exist) and as ONNX models for end-to-end checks."""
from __future__ import annotations

import numpy as np

from mace.converters import ir
from mace.converters.model import MaceModel

SHAPE = [2, 3, 4, 5]
W = (np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5) / 10.0 - 2.0)


def _graph(ops, inputs, outputs, consts=None, shapes=None, dtype=np.float32) -> MaceModel:
    g = ir.Graph(name="tiny")
    g.ops = ops
    g.consts = dict(consts or {})
    g.inputs = [ir.TensorInfo(n, list(s), np.dtype(dtype)) for n, s in inputs]
    g.outputs = [ir.TensorInfo(n, list(s), np.dtype(dtype)) for n, s in outputs]
    g.shapes = dict(shapes or {})
    for n, s in inputs + outputs:
        g.shapes[n] = list(s)
    g.dtypes = {t: np.dtype(dtype) for op in ops for t in op.outputs}
    return MaceModel(g)


def relu_model() -> MaceModel:
    """x[2,3,4,5] -> Relu -> y."""
    return _graph([ir.Op("Activation", "relu", ["x"], ["y"], {"activation": "RELU"})],
                  [("x", SHAPE)], [("y", SHAPE)])


def relu_ref(x):
    return np.maximum(x, 0)


def two_output_model() -> MaceModel:
    """x -> (y = x + W, z = relu(x)); W is a constant (weights blob)."""
    return _graph([ir.Op("Eltwise", "add", ["x", "w"], ["y"], {"type": "ADD"}),
                   ir.Op("Activation", "relu", ["x"], ["z"], {"activation": "RELU"})],
                  [("x", SHAPE)], [("y", SHAPE), ("z", SHAPE)], {"w": W})


def two_output_ref(x):
    return x + W, np.maximum(x, 0)


def chain_model() -> MaceModel:
    """x -> t = x + W -> u = relu(t) -> y = u * W: intermediates and two constants' uses."""
    return _graph([ir.Op("Eltwise", "add", ["x", "w"], ["t"], {"type": "ADD"}),
                   ir.Op("Activation", "relu", ["t"], ["u"], {"activation": "RELU"}),
                   ir.Op("Eltwise", "mul", ["u", "w"], ["y"], {"type": "PROD"})],
                  [("x", SHAPE)], [("y", SHAPE)], {"w": W},
                  {"t": SHAPE, "u": SHAPE})


def chain_ref(x):
    return np.maximum(x + W, 0) * W


def two_input_model() -> MaceModel:
    """a[2,3,4,5] + b[2,3,4,5] -> y."""
    return _graph([ir.Op("Eltwise", "add", ["a", "b"], ["y"], {"type": "ADD"})],
                  [("a", SHAPE), ("b", SHAPE)], [("y", SHAPE)])


def int64_model() -> MaceModel:
    """i[2,3] (int64) - K (int64 constant) -> y (int64)."""
    return _graph([ir.Op("Eltwise", "sub", ["i", "k"], ["y"], {"type": "SUB"})],
                  [("i", [2, 3])], [("y", [2, 3])], {"k": np.array([1, 2, 3], np.int64)},
                  dtype=np.int64)


def onnx_add_relu():
    """ONNX: y = Relu(x + W) with W an initializer (opset 13)."""
    from onnx import helper
    from helpers import make_model
    nodes = [helper.make_node("Add", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    return make_model(nodes, [("x", np.float32, SHAPE)], [("y", np.float32, SHAPE)],
                      initializers=[("w", W)])


def rand_x(seed=0, shape=SHAPE, dtype=np.float32):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(dtype)
