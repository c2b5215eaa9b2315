"""Reshape/Flatten/Squeeze/Unsqueeze/Identity outputs are views of their input's buffer:
the planner must keep that buffer alive until the last use of every view."""
import numpy as np
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
