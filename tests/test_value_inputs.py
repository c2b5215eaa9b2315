"""Tensors that carry shapes at run time: a Reshape whose target shape is a graph input (or
is computed from one) re-infers the net whenever the values change."""
import numpy as np
import pytest
from onnx import TensorProto
from onnx import helper as h

from helpers import assert_close, make_model, rand, run_ort

import mace


def _reshape_model(computed: bool):
    nodes = [h.make_node("Relu", ["x"], ["r"])]
    if computed:  # the shape goes through an op first: that op runs while shapes are inferred
        nodes += [h.make_node("Mul", ["s", "one"], ["s2"]),
                  h.make_node("Reshape", ["r", "s2"], ["y0"])]
        inits = [("one", np.array([1], np.int64))]
    else:
        nodes += [h.make_node("Reshape", ["r", "s"], ["y0"])]
        inits = []
    nodes += [h.make_node("Sigmoid", ["y0"], ["y"])]
    return make_model(nodes, [("x", np.float32, [2, 3, 4]), ("s", TensorProto.INT64, [2])],
                      [("y", np.float32, ["a", "b"])],
                      initializers=inits)


@pytest.mark.parametrize("computed", [False, True])
def test_reshape_with_runtime_shape(computed):
    m = _reshape_model(computed)
    sess = mace.Session(m, num_threads=1)
    x = rand(2, 3, 4)
    for shape in ([4, 6], [24, 1], [-1, 8], [3, -1], [4, 6]):
        s = np.array(shape, np.int64)
        ref = run_ort(m, {"x": x, "s": s})[0]
        got = sess.run({"x": x, "s": s})["y"]
        assert_close(got, ref, what=str(shape))


def test_bad_runtime_shape_is_an_input_error_and_the_session_recovers():
    m = _reshape_model(False)
    sess = mace.Session(m, num_threads=1)
    x = rand(2, 3, 4)
    with pytest.raises(mace.InvalidInputError, match="Reshape"):
        sess.run({"x": x, "s": np.array([5, 5], np.int64)})
    s = np.array([6, 4], np.int64)
    assert_close(sess.run({"x": x, "s": s})["y"], run_ort(m, {"x": x, "s": s})[0])


@pytest.mark.parametrize("op,keepdims", [("ReduceSum", 1), ("ReduceMean", 0), ("ReduceMax", 1)])
def test_reduce_with_runtime_axes(op, keepdims):
    out_shape = ["a", "b", "c"] if keepdims else ["a", "b"]
    m = make_model([h.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)],
                   [("x", np.float32, [2, 3, 4]), ("axes", TensorProto.INT64, [1])],
                   [("y", np.float32, out_shape)], opset=18)
    sess = mace.Session(m, num_threads=1)
    x = rand(2, 3, 4)
    for axes in ([1], [0], [-1], [2], [1]):
        a = np.array(axes, np.int64)
        got = sess.run({"x": x, "axes": a})["y"]
        assert_close(got, run_ort(m, {"x": x, "axes": a})[0], what=f"{op} {axes}")
