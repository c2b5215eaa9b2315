"""LocalResponseNorm: ONNX LRN (odd and even sizes, windows wider than C, alpha/beta/bias)
against onnxruntime; onnxruntime's LRN takes only 4-D inputs and odd sizes, so the other
cases compare with onnxruntime running the spec's formula built from Mul/Conv/Pow/Div (the
window sum of squares as a convolution with ones along C)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import assert_close, check_model, make_model, rand, run_mace, run_ort  # noqa: E501

SHAPES = [(1, 1, 1, 1), (2, 5, 3, 4), (1, 7, 1, 1), (1, 3, 6), (2, 8, 5, 5, 2), (1, 16, 9, 11)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 11])
def test_lrn(shape, size):
    m = make_model([helper.make_node("LRN", ["x"], ["y"], size=size)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))])
    feeds = {"x": rand(*shape, seed=size) * 3}
    if len(shape) == 4 and size % 2 == 1:
        check_model(m, feeds)
    else:
        assert_close(run_mace(m, feeds)[0], run_ort(_formula(shape, size), feeds)[0])


def _formula(shape, size, alpha=1e-4, beta=0.75, bias=1.0):
    n, c = shape[0], shape[1]
    hw = int(np.prod(shape[2:]))
    lo, hi = (size - 1) // 2, size // 2
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"]),
        helper.make_node("Reshape", ["sq", "s4"], ["sq4"]),
        helper.make_node("Conv", ["sq4", "w"], ["win4"], pads=[lo, 0, hi, 0]),
        helper.make_node("Reshape", ["win4", "sx"], ["win"]),
        helper.make_node("Mul", ["win", "a"], ["aw"]),
        helper.make_node("Add", ["aw", "b"], ["base"]),
        helper.make_node("Pow", ["base", "e"], ["den"]),
        helper.make_node("Div", ["x", "den"], ["y"]),
    ]
    inits = [("s4", np.array([n, 1, c, hw], np.int64)), ("sx", np.array(shape, np.int64)),
             ("w", np.ones((1, 1, size, 1), np.float32)),
             ("a", np.array(alpha / size, np.float32)), ("b", np.array(bias, np.float32)),
             ("e", np.array(beta, np.float32))]
    return make_model(nodes, [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                      initializers=inits)


@pytest.mark.parametrize("alpha,beta,bias", [(1e-4, 0.75, 1.0), (0.5, 1.0, 2.0),
                                             (2.0, 0.5, 1.5), (1e-3, 0.25, 0.5)])
def test_lrn_params(alpha, beta, bias):
    shape = (2, 6, 4, 3)
    m = make_model([helper.make_node("LRN", ["x"], ["y"], size=3, alpha=alpha, beta=beta,
                                     bias=bias)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))])
    check_model(m, {"x": rand(*shape, seed=3) * 4})


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    shape = (2, 32, 20, 20)
    m = make_model([helper.make_node("LRN", ["x"], ["y"], size=5, alpha=0.01)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))])
    check_model(m, {"x": rand(*shape, seed=3)}, num_threads=threads)
