"""Softmax: ONNX Softmax / LogSoftmax (opset < 13 coerced to 2-D, >= 13 along axis)
against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

SHAPES = [(7,), (1, 1), (3, 10), (2, 3, 4, 5), (1, 1000), (2, 1, 3), (4, 33, 129)]


def _cases():
    for shape in SHAPES:
        for axis in range(-len(shape), len(shape)):
            yield shape, axis


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("shape,axis", list(_cases()), ids=str)
def test_softmax(op, opset, shape, axis):
    m = make_model([helper.make_node(op, ["x"], ["y"], axis=axis)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                   opset=opset)
    check_model(m, {"x": np.asarray(rand(*shape, seed=axis + 5)) * 8})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset", [7, 11, 13])
def test_default_axis(op, opset):
    shape = (2, 3, 4)
    m = make_model([helper.make_node(op, ["x"], ["y"])], [("x", np.float32, list(shape))],
                   [("y", np.float32, list(shape))], opset=opset)
    check_model(m, {"x": rand(*shape)})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_large_values(op):
    x = np.asarray([[1e4, 1e4 - 1, -1e4, 0], [80, 90, 100, -100], [0, 0, 0, 0]], np.float32)
    m = make_model([helper.make_node(op, ["x"], ["y"], axis=1)], [("x", np.float32, [3, 4])],
                   [("y", np.float32, [3, 4])], opset=13)
    check_model(m, {"x": x})


def test_after_intermediate():
    m = make_model([helper.make_node("Mul", ["x", "x"], ["s"]),
                    helper.make_node("Softmax", ["s"], ["y"], axis=1)],
                   [("x", np.float32, [2, 5, 3])], [("y", np.float32, [2, 5, 3])], opset=13)
    check_model(m, {"x": rand(2, 5, 3)})


@pytest.mark.parametrize("threads", [1, 3, 4])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_threads(threads, axis):
    shape = (40, 50, 60)
    m = make_model([helper.make_node("Softmax", ["x"], ["y"], axis=axis)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))], opset=13)
    check_model(m, {"x": rand(*shape, seed=5)}, num_threads=threads)
