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


def _run_both(nodes, inputs, out_shape, feeds_list, opset=18):
    m = make_model(nodes, inputs, [("y", np.float32, out_shape)], opset=opset)
    sess = mace.Session(m, num_threads=1)
    for feeds in feeds_list:
        assert_close(sess.run(feeds)["y"], run_ort(m, feeds)[0], what=str(feeds.keys()))


def test_slice_pad_resize_split_unsqueeze_with_runtime_values():
    x = rand(2, 3, 6, 8)
    i64 = TensorProto.INT64
    X = ("x", np.float32, [2, 3, 6, 8])
    sym4 = ["a", "b", "c", "d"]
    # Slice with run-time starts/ends
    _run_both([h.make_node("Slice", ["x", "s", "e", "ax"], ["y"])],
              [X, ("s", i64, [2]), ("e", i64, [2]), ("ax", i64, [2])], sym4,
              [{"x": x, "s": np.array(s, np.int64), "e": np.array(e, np.int64),
                "ax": np.array(a, np.int64)}
               for s, e, a in [([0, 1], [2, 5], [2, 3]), ([1, -3], [3, 100], [1, 3])]])
    # Pad with run-time pads
    _run_both([h.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], [X, ("p", i64, [8])], sym4,
              [{"x": x, "p": np.array(p, np.int64)}
               for p in ([0, 0, 1, 2, 0, 0, 2, 1], [0, 1, 0, 0, 0, 0, 3, 3])])
    # Resize with run-time sizes, and with run-time scales
    _run_both([h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear")],
              [X, ("sz", i64, [4])], sym4,
              [{"x": x, "sz": np.array(s, np.int64)} for s in ([2, 3, 12, 16], [2, 3, 3, 5])])
    _run_both([h.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest")],
              [X, ("sc", np.float32, [4])], sym4,
              [{"x": x, "sc": np.array(s, np.float32)} for s in ([1, 1, 2, 2], [1, 1, 0.5, 1.5])])
    # Split with run-time sizes (then Concat back in reverse order so there is one output)
    _run_both([h.make_node("Split", ["x", "sp"], ["a", "b"], axis=3),
               h.make_node("Concat", ["b", "a"], ["y"], axis=3)],
              [X, ("sp", i64, [2])], sym4,
              [{"x": x, "sp": np.array(s, np.int64)} for s in ([3, 5], [6, 2])])
    # Unsqueeze with run-time axes, then Squeeze with the same axes
    _run_both([h.make_node("Unsqueeze", ["x", "u"], ["t"]),
               h.make_node("Squeeze", ["t", "u"], ["y"])],
              [X, ("u", i64, [1])], sym4,
              [{"x": x, "u": np.array(u, np.int64)} for u in ([0], [-1], [2])])
