"""ArgMax: ONNX ArgMax / ArgMin (axis, keepdims, select_last_index) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from helpers import check_model, make_model, rand

SHAPES = [(7,), (1, 1), (3, 10), (2, 3, 4, 5), (1, 3, 1, 5), (4, 33, 129)]


def _cases():
    for shape in SHAPES:
        for axis in range(-len(shape), len(shape)):
            yield shape, axis


def _model(op, shape, axis, keepdims, last, dtype=np.float32, opset=13):
    attrs = {"axis": axis, "keepdims": keepdims}
    if last is not None:
        attrs["select_last_index"] = last
    out = list(shape)
    if keepdims:
        out[axis] = 1
    else:
        del out[axis]
    return make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                      [("x", dtype, list(shape))], [("y", TensorProto.INT64, out)],
                      opset=opset)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("shape,axis", list(_cases()), ids=str)
def test_argmax(op, keepdims, shape, axis):
    check_model(_model(op, shape, axis, keepdims, None), {"x": rand(*shape, seed=axis + 10)})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_ties(op, last, axis):
    """Few distinct values, so ties decide: first or last index."""
    shape = (4, 6, 5)
    x = np.random.default_rng(axis + 7).integers(0, 3, size=shape).astype(np.float32)
    check_model(_model(op, shape, axis, 1, last), {"x": x})


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_int_input(dtype, op):
    shape = (3, 4, 5)
    x = np.random.default_rng(2).integers(-1000, 1000, size=shape).astype(dtype)
    check_model(_model(op, shape, 1, 0, None, dtype), {"x": x})


@pytest.mark.parametrize("opset", [11, 12, 13])
def test_opsets(opset):
    shape = (2, 3, 4)
    check_model(_model("ArgMax", shape, 2, 1, None, opset=opset), {"x": rand(*shape)})
