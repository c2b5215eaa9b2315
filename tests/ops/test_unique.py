"""Unique against onnxruntime: flattened and along every axis, sorted and in order of first
occurrence, all four outputs or only the first, dtypes onnxruntime takes (NumPy as the oracle
of the others), and a computed input whose distinct count changes run to run in one session."""
import numpy as np
import pytest
from onnx import helper

import mace
from helpers import assert_close, run_ort
from ops.dm_util import build, check

OUTS = ["y", "indices", "inverse", "counts"]


def values(shape, dtype, seed):
    return np.random.default_rng(seed).integers(0, 3, size=shape).astype(dtype)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("is_sorted", [1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8])
def test_unique(axis, is_sorted, dtype):
    x = values((4, 3), dtype, 7 + (axis or 0))
    x[2] = x[0]  # a repeated row and column at least
    x[:, 2] = x[:, 1]
    kw = {"sorted": is_sorted} if axis is None else {"sorted": is_sorted, "axis": axis}
    check([helper.make_node("Unique", ["x"], OUTS, **kw)], [("x", dtype, x.shape)],
          [(o, dtype if o == "y" else np.int64) for o in OUTS], {"x": x}, opset=11)


def test_unique_first_output_only_3d():
    x = values((2, 3, 2), np.float32, 3)
    check([helper.make_node("Unique", ["x"], ["y"], axis=1)], [("x", np.float32, x.shape)],
          [("y", np.float32)], {"x": x}, opset=11)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_unique_numpy_oracle(dtype):
    # dtypes onnxruntime's Unique lacks: NumPy gives the sorted, flattened answer
    x = values((5, 4), dtype, 9)
    model = build([helper.make_node("Unique", ["x"], OUTS)], [("x", dtype, x.shape)],
                  [(o, dtype if o == "y" else np.int64) for o in OUTS], opset=11)
    got = mace.Session(model).run({"x": x})
    y, idx, inv, cnt = np.unique(x.reshape(-1), return_index=True, return_inverse=True,
                                 return_counts=True)
    for name, ref in zip(OUTS, (y, idx, inv, cnt)):
        assert_close(got[name], ref.astype(got[name].dtype if name != "y" else dtype), what=name)


def test_unique_computed_input_in_one_session():
    nodes = [helper.make_node("Floor", ["x"], ["f"]),
             helper.make_node("Unique", ["f"], ["y", "", "inverse"])]
    model = build(nodes, [("x", np.float32, (12,))],
                  [("y", np.float32), ("inverse", np.int64)], opset=11)
    sess = mace.Session(model)
    sizes = set()
    for scale in (1, 3, 8):
        feeds = {"x": (np.random.default_rng(scale).random(12) * scale).astype(np.float32)}
        got = sess.run(feeds)
        ref = run_ort(model, feeds)
        assert_close(got["y"], ref[0], what="y")
        assert_close(got["inverse"], ref[1], what="inverse")
        sizes.add(len(got["y"]))
    assert len(sizes) == 3
