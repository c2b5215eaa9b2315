"""Activation: ONNX Relu/LeakyRelu/PRelu/Sigmoid/Tanh/HardSigmoid/HardSwish/Elu/Clip
against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

SHAPES = [(), (1,), (7,), (2, 3, 4, 5), (1, 1, 1, 1), (2, 3, 1, 1), (3, 129, 65)]

# (ONNX op, attributes, min opset)
ACTIVATIONS = [
    ("Relu", {}, 6),
    ("LeakyRelu", {}, 6),
    ("LeakyRelu", {"alpha": 0.3}, 6),
    ("LeakyRelu", {"alpha": -1.5}, 6),
    ("Sigmoid", {}, 6),
    ("Tanh", {}, 6),
    ("HardSigmoid", {}, 6),
    ("HardSigmoid", {"alpha": 0.5, "beta": 0.1}, 6),
    ("HardSwish", {}, 14),
    ("Elu", {}, 6),
    ("Elu", {"alpha": 0.4}, 6),
]


def _unary_model(op, attrs, shape, opset=14):
    return make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                      [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                      opset=opset)


@pytest.mark.parametrize("op,attrs,opset", ACTIVATIONS,
                         ids=[f"{a[0]}{a[1] or ''}" for a in ACTIVATIONS])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_activation(op, attrs, opset, shape):
    x = np.asarray(np.asarray(rand(*shape, seed=len(shape))) * 6, np.float32)
    check_model(_unary_model(op, attrs, shape, max(opset, 13)), {"x": x})


def test_sigmoid_tanh_extremes():
    x = np.asarray([-1e4, -100, -88.8, -20, -1e-6, 0, 1e-6, 20, 88.8, 100, 1e4], np.float32)
    for op in ("Sigmoid", "Tanh", "Elu", "HardSwish"):
        check_model(_unary_model(op, {}, x.shape), {"x": x})


# PRelu slope shapes for X [2,3,4,5]: per-channel, scalar-like, per-last-dim, full, ...
PRELU_SLOPES = [(3, 1, 1), (1, 3, 1, 1), (1,), (), (5,), (4, 5), (2, 3, 4, 5), (1, 1, 4, 1)]


@pytest.mark.parametrize("slope_shape", PRELU_SLOPES, ids=str)
@pytest.mark.parametrize("const", [True, False])
def test_prelu(slope_shape, const):
    xs = (2, 3, 4, 5)
    slope = np.asarray(rand(*slope_shape, seed=9), np.float32).reshape(slope_shape)
    if const:
        m = make_model([helper.make_node("PRelu", ["x", "s"], ["y"])],
                       [("x", np.float32, list(xs))], [("y", np.float32, list(xs))],
                       initializers=[("s", slope)], opset=9)
        check_model(m, {"x": rand(*xs)})
    else:
        m = make_model([helper.make_node("PRelu", ["x", "s"], ["y"])],
                       [("x", np.float32, list(xs)), ("s", np.float32, list(slope_shape))],
                       [("y", np.float32, list(xs))], opset=13)
        check_model(m, {"x": rand(*xs), "s": slope})


CLIP_BOUNDS = [(0.0, 6.0), (0.0, None), (-1.0, 1.0), (None, 0.5), (-0.5, None), (None, None),
               (0.5, -0.5), (0.0, 0.25), (0.0, 0.0)]


@pytest.mark.parametrize("lo,hi", [b for b in CLIP_BOUNDS if b != (0.5, -0.5)], ids=str)
@pytest.mark.parametrize("opset", [7, 10])
def test_clip_attributes(lo, hi, opset):
    """Clip-6 (opsets 6..10): bounds are attributes (ORT rejects min > max there)."""
    attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    shape = (2, 3, 4, 5)
    check_model(_unary_model("Clip", attrs, shape, opset=opset),
                {"x": np.asarray(np.asarray(rand(*shape)) * 8, np.float32)})


@pytest.mark.parametrize("lo,hi", CLIP_BOUNDS, ids=str)
@pytest.mark.parametrize("opset", [11, 13])
def test_clip_inputs(lo, hi, opset):
    shape = (2, 3, 4, 5)
    inits, names = [], ["x"]
    for n, v in (("lo", lo), ("hi", hi)):
        if v is None:
            names.append("")
        else:
            names.append(n)
            inits.append((n, np.asarray(v, np.float32)))
    while names[-1] == "":
        names.pop()
    m = make_model([helper.make_node("Clip", names, ["y"])], [("x", np.float32, list(shape))],
                   [("y", np.float32, list(shape))], initializers=inits, opset=opset)
    check_model(m, {"x": np.asarray(np.asarray(rand(*shape)) * 8, np.float32)})


def test_clip_runtime_bounds():
    """min/max computed in the graph (not constants) -> Eltwise MAX/MIN on tensors."""
    shape = (2, 3, 4)
    m = make_model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                   [("x", np.float32, list(shape)), ("lo", np.float32, []),
                    ("hi", np.float32, [])], [("y", np.float32, list(shape))], opset=13)
    check_model(m, {"x": rand(*shape), "lo": np.asarray(-0.3, np.float32),
                    "hi": np.asarray(0.6, np.float32)})


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_clip_int(dtype):
    shape = (3, 4, 5)
    m = make_model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                   [("x", dtype, list(shape))], [("y", dtype, list(shape))],
                   initializers=[("lo", np.asarray(-7, dtype)), ("hi", np.asarray(9, dtype))],
                   opset=13)
    x = np.random.default_rng(0).integers(-20, 20, size=shape).astype(dtype)
    check_model(m, {"x": x})


def test_activation_after_intermediate():
    """Activations whose input is another op's output (dtype known only at infer)."""
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["r"]),
             helper.make_node("Clip", ["r", "", "six"], ["c"]),
             helper.make_node("Sigmoid", ["c"], ["y"])]
    m = make_model(nodes, [("a", np.float32, [2, 3, 4]), ("b", np.float32, [3, 4])],
                   [("y", np.float32, [2, 3, 4])],
                   initializers=[("six", np.asarray(6.0, np.float32))])
    check_model(m, {"a": rand(2, 3, 4) * 10, "b": rand(3, 4, seed=1) * 10})
