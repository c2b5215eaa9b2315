"""Compress against onnxruntime: every axis (and none: flattened), dtypes, a condition shorter
than the axis, and a condition computed from an input whose count changes run to run in one
session."""
import numpy as np
import pytest
from onnx import helper

import mace
from helpers import assert_close, run_ort
from ops.dm_util import DTYPES, build, check, data


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_compress(axis, dtype):
    x = data((3, 4, 5), dtype, 1)
    n = x.size if axis is None else x.shape[axis]
    cond = np.random.default_rng(2).random(n) < 0.5
    kw = {} if axis is None else {"axis": axis}
    check([helper.make_node("Compress", ["x", "c"], ["y"], **kw)],
          [("x", dtype, x.shape)], [("y", dtype)], {"x": x}, inits=[("c", cond)], opset=11)


def test_compress_short_condition():
    x = data((6, 2), np.float32, 3)
    check([helper.make_node("Compress", ["x", "c"], ["y"], axis=0)],
          [("x", np.float32, x.shape), ("c", np.bool_, (4,))], [("y", np.float32)],
          {"x": x, "c": np.array([1, 0, 1, 1], np.bool_)}, opset=11)


def test_compress_computed_condition_in_one_session():
    # keep the rows of x whose score passes a threshold given at run time
    nodes = [helper.make_node("Greater", ["score", "t"], ["keep"]),
             helper.make_node("Compress", ["x", "keep"], ["y"], axis=0)]
    model = build(nodes, [("x", np.float32, (8, 3)), ("score", np.float32, (8,)),
                          ("t", np.float32, ())], [("y", np.float32)], opset=11)
    sess = mace.Session(model)
    rng = np.random.default_rng(4)
    rows = set()
    for t in (0.2, 0.5, 0.9, 1.5):
        feeds = {"x": rng.standard_normal((8, 3)).astype(np.float32),
                 "score": rng.random(8).astype(np.float32), "t": np.array(t, np.float32)}
        got = sess.run(feeds)["y"]
        assert_close(got, run_ort(model, feeds)[0], what="y")
        rows.add(got.shape[0])
    assert len(rows) >= 3
