"""Reshape/Flatten/Squeeze/Unsqueeze/Identity outputs are views of their input's buffer:
the planner must keep that buffer alive until the last use of every view."""
import numpy as np
import pytest
from onnx import helper as h

from helpers import check_model, make_model, rand

import mace


def test_view_used_long_after_its_root_is_otherwise_dead():
    # a = relu(x); v = view chain of a, used only by the last op; in between, several
    # buffers of a's size are produced and die, so the planner would reuse a's memory if
    # it did not extend a's lifetime to v's last use.
    shape = [2, 3, 4, 5]
    nodes = [h.make_node("Relu", ["x"], ["a"]),
             h.make_node("Flatten", ["a"], ["v1"], axis=1),
             h.make_node("Unsqueeze", ["v1", "ax"], ["v2"]),
             h.make_node("Squeeze", ["v2", "ax"], ["v3"]),
             h.make_node("Identity", ["v3"], ["v4"]),
             h.make_node("Reshape", ["v4", "shp"], ["v"]),
             h.make_node("Neg", ["x"], ["b"]),
             h.make_node("Sigmoid", ["b"], ["c"]),
             h.make_node("Tanh", ["c"], ["d"]),
             h.make_node("Exp", ["d"], ["e"]),
             h.make_node("Add", ["e", "v"], ["y"])]
    m = make_model(nodes, [("x", np.float32, shape)], [("y", np.float32, shape)],
                   initializers=[("ax", np.array([0], np.int64)),
                                 ("shp", np.array(shape, np.int64))])
    check_model(m, {"x": rand(*shape)})


def test_views_take_no_arena_memory():
    shape = [1, 64, 8, 8]
    nodes = [h.make_node("Relu", ["x"], ["a"]),
             h.make_node("Flatten", ["a"], ["f"], axis=1),
             h.make_node("Reshape", ["f", "shp"], ["r"]),
             h.make_node("Relu", ["r"], ["y"])]
    m = make_model(nodes, [("x", np.float32, shape)], [("y", np.float32, shape)],
                   initializers=[("shp", np.array(shape, np.int64))])
    sess = mace.Session(m, num_threads=1)
    x = rand(*shape)
    np.testing.assert_array_equal(sess.run(x), np.maximum(x, 0))
    nbytes = 4 * int(np.prod(shape))
    # x, a (+ its two views) and y: three real buffers, no copies for the views
    assert sess.memory_stats()["naive_bytes"] == 3 * nbytes


def _outputs_model():
    """Outputs of every kind: `a` an op's output read by later ops, `v` a view of it, `c` a
    Concat whose inputs are written in place into its buffer (`p` one of them, an output
    too), `x2` the input itself, `s` a plain op output read by nothing."""
    shape = [1, 8, 5, 6]
    nodes = [h.make_node("Relu", ["x"], ["a"]),
             h.make_node("Reshape", ["a", "shp"], ["v"]),
             h.make_node("Sigmoid", ["a"], ["p"]),
             h.make_node("Tanh", ["x"], ["q"]),
             h.make_node("Concat", ["p", "q"], ["c"], axis=1),
             h.make_node("Identity", ["x"], ["x2"]),
             h.make_node("Mul", ["a", "x"], ["s"])]
    outs = [("a", np.float32, shape), ("v", np.float32, [8, 30]),
            ("c", np.float32, [1, 16, 5, 6]), ("p", np.float32, shape),
            ("x2", np.float32, shape), ("s", np.float32, shape)]
    return make_model(nodes, [("x", np.float32, shape)], outs,
                      initializers=[("shp", np.array([8, 30], np.int64))]), shape


@pytest.mark.parametrize("threads", [1, 2])
def test_outputs_written_in_place_match_and_stay_the_callers(threads):
    """Outputs that an op writes and that nothing aliases are written straight into the
    arrays run returns (api/engine.c: bind_outputs); views, Concat slices and the input
    itself are copied. Every kind agrees with onnxruntime, and each run's arrays are new: a
    second run leaves the first one's results as they were."""
    m, shape = _outputs_model()
    check_model(m, {"x": rand(*shape)}, num_threads=threads)
    sess = mace.Session(m, num_threads=threads)
    x1, x2 = rand(*shape, seed=1), rand(*shape, seed=2)
    first = sess.run({"x": x1})
    kept = {k: np.array(v, copy=True) for k, v in first.items()}
    second = sess.run({"x": x2})
    for k in first:
        np.testing.assert_array_equal(first[k], kept[k], err_msg=k)
        assert not np.shares_memory(first[k], second[k]), k
    np.testing.assert_array_equal(second["s"], np.maximum(x2, 0) * x2)
    np.testing.assert_array_equal(second["x2"], x2)
