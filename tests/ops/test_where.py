"""Where against onnxruntime: three-way broadcasting of every rank, every dtype, constant
branches, a condition computed in the graph, thread splits."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, build, check, data, run_mace

SHAPES = [((), (), ()), ((4,), (), (4,)), ((3, 4), (4,), ()), ((3, 1), (1, 5), (3, 5)),
          ((2, 1, 4), (3, 1), (1, 1, 4)), ((1,), (2, 3, 4, 5), (5,)),
          ((2, 1, 2, 1, 3), (1, 2, 1, 3), (2, 1, 1)), ((5,), (5,), (5,))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_where_broadcast(shapes):
    c = data(shapes[0], np.bool_, 1)
    x = data(shapes[1], np.float32, 2)
    y = data(shapes[2], np.float32, 3)
    check([helper.make_node("Where", ["c", "x", "y"], ["z"])],
          [("c", np.bool_, c.shape), ("x", np.float32, x.shape), ("y", np.float32, y.shape)],
          [("z", np.float32)], {"c": c, "x": x, "y": y})


@pytest.mark.parametrize("dtype", DTYPES + [np.int8], ids=lambda d: np.dtype(d).name)
def test_where_dtypes(dtype):
    c = data((3, 4), np.bool_, 4)
    x, y = data((3, 4), dtype, 5), data((4,), dtype, 6)
    nodes = [helper.make_node("Where", ["c", "x", "y"], ["z"])]
    inputs = [("c", np.bool_, c.shape), ("x", dtype, x.shape), ("y", dtype, y.shape)]
    feeds = {"c": c, "x": x, "y": y}
    if np.dtype(dtype) == np.bool_:  # onnxruntime has no bool Where kernel: NumPy is the oracle
        got = run_mace(build(nodes, inputs, [("z", dtype)]), feeds)[0]
        np.testing.assert_array_equal(got, np.where(c, x, y))
        return
    check(nodes, inputs, [("z", dtype)], feeds)


def test_where_masked_fill_pattern():
    """Less -> Where with a constant fill, as exporters write masked_fill."""
    x = data((2, 3, 17), np.float32, 7)
    fill = np.array(-1e9, np.float32)
    zero = np.array(0.0, np.float32)
    check([helper.make_node("Less", ["x", "zero"], ["m"]),
           helper.make_node("Where", ["m", "fill", "x"], ["z"])],
          [("x", np.float32, x.shape)], [("z", np.float32)], {"x": x},
          [("fill", fill), ("zero", zero)])


def test_where_threads():
    c = data((3, 50, 129), np.bool_, 8)
    x, y = data((50, 129), np.float32, 9), data((3, 1, 129), np.float32, 10)
    check([helper.make_node("Where", ["c", "x", "y"], ["z"])],
          [("c", np.bool_, c.shape), ("x", np.float32, x.shape), ("y", np.float32, y.shape)],
          [("z", np.float32)], {"c": c, "x": x, "y": y}, num_threads=4)
